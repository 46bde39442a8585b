import { createHmac } from 'node:crypto';
import { formatWebhookSignatures, webhookSignedPrefix } from '@rtc/protocol';
import { isPrivateAddress } from '../core/address.ts';

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
export { isPrivateAddress };
