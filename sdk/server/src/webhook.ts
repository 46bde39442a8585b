import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  parseWebhookSignatures, parseWebhookTimestamp, WEBHOOK_HEADERS, WEBHOOK_TOLERANCE_SECONDS, webhookSignedPrefix, type WebhookEvent,
} from '@rtc/protocol';

/** Why a delivery was refused; branch on `code`. */
export type WebhookErrorCode =
  | 'ERR_WEBHOOK_HEADERS' | 'ERR_WEBHOOK_TIMESTAMP' | 'ERR_WEBHOOK_SIGNATURE' | 'ERR_WEBHOOK_PAYLOAD';

/** A delivery that is not a genuine, fresh event of the platform. The message never quotes the input. */
export class WebhookVerificationError extends Error {
  readonly code: WebhookErrorCode;

  constructor(code: WebhookErrorCode, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.code = code;
  }
}

/** Request headers as Node's `req.headers`, a fetch `Headers`, or a plain record. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** How far the timestamp header (`WEBHOOK_HEADERS.timestamp`) may be from now, either way (default 300 s): older deliveries are replays. */
  readonly toleranceSeconds?: number | undefined;
  /** The current time in seconds since the epoch (default the system clock); for tests. */
  readonly nowSeconds?: number | undefined;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : (value as string | undefined);
}

/**
 * Checks a webhook delivery and returns its event: the signature header (`WEBHOOK_HEADERS.signature`
 * of `@rtc/protocol`) must hold a `v1=` HMAC-SHA256 of `<timestamp header>.<raw body>` under `secret` (compared in constant time),
 * and the timestamp must be within `toleranceSeconds` of now. Pass the body exactly as received,
 * before any JSON parsing. `secret` may be a list (both secrets while you roll one out yourself).
 *
 * @example
 * ```ts
 * import { verifyWebhook, WebhookVerificationError } from '@rtc/server-sdk';
 *
 * app.post('/rtc-webhooks', express.raw({ type: 'application/json' }), (req, res) => {
 *   let event;
 *   try {
 *     event = verifyWebhook(req.body, req.headers, process.env.RTC_WEBHOOK_SECRET!);
 *   } catch (err) {
 *     if (err instanceof WebhookVerificationError) return res.sendStatus(400);
 *     throw err;
 *   }
 *   if (alreadyHandled(event.id)) return res.sendStatus(200); // deliveries are at least once
 *   if (event.type === 'credential.revoked') forgetCredential(event.data.app_id);
 *   res.sendStatus(204);
 * });
 * ```
 */
export function verifyWebhook(
  rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[], options: VerifyWebhookOptions = {},
): WebhookEvent {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  // an empty secret (an unset variable, say) would accept events anyone can sign
  if (!Array.isArray(secrets) || secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError('verifyWebhook: the secret must be a non-empty string (or a list of them)');
  }
  const id = header(headers, WEBHOOK_HEADERS.id);
  const timestampText = header(headers, WEBHOOK_HEADERS.timestamp);
  const signatures = header(headers, WEBHOOK_HEADERS.signature);
  if (!id || !timestampText || !signatures) {
    throw new WebhookVerificationError('ERR_WEBHOOK_HEADERS', `${WEBHOOK_HEADERS.id}, ${WEBHOOK_HEADERS.timestamp} and ${WEBHOOK_HEADERS.signature} are required`);
  }
  const timestamp = parseWebhookTimestamp(timestampText);
  if (timestamp === undefined) throw new WebhookVerificationError('ERR_WEBHOOK_TIMESTAMP', 'the timestamp is not a number of seconds');
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError('ERR_WEBHOOK_TIMESTAMP', 'the timestamp is outside the tolerance (a replay, or a clock that is off)');
  }

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const given = parseWebhookSignatures(signatures).map((hex) => Buffer.from(hex, 'hex'));
  let valid = false;
  for (const s of secrets) {
    const expected = createHmac('sha256', s).update(webhookSignedPrefix(timestamp)).update(body).digest();
    for (const g of given) {
      // every pair is compared, so the time taken does not tell which one matched
      if (g.length === expected.length && timingSafeEqual(g, expected)) valid = true;
    }
  }
  if (!valid) throw new WebhookVerificationError('ERR_WEBHOOK_SIGNATURE', 'no signature matches the secret');

  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('ERR_WEBHOOK_PAYLOAD', 'the body is not JSON');
  }
  const e = event as Record<string, unknown> | null;
  if (typeof e !== 'object' || e === null || e['id'] !== id || typeof e['type'] !== 'string' || typeof e['project_id'] !== 'string'
    || typeof e['occurred_at'] !== 'number' || typeof e['data'] !== 'object' || e['data'] === null) {
    throw new WebhookVerificationError('ERR_WEBHOOK_PAYLOAD', 'the body is not a webhook event of this id');
  }
  return event as WebhookEvent;
}
