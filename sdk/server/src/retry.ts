/**
 * When a failed call of the token API is tried again, and after how long. Every field is
 * optional; the defaults are in {@link DEFAULT_RETRY}.
 *
 * - `502`, `503` and `504` answers and network failures (timeouts included) are retried with
 *   exponential backoff and full jitter: the n-th retry waits a uniformly random time between 0
 *   and `min(maxDelayMs, baseDelayMs * 2^(n-1))`.
 * - `429 rate_limited` is retried after its `Retry-After` when that is at most `maxRetryAfterSec`;
 *   a longer `Retry-After` is surfaced at once as a `TokenApiError` carrying `retryAfterSec`.
 *   A `Retry-After` on a 502/503/504 is honoured the same way.
 * - Every other answer (400, 401, 403, 404, 413, 415, 500) is final, and so is `502
 *   turn_unavailable`: the platform has no TURN relay, and asking again changes nothing.
 * - At most `maxAttempts` attempts (the first included) and at most `maxElapsedMs` for the whole
 *   call, waits and attempts included: a wait that would end past the budget is not started, and
 *   each attempt's timeout is cut to what is left of it.
 *
 * @example
 * ```ts
 * // fail fast: one retry, never wait for a rate limit
 * const tokens = new TokenClient({ baseUrl, appId, appSecret, retry: { maxAttempts: 2, maxRetryAfterSec: 0 } });
 * ```
 */
export interface RetryOptions {
  /** Attempts in all, the first included; `1` disables retries. Default 4. */
  readonly maxAttempts?: number;
  /** Upper bound of the first retry's random wait, doubled at each retry. Default 250 ms. */
  readonly baseDelayMs?: number;
  /** Cap of a single backoff wait. Default 4000 ms. */
  readonly maxDelayMs?: number;
  /** Budget of the whole call, attempts and waits included. Default 30000 ms. */
  readonly maxElapsedMs?: number;
  /** Longest `Retry-After` the client waits for; a longer one is surfaced. `0` never waits. Default 10 s. */
  readonly maxRetryAfterSec?: number;
}

/** {@link RetryOptions} with every field resolved. */
export type RetryPolicy = Required<RetryOptions>;

/**
 * The retry policy used when the client's options leave a field out.
 *
 * @example
 * ```ts
 * const tokens = new TokenClient({ baseUrl, appId, appSecret, retry: { ...DEFAULT_RETRY, maxAttempts: 6 } });
 * ```
 */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 4000,
  maxElapsedMs: 30_000,
  maxRetryAfterSec: 10,
});

function checkNumber(name: string, value: number, min: number, integer: boolean): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new TypeError(`retry.${name} must be ${integer ? 'an integer' : 'a number'} of at least ${min}`);
  }
  return value;
}

/** Fills in the defaults and checks every field (a bad value is a TypeError). */
export function resolveRetryPolicy(options: RetryOptions | undefined): RetryPolicy {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new TypeError('retry must be an object');
  }
  const merged = { ...DEFAULT_RETRY, ...stripUndefined(options ?? {}) };
  const policy: RetryPolicy = {
    maxAttempts: checkNumber('maxAttempts', merged.maxAttempts, 1, true),
    baseDelayMs: checkNumber('baseDelayMs', merged.baseDelayMs, 0, false),
    maxDelayMs: checkNumber('maxDelayMs', merged.maxDelayMs, 0, false),
    maxElapsedMs: checkNumber('maxElapsedMs', merged.maxElapsedMs, 1, false),
    maxRetryAfterSec: checkNumber('maxRetryAfterSec', merged.maxRetryAfterSec, 0, false),
  };
  return Object.freeze(policy);
}

function stripUndefined(options: RetryOptions): RetryOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

/** Full-jitter backoff of the `retry`-th retry (1 for the first): uniform in [0, min(cap, base * 2^(retry-1))). */
export function backoffDelayMs(policy: RetryPolicy, retry: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}

// IMF-fixdate, the form RFC 9110 requires senders to use (e.g. "Sun, 06 Nov 1994 08:49:37 GMT").
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** `Retry-After` in whole seconds (delay-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text);
  if (HTTP_DATE.test(text)) {
    const at = Date.parse(text);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - nowMs) / 1000));
  }
  return undefined;
}

/** What went wrong with one attempt, as far as retrying is concerned. */
export type AttemptFailure =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterSec: number | undefined; readonly code?: string | undefined }
  | { readonly kind: 'network' };

/**
 * 502 codes that no retry can change: `turn_unavailable` answers when the platform has no TURN
 * relay configured, and asking again gets the same answer (docs/reference/errors.md).
 */
export const FINAL_CODES: ReadonlySet<string> = new Set(['turn_unavailable']);

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number; readonly basis: 'backoff' | 'retry-after' }
  | { readonly retry: false; readonly why: 'final' | 'retry-after-too-long' | 'attempts' | 'time' };

/** Statuses that say "temporary, try again": the 502 codes of docs/reference/errors.md, and what proxies answer for them. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/**
 * The retry decision after a failed attempt: pure, so the policy is tested without a network.
 * `attempt` is the number of the attempt that failed (1 for the first); `elapsedMs` the time
 * since the call began.
 */
export function decideRetry(
  failure: AttemptFailure,
  attempt: number,
  elapsedMs: number,
  policy: RetryPolicy,
  random: () => number,
): RetryDecision {
  let delayMs: number;
  let basis: 'backoff' | 'retry-after' = 'backoff';
  if (failure.kind === 'network') {
    delayMs = backoffDelayMs(policy, attempt, random);
  } else if (!isRetryableStatus(failure.status) || (failure.code !== undefined && FINAL_CODES.has(failure.code))) {
    return { retry: false, why: 'final' };
  } else if (failure.retryAfterSec !== undefined) {
    // the server said when: never earlier, and never longer than the caller accepts to wait
    if (failure.retryAfterSec > policy.maxRetryAfterSec) return { retry: false, why: 'retry-after-too-long' };
    delayMs = failure.retryAfterSec * 1000;
    basis = 'retry-after';
  } else {
    delayMs = backoffDelayMs(policy, attempt, random);
  }
  if (attempt >= policy.maxAttempts) return { retry: false, why: 'attempts' };
  if (elapsedMs + delayMs > policy.maxElapsedMs) return { retry: false, why: 'time' };
  return { retry: true, delayMs, basis };
}
