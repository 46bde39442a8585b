import { BlockList, isIP } from 'node:net';

/**
 * A set of IPv4/IPv6 CIDR ranges. IPv4-mapped IPv6 addresses match their IPv4 form; a NAT64
 * address (`64:ff9b::/96`) matches its own range and that of the IPv4 address it leads to.
 */
export interface AddressSet {
  has(address: string): boolean;
}

/** Normalises an IPv4-mapped IPv6 address ("::ffff:1.2.3.4", "::ffff:102:304", ...) to "1.2.3.4"; other addresses are returned as they are. */
export function normalizeAddress(address: string): string {
  const words = ipv6Words(address);
  return words && isMapped(words) ? ipv4Of(words) : address;
}

/**
 * The IPv4 address an IPv6 address leads to: the one embedded in an IPv4-mapped address
 * (`::ffff:0:0/96`) or in a NAT64 address of the well-known prefix (`64:ff9b::/96`, RFC 6052),
 * which a gateway translates to it. Undefined for any other address.
 */
export function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  return isMapped(words) || nat64 ? ipv4Of(words) : undefined;
}

/** The eight 16-bit words of an IPv6 address (any spelling, zone index ignored); undefined for anything else. */
function ipv6Words(address: string): number[] | undefined {
  const text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return undefined;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  const hex = dotted
    ? text.slice(0, dotted.index) + [(Number(dotted[1]) << 8) | Number(dotted[2]), (Number(dotted[3]) << 8) | Number(dotted[4])].map((n) => n.toString(16)).join(':')
    : text;
  const [head, tail] = hex.split('::') as [string, string | undefined];
  const parse = (part: string | undefined): number[] => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const first = parse(head);
  const last = parse(tail);
  return tail === undefined ? first : [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
}

function isMapped(words: readonly number[]): boolean {
  return words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff;
}

function ipv4Of(words: readonly number[]): string {
  return [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join('.');
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
 * IPv6 forms that embed an IPv4 address a gateway or tunnel leads to, without the two an address
 * set checks by that IPv4 address (mapped, and NAT64 of the well-known prefix): IPv4-compatible,
 * SIIT, local-use NAT64 and 6to4 (Teredo, 2001::/32, embeds the public address of its server).
 */
export const IPV4_EMBEDDING_RANGES = ['::/96', '::ffff:0:0:0/96', '64:ff9b:1::/48', '2002::/16'] as const;
/** Other special-purpose ranges, the NAT64 well-known prefix and Teredo. */
const OTHER_SPECIAL_RANGES = ['192.0.0.0/24', '198.18.0.0/15', '64:ff9b::/96', '2001::/32'] as const;

let notPublic: AddressSet | undefined;

/** Whether an IP address is loopback, private, link-local or otherwise not on the public internet (anything not an IP address is). */
export function isPrivateAddress(address: string): boolean {
  if (isIP(normalizeAddress(address)) === 0) return true;
  notPublic ??= createAddressSet([...LOOPBACK_RANGES, ...PRIVATE_RANGES, ...NON_UNICAST_RANGES, ...IPV4_EMBEDDING_RANGES, ...OTHER_SPECIAL_RANGES]);
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
      if (list.check(normalized, family === 4 ? 'ipv4' : 'ipv6')) return true;
      const behind = embeddedIpv4(normalized);
      return behind !== undefined && list.check(behind, 'ipv4');
    },
  };
}

/**
 * The client address: the socket peer, unless that peer is a trusted proxy, in which case the
 * right-most `X-Forwarded-For` entry that is not itself a trusted proxy (docs/decisions/tokens.md, "Client address").
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
