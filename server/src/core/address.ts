import { BlockList, isIP } from 'node:net';

/** A set of IPv4/IPv6 CIDR ranges; IPv4-mapped IPv6 addresses match their IPv4 form. */
export interface AddressSet {
  has(address: string): boolean;
}

/** Normalises "::ffff:1.2.3.4" to "1.2.3.4"; other addresses are returned as they are. */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Loopback addresses. */
export const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128'] as const;
/** Private networks (RFC 1918, carrier-grade NAT, IPv6 unique and site local). */
export const PRIVATE_RANGES = ['10.0.0.0/8', '100.64.0.0/10', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7', 'fec0::/10'] as const;
/** Unspecified, link-local, multicast, reserved and broadcast addresses: no peer is ever there. */
export const NON_UNICAST_RANGES = [
  '0.0.0.0/8', '169.254.0.0/16', '224.0.0.0/4', '240.0.0.0/4', '::/128', 'fe80::/10', 'ff00::/8',
] as const;
/**
 * Other special-purpose ranges, and every IPv6 form that embeds an IPv4 address (IPv4-compatible,
 * mapped, SIIT, NAT64, 6to4, Teredo), which could lead to a private IPv4 address behind a gateway.
 */
const OTHER_SPECIAL_RANGES = [
  '192.0.0.0/24', '198.18.0.0/15', '::/96', '::ffff:0:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '2002::/16', '2001::/32',
] as const;

let notPublic: AddressSet | undefined;

/** Whether an IP address is loopback, private, link-local or otherwise not on the public internet (anything not an IP address is). */
export function isPrivateAddress(address: string): boolean {
  if (isIP(normalizeAddress(address)) === 0) return true;
  notPublic ??= createAddressSet([...LOOPBACK_RANGES, ...PRIVATE_RANGES, ...NON_UNICAST_RANGES, ...OTHER_SPECIAL_RANGES]);
  return notPublic.has(address);
}

/** Parses "a.b.c.d/n", "x::/n" or a bare address; undefined when invalid. */
export function parseCidr(text: string): { address: string; prefix: number; family: 4 | 6 } | undefined {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const family = isIP(address);
  if (family !== 4 && family !== 6) return undefined;
  const max = family === 4 ? 32 : 128;
  if (slash === -1) return { address, prefix: max, family };
  const prefixText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  return prefix <= max ? { address, prefix, family } : undefined;
}

/** Builds an AddressSet from CIDR strings that were validated with `parseCidr`. */
export function createAddressSet(cidrs: readonly string[]): AddressSet {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (!parsed) throw new TypeError(`createAddressSet: invalid CIDR ${JSON.stringify(cidr)}`);
    list.addSubnet(parsed.address, parsed.prefix, parsed.family === 4 ? 'ipv4' : 'ipv6');
  }
  return {
    has(address: string): boolean {
      const normalized = normalizeAddress(address);
      const family = isIP(normalized);
      if (family === 0) return false;
      return list.check(normalized, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * The client address: the socket peer, unless that peer is a trusted proxy, in which case the
 * right-most `X-Forwarded-For` entry that is not itself a trusted proxy (docs/decisions.md, "Client address").
 */
export function resolveClientAddress(peer: string, forwardedFor: string | undefined, trusted: AddressSet | undefined): string {
  const direct = normalizeAddress(peer);
  if (!trusted || forwardedFor === undefined || !trusted.has(direct)) return direct;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeAddress(hops[i]!.trim());
    if (isIP(hop) === 0) return direct;
    if (!trusted.has(hop)) return hop;
  }
  return direct;
}
