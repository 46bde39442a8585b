/**
 * The WebRTC part of the configuration (docs/operations/configuration.md, "WebRTC" and "Peer
 * addresses"), read by `loadConfig` from the environment it was given.
 */
import { isIP } from 'node:net';
import { IPV4_EMBEDDING_RANGES, LOOPBACK_RANGES, NON_UNICAST_RANGES, PRIVATE_RANGES, createAddressSet, isPrivateAddress, parseCidr } from './core/address.ts';
import type { KnownEnv, ReadInt, ServeVariable } from './config.ts';

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
  /**
   * CIDRs a client's ICE candidates may not name (the node sends them no STUN), defaults included,
   * and those allowed all the same (docs/operations/configuration.md, "Peer addresses").
   */
  readonly peers: { readonly denied: readonly string[]; readonly allowed: readonly string[] };
  /** CIDRs of the platform's TURN relay addresses: a session whose ICE pair ends there is relayed (docs/console.md, "Usage kind of a session"). */
  readonly turnRelays: readonly string[];
}

/**
 * `RTC_MEDIA_WEBRTC`, `RTC_MEDIA_UDP_PORT_MIN`/`MAX`, `RTC_MEDIA_ICE_ADDRESSES`, `RTC_MEDIA_ICE_IPV6`, `RTC_MEDIA_PUBLIC_IP`,
 * `RTC_MEDIA_DENIED_PEER_IPS`/`ALLOWED_PEER_IPS`, `RTC_TURN_RELAY_IPS`.
 */
export function rtcOptions(
  env: KnownEnv, host: string, turnUris: readonly string[], int: ReadInt, problems: string[],
): RtcOptions | undefined {
  const flag = (name: ServeVariable, fallback: boolean): boolean => {
    const raw = env[name] || String(fallback);
    if (raw !== 'true' && raw !== 'false') problems.push(`${name} must be true or false`);
    return raw === 'true';
  };
  const enabled = flag('RTC_MEDIA_WEBRTC', true);
  const ipv6 = flag('RTC_MEDIA_ICE_IPV6', false);
  const min = env['RTC_MEDIA_UDP_PORT_MIN'] ? int('RTC_MEDIA_UDP_PORT_MIN', 0, 1, 65535) : undefined;
  const max = env['RTC_MEDIA_UDP_PORT_MAX'] ? int('RTC_MEDIA_UDP_PORT_MAX', 0, 1, 65535) : undefined;
  let portRange: readonly [number, number] | undefined;
  if ((min === undefined) !== (max === undefined)) problems.push('RTC_MEDIA_UDP_PORT_MIN and RTC_MEDIA_UDP_PORT_MAX must be set together');
  else if (min !== undefined && max !== undefined) {
    if (max <= min) problems.push('RTC_MEDIA_UDP_PORT_MAX must be greater than RTC_MEDIA_UDP_PORT_MIN');
    portRange = [min, max];
  }
  const addresses = (env['RTC_MEDIA_ICE_ADDRESSES'] ?? '').split(',').map((a) => a.trim()).filter(Boolean);
  for (const address of addresses) {
    if (isIP(address) === 0) problems.push(`RTC_MEDIA_ICE_ADDRESSES: ${JSON.stringify(address)} is not an IP address`);
  }
  // each peer connection binds one UDP socket per address family (docs/operations/configuration.md, "WebRTC")
  if (addresses.filter((a) => isIP(a) === 4).length > 1 || addresses.filter((a) => isIP(a) === 6).length > 1) {
    problems.push('RTC_MEDIA_ICE_ADDRESSES takes at most one IPv4 and one IPv6 address');
  }
  const publicIp = env['RTC_MEDIA_PUBLIC_IP'] || undefined;
  if (publicIp !== undefined && isIP(publicIp) === 0) problems.push('RTC_MEDIA_PUBLIC_IP must be an IP address');
  const cidrs = (name: ServeVariable): string[] => {
    const list = (env[name] ?? '').split(',').map((c) => c.trim()).filter(Boolean);
    for (const cidr of list) if (!parseCidr(cidr)) problems.push(`${name}: ${JSON.stringify(cidr)} is not an IPv4 or IPv6 CIDR`);
    return list;
  };
  const denied = cidrs('RTC_MEDIA_DENIED_PEER_IPS');
  const allowed = cidrs('RTC_MEDIA_ALLOWED_PEER_IPS');
  const relays = cidrs('RTC_TURN_RELAY_IPS');
  if (!enabled) return undefined;
  const loopbackHost = host === 'localhost' || host === '::1' || host.startsWith('127.');
  const includeLoopback = loopbackHost || host === '0.0.0.0' || host === '::';
  return {
    portRange, addresses, includeLoopback, ipv6, publicIp,
    peers: { denied: [...defaultDeniedPeers(loopbackHost, addresses, publicIp), ...denied], allowed },
    turnRelays: relays.length > 0 ? relays : turnUris.map(turnHost).filter((h) => isIP(h) !== 0),
  };
}

/**
 * What a media node sends no STUN to by default (docs/operations/configuration.md, "Peer addresses"):
 * never an unspecified, link-local, multicast or reserved address; loopback unless the node itself
 * is on loopback; and, when it announces a public address, neither loopback nor private networks,
 * nor the IPv6 forms that tunnel or translate to an IPv4 address (mapped and NAT64 addresses are
 * checked by the IPv4 address they lead to, core/address.ts).
 */
function defaultDeniedPeers(loopbackHost: boolean, addresses: readonly string[], publicIp: string | undefined): string[] {
  const announced = publicIp !== undefined ? [publicIp, ...addresses] : addresses;
  const loopback = createAddressSet(LOOPBACK_RANGES);
  const denied: string[] = [...NON_UNICAST_RANGES];
  if (announced.some((a) => isIP(a) !== 0 && !isPrivateAddress(a))) denied.push(...LOOPBACK_RANGES, ...PRIVATE_RANGES, ...IPV4_EMBEDDING_RANGES);
  else if (!loopbackHost && !addresses.some((a) => loopback.has(a))) denied.push(...LOOPBACK_RANGES);
  return denied;
}

/** The host of a `turn:`/`turns:` URI, without the brackets of an IPv6 address. */
function turnHost(uri: string): string {
  const match = /^turns?:(\[[^\]]+\]|[^:?]+)/.exec(uri);
  return match ? match[1]!.replace(/^\[|\]$/g, '') : '';
}
