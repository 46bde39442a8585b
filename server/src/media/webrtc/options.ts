import { useOPUS, useVP8, type PeerConfig } from 'werift';
import type { RtcOptions } from '../../config.ts';

export type { RtcOptions };

/**
 * The peer configuration of every server-side peer connection: Opus and VP8 only (the encrypted
 * frame layout is defined for them), NACK and PLI feedback, no RTX, so that forwarded packets keep
 * their meaning; no STUN server (the server's own addresses are the candidates).
 */
export function peerConfig(options: RtcOptions): Partial<PeerConfig> {
  const only = options.addresses.length > 0;
  const loopback = options.includeLoopback ? ['127.0.0.1'] : [];
  return {
    codecs: { audio: [useOPUS()], video: [useVP8()] },
    iceServers: [],
    icePortRange: options.portRange ? [options.portRange[0], options.portRange[1]] : undefined,
    iceAdditionalHostAddresses: only ? [...options.addresses] : loopback,
    iceUseIpv4: !only,
    iceUseIpv6: !only && options.ipv6,
    bundlePolicy: 'max-bundle',
  };
}
