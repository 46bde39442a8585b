import { createHmac } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { formatWebhookSignatures, webhookSignedPrefix } from '@rtc/protocol';
import { normalizeAddress } from '../core/address.ts';

/** Hex HMAC-SHA256 of `<timestamp>.<body>` under `secret`. */
export function signWebhook(secret: string, timestampSec: number, body: string): string {
  return createHmac('sha256', secret).update(webhookSignedPrefix(timestampSec)).update(body).digest('hex');
}

/** `v1=<hex>` for each secret, space-separated: the current secret first, then one in its grace period. */
export function signatureHeader(secrets: readonly string[], timestampSec: number, body: string): string {
  return formatWebhookSignatures(secrets.map((s) => signWebhook(s, timestampSec, body)));
}

/** When to retry, and when to give up (docs/reference/webhooks.md, "Retries"). */
export interface RetryPolicy {
  /** The first retry waits about this long; each next one twice as long. */
  readonly baseMs: number;
  /** No wait is longer. */
  readonly maxDelayMs: number;
  /** A delivery still failing this long after its event was recorded is marked failed. */
  readonly giveUpAfterMs: number;
}

/**
 * When the next attempt is due after `attempts` failed ones (1 after the first), or null to give
 * up. `random` in [0, 1) spreads retries over ±20 % so that many failed deliveries do not return together.
 */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, createdAtMs: number, nowMs: number, random: number): number | null {
  const exp = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(attempts - 1, 40));
  const delay = Math.max(1, Math.round(exp * (0.8 + 0.4 * random)));
  const at = nowMs + delay;
  return at - createdAtMs > policy.giveUpAfterMs ? null : at;
}

const MAX_URL_LENGTH = 2048;

/** Why an endpoint URL is refused, or undefined: only https, no credentials, no fragment. */
export function webhookUrlProblem(raw: string): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute https:// URL';
  }
  if (url.protocol !== 'https:') return 'url must be an https:// URL';
  if (url.username || url.password) return 'url must not carry a user name or password';
  if (url.hash) return 'url must not carry a fragment';
  return undefined;
}

// loopback, private, link-local, carrier-grade NAT, unspecified, multicast and reserved ranges:
// targets inside the platform's own network (docs/reference/webhooks.md, "Endpoint addresses")
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
// besides local ranges, every form that embeds an IPv4 address (IPv4-compatible, SIIT, NAT64, 6to4,
// Teredo) could lead to a private IPv4 address behind a gateway
for (const [net, prefix] of [
  ['::', 96], ['::ffff:0:0:0', 96], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['64:ff9b::', 96],
  ['64:ff9b:1::', 48], ['2002::', 16], ['2001::', 32],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

/** Whether an IP address is loopback, private, link-local or otherwise not on the public internet. */
export function isPrivateAddress(address: string): boolean {
  const a = normalizeAddress(address);
  const family = isIP(a);
  if (family === 0) return true;
  return PRIVATE.check(a, family === 4 ? 'ipv4' : 'ipv6');
}
