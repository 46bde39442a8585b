import { isErrorCode } from '@rtc/protocol';
import type { ClientSettings } from './client-options.ts';
import type { TokenClientEvent } from './client-events.ts';
import { TokenApiError, TokenNetworkError, TokenResponseError, type TokenOperation } from './errors.ts';
import { decideRetry, parseRetryAfter, type AttemptFailure } from './retry.ts';
import { isObject } from './rooms.ts';

/** SDK version, sent in the `User-Agent` header. */
const SDK_VERSION = '0.1.0';

/**
 * Per-call options of `issue` and `revoke`.
 *
 * @example
 * ```ts
 * const t = await tokens.issue(request, { signal: AbortSignal.timeout(5000) });
 * ```
 */
export interface CallOptions {
  /** Abandons the call (no further attempts or waits); the promise rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** One call of the token API: what to send, and how to read a 2xx body (`undefined`: off the contract). */
interface ApiRequest<T> {
  readonly operation: TokenOperation;
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly path: string;
  readonly body: string | undefined;
  readonly read: (json: unknown) => T | undefined;
}

type AttemptResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: AttemptFailure; readonly error: Error };

type FetchResponseHeaders = { get(name: string): string | null };

/**
 * Calls of the token API over HTTP with the credential: an attempt with its own timeout, retries
 * by the retry policy within the call's time budget, answers turned into values or typed errors,
 * and each step reported to the logger.
 */
export class ApiCaller {
  readonly #settings: ClientSettings;

  constructor(settings: ClientSettings) {
    this.#settings = settings;
  }

  /** Makes the call, retrying by the policy; resolves with what `read` made of the body. */
  async call<T>(
    operation: TokenOperation,
    method: ApiRequest<T>['method'],
    path: string,
    body: string | undefined,
    read: (json: unknown) => T | undefined,
    options: CallOptions,
  ): Promise<T> {
    const request: ApiRequest<T> = { operation, method, path, body, read };
    const { clock, retry, random, sleep } = this.#settings;
    const signal = options.signal;
    signal?.throwIfAborted();
    const started = clock.nowMs();
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.#attempt(request, attempt, started, signal);
      if (result.ok) return result.value;
      const decision = decideRetry(result.failure, attempt, clock.nowMs() - started, retry, random);
      if (!decision.retry) throw result.error;
      this.#emit({ type: 'retry', operation, attempt: attempt + 1, delayMs: decision.delayMs, basis: decision.basis });
      await sleep(decision.delayMs, signal);
      signal?.throwIfAborted();
    }
  }

  async #attempt<T>(request: ApiRequest<T>, attempt: number, started: number, signal: AbortSignal | undefined): Promise<AttemptResult<T>> {
    const { baseUrl, clock } = this.#settings;
    const { operation, method, path, body, read } = request;
    const url = `${baseUrl}${path}`;
    const left = this.#settings.retry.maxElapsedMs - (clock.nowMs() - started);
    const timeoutMs = Math.max(1, Math.min(this.#settings.timeoutMs, left));
    const timeout = AbortSignal.timeout(timeoutMs);
    const attemptSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const sent = clock.nowMs();
    this.#emit({ type: 'request', operation, attempt, url });

    let status: number;
    let headers: FetchResponseHeaders;
    let text: string;
    try {
      const response = await this.#settings.fetch(url, {
        method,
        headers: {
          authorization: this.#settings.authorization,
          ...(body !== undefined && { 'content-type': 'application/json' }),
          accept: 'application/json',
          'user-agent': `rtc-server-sdk/${SDK_VERSION}`,
        },
        ...(body !== undefined && { body }),
        signal: attemptSignal,
        redirect: 'manual',
      });
      status = response.status;
      headers = response.headers;
      text = await response.text();
    } catch (cause) {
      // the caller gave up: no retry, and the caller's own reason
      if (signal?.aborted) throw signal.reason;
      const reason = timeout.aborted ? 'timeout' : 'network';
      const origin = new URL(baseUrl).origin;
      const message = reason === 'timeout'
        ? `no answer from the token API at ${origin} within ${timeoutMs} ms`
        : `could not reach the token API at ${origin}${describeNetworkCause(cause)}`;
      this.#emit({ type: 'network_error', operation, attempt, reason, durationMs: clock.nowMs() - sent });
      return { ok: false, failure: { kind: 'network' }, error: new TokenNetworkError(reason, message, { operation, attempts: attempt, cause }) };
    }

    const retryAfterSec = parseRetryAfter(headers.get('retry-after'), clock.nowMs());
    const requestId = headers.get('x-request-id') ?? undefined;
    const json = parseJson(text);
    const details = { operation, attempts: attempt, retryAfterSec, requestId };
    const errorBody = status >= 400 ? readErrorBody(json) : undefined;
    this.#emit({
      type: 'response', operation, attempt, status, code: errorBody?.error, retryAfterSec, requestId,
      durationMs: clock.nowMs() - sent,
    });

    if (status >= 200 && status < 300) {
      const value = read(json);
      if (value !== undefined) return { ok: true, value };
      const error = new TokenResponseError(status, `the body is not a ${operation === 'issue' ? 'token response' : 'JSON object'}`, details);
      return { ok: false, failure: { kind: 'status', status, retryAfterSec }, error };
    }
    let error: Error;
    if (errorBody) {
      error = new TokenApiError(errorBody.error, status, errorBody.message, details);
    } else {
      const problem = status >= 300 && status < 400
        ? 'a redirect (redirects are not followed: the request carries the App Secret)'
        : 'the body is not an error object of the token API';
      error = new TokenResponseError(status, problem, details);
    }
    return { ok: false, failure: { kind: 'status', status, retryAfterSec, code: errorBody?.error }, error };
  }

  #emit(event: TokenClientEvent): void {
    const logger = this.#settings.logger;
    if (!logger) return;
    try {
      logger(event);
    } catch {
      // a failing logger must not fail the call
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function readErrorBody(json: unknown): { error: TokenApiError['code']; message: string } | undefined {
  if (!isObject(json) || !isErrorCode(json['error'])) return undefined;
  return { error: json['error'], message: typeof json['message'] === 'string' ? json['message'] : '' };
}

/** ` (ECONNREFUSED)` from a fetch failure's cause chain, when it names a system error code. */
function describeNetworkCause(cause: unknown): string {
  let err = cause;
  for (let depth = 0; depth < 5 && isObject(err); depth += 1) {
    const code = err['code'];
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return ` (${code})`;
    err = err['cause'];
  }
  return '';
}
