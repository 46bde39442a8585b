/**
 * The relay link between media nodes (docs/protocol/relay.md): what the media path uses, by name.
 */
import type { RelayOptions } from '../../config-relay.ts';
import { keyRingRelayCredentials, staticRelayCredentials, type RelayCredentials, type RelayKeySource } from './relay-credentials.ts';

export { RelayChannel, KEEPALIVE_MS, type RelayHandlers } from './relay-channel.ts';
export { keyRingRelayCredentials, staticRelayCredentials, deriveRelaySecret, STATIC_RELAY_KID, type RelayCredentials, type RelayKeySource, type RelaySecret } from './relay-credentials.ts';
export { MAX_DATAGRAM_PAYLOAD, type DropReason } from './relay-datagram.ts';
export { RelayEndpoint, realTimer, type RelayEndpointOptions, type RelayEndpointStats, type SetTimer } from './relay-endpoint.ts';
export { RelayLink, reconnectDelay, RECONNECT_INITIAL_MS, RECONNECT_MAX_MS, type RelayDownReason, type RelayLinkOptions } from './relay-link.ts';
export { RELAY_PATH, RelayClose, type RelayStreamRef } from './relay-messages.ts';
export { RelayServer, HANDSHAKE_TIMEOUT_MS, type RelayServerOptions } from './relay-server.ts';

/**
 * A node's relay credentials from its configuration (docs/operations/configuration.md, "Relay
 * between media nodes"): the operator's `RTC_MEDIA_RELAY_SECRET` when set, else derived from the
 * key ring the node already shares with every other.
 */
export function relayCredentialsOf(options: RelayOptions, keys: RelayKeySource): RelayCredentials {
  return options.secret !== undefined ? staticRelayCredentials(options.secret) : keyRingRelayCredentials(keys);
}
