import { useOPUS, useVP8, type PeerConfig } from 'werift';

/** How the media role's WebRTC endpoint gathers its candidates (docs/operations/configuration.md, "WebRTC"). */
export interface RtcOptions {
  /** UDP ports for ICE, both included; undefined: ports the system chooses. */
  readonly portRange: readonly [number, number] | undefined;
  /**
   * Addresses to gather host candidates on. Empty: every IPv4 interface (and IPv6 ones with
   * `ipv6`), plus the loopback address when the media role is bound to loopback.
   */
  readonly addresses: readonly string[];
  readonly includeLoopback: boolean;
  readonly ipv6: boolean;
  /** Announced instead of the host candidates' addresses (a 1:1 NAT). */
  readonly publicIp: string | undefined;
}

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
