import { z } from 'zod';
import { MEDIA_PATH } from '@rtc/protocol';
import { HANDSHAKE_TIMEOUT_MS } from './limits.ts';
import { responseComponent, type Operation } from '../../http/registry.ts';

/**
 * The media role's one HTTP endpoint: the opening handshake of its WebSocket (RFC 6455). What
 * follows the upgrade is no HTTP and is specified in docs/protocol/media.md, not here.
 */

/** The answer to a plain HTTP request on the media path (media/node/role.ts). */
export const upgradeRequiredSchema = responseComponent(z.strictObject({
  error: z.literal('upgrade_required'),
  message: z.string(),
}), 'UpgradeRequired');

export const MEDIA_OPERATIONS: readonly Operation[] = [
  {
    id: 'openMediaConnection', method: 'GET', path: MEDIA_PATH, hosts: ['media'], tag: 'Media',
    summary: 'Open the media connection (WebSocket upgrade)',
    description: 'A WebSocket opening handshake (RFC 6455: Upgrade: websocket, Connection: Upgrade, Sec-WebSocket-Key, '
      + 'Sec-WebSocket-Version: 13; no subprotocol, no compression). Authentication happens inside the connection, not in HTTP: '
      + 'the server sends a challenge and the client answers within '
      + `${HANDSHAKE_TIMEOUT_MS / 1000} seconds with media.grant and a proof of the media key. Messages, frames, control `
      + 'messages and close codes are specified in docs/protocol/media.md; OpenAPI describes only the upgrade. A malformed '
      + 'opening handshake is refused by the WebSocket layer with a plain 400; any other path of the media host is 404.',
    auth: 'none',
    responses: {
      101: {
        description: 'Switching Protocols: the WebSocket is open and the server sends its challenge',
        headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Accept': 'the RFC 6455 answer to Sec-WebSocket-Key' },
      },
      426: {
        description: 'Upgrade Required: a plain HTTP request on the media path',
        schema: upgradeRequiredSchema,
        headers: { Upgrade: 'websocket' },
      },
    },
    errors: [],
  },
];
