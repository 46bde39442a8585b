import { BlockList, isIP } from 'node:net';

/** A set of IPv4/IPv6 CIDR ranges; IPv4-mapped IPv6 addresses match their IPv4 form. */
export interface AddressSet {
  has(address: string): boolean;
}

/** Normalises "::ffff:1.2.3.4" to "1.2.3.4"; other addresses are returned as they are. */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
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
