import { isErrorCode, isId, type RevocationRequest, type TokenRequest, type TokenResponse } from '@rtc/protocol';
import { TokenApiError, TokenNetworkError, TokenResponseError, type TokenOperation } from './errors.ts';
import { decideRetry, parseRetryAfter, resolveRetryPolicy, type AttemptFailure, type RetryOptions, type RetryPolicy } from './retry.ts';
import { isObject, isParticipant, isRoom, type ParticipantPermissions, type RtcParticipant, type RtcRoom } from './rooms.ts';
import { assertServerRuntime } from './runtime.ts';
import { systemClock, systemSleep, type ClockLike, type FetchLike, type SleepLike } from './transport.ts';

/** SDK version, sent in the `User-Agent` header. */
const SDK_VERSION = '0.1.0';
const DEFAULT_TIMEOUT_MS = 10_000;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const MAX_SECRET_LENGTH = 1024;

/**
 * What the client reports to an optional logger. No event ever carries the App Secret, the
 * `Authorization` header, a request or response body, or a media key.
 *
 * @example
 * ```ts
 * const logger = (e: TokenClientEvent) => {
 *   if (e.type === 'retry') console.warn(`token API: retry ${e.attempt} in ${e.delayMs} ms`);
 * };
 * ```
 */
export type TokenClientEvent =
  | { readonly type: 'request'; readonly operation: TokenOperation; readonly attempt: number; readonly url: string }
  | {
      readonly type: 'response';
      readonly operation: TokenOperation;
      readonly attempt: number;
      readonly status: number;
      /** The error code of an error answer. */
      readonly code: string | undefined;
      readonly retryAfterSec: number | undefined;
      readonly requestId: string | undefined;
      readonly durationMs: number;
    }
  | {
      readonly type: 'network_error';
      readonly operation: TokenOperation;
      readonly attempt: number;
      readonly reason: 'network' | 'timeout';
      readonly durationMs: number;
    }
  | {
      readonly type: 'retry';
      readonly operation: TokenOperation;
      /** Number of the attempt about to be made after the wait. */
      readonly attempt: number;
      readonly delayMs: number;
      /** `retry-after`: the wait is the server's `Retry-After`; `backoff`: exponential backoff with full jitter. */
      readonly basis: 'backoff' | 'retry-after';
    };

/**
 * Receives the client's events. Exceptions it throws are swallowed: logging never breaks a call.
 *
 * @example
 * ```ts
 * const tokens = new TokenClient({ baseUrl, appId, appSecret, logger: (e) => pinoLogger.debug(e, 'token api') });
 * ```
 */
export type TokenClientLogger = (event: TokenClientEvent) => void;

/**
 * Options of {@link TokenClient}. Nothing is read from the environment: pass the App Secret from
 * your secret store.
 *
 * @example
 * ```ts
 * const options: TokenClientOptions = {
 *   baseUrl: 'https://token.rtc.example.com',
 *   appId: process.env.RTC_APP_ID!,
 *   appSecret: await secrets.get('rtc-app-secret'),
 *   timeoutMs: 5000,
 *   retry: { maxAttempts: 3 },
 * };
 * ```
 */
export interface TokenClientOptions {
  /** Token API host (`{base_url}` or `{token_url}`), e.g. `https://token.rtc.example.com`. */
  readonly baseUrl: string;
  /** App ID of the credential (`app_…`). */
  readonly appId: string;
  /** App Secret of the same credential (`sk_…`). Kept in a private field, never logged or serialised. */
  readonly appSecret: string;
  /** Timeout of each attempt, in milliseconds. Default 10000. */
  readonly timeoutMs?: number;
  /** Retry policy; see {@link RetryOptions} for the defaults. */
  readonly retry?: RetryOptions;
  /** Optional event hook; nothing is logged without it. */
  readonly logger?: TokenClientLogger;
  /** `fetch` implementation. Default: the global `fetch`. */
  readonly fetch?: FetchLike;
  /** Clock of the call's time budget. Default: `Date.now()`. */
  readonly clock?: ClockLike;
  /** Wait between attempts. Default: a timer. */
  readonly sleep?: SleepLike;
  /** Source of the backoff jitter, uniform in [0, 1). Default: `Math.random`. */
  readonly random?: () => number;
  /**
   * Allow `http://` to a host other than loopback. Off by default: HTTP Basic over plain HTTP
   * would send the App Secret in clear text. Turn it on only behind a TLS-terminating proxy on
   * the same host or private network.
   */
  readonly allowInsecureHttp?: boolean;
}

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

type AttemptResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: AttemptFailure; readonly error: Error };

/**
 * Client of the token API for the customer's server: trades the App ID and App Secret for
 * short-lived media credentials (`issue`) and cuts a user off early (`revoke`).
 *
 * - Refuses to be constructed in a browser (`TypeError`): the App Secret must never reach a client.
 * - Errors are typed: {@link TokenApiError} (a catalogue code from the platform),
 *   {@link TokenNetworkError} (no answer), {@link TokenResponseError} (an answer off the contract);
 *   misuse of the SDK itself is a `TypeError`.
 * - Retries 502/503/504 and network failures with exponential backoff and full jitter, and waits
 *   for a short `Retry-After` on 429; see {@link RetryOptions}.
 * - `JSON.stringify(client)` and `util.inspect(client)` show the base URL and the App ID only.
 *
 * @example
 * ```ts
 * import { TokenClient } from '@rtc/server-sdk';
 *
 * const tokens = new TokenClient({ baseUrl: 'https://token.rtc.example.com', appId, appSecret });
 * const t = await tokens.issue({ room_id: 'r_81', user_id: 'u_7', role: 'speaker', publish_streams: [1] });
 * // hand t.media (grant, key, sfu_host, sfu_port) to the app over HTTPS; keep t.media.revocation_handle
 * await tokens.revoke(t.media.revocation_handle);
 * ```
 */
export class TokenClient {
  readonly #baseUrl: string;
  readonly #appId: string;
  readonly #authorization: string;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #logger: TokenClientLogger | undefined;
  readonly #fetch: FetchLike;
  readonly #clock: ClockLike;
  readonly #sleep: SleepLike;
  readonly #random: () => number;

  constructor(options: TokenClientOptions) {
    assertServerRuntime();
    if (typeof options !== 'object' || options === null) throw new TypeError('TokenClient needs an options object');
    this.#baseUrl = parseBaseUrl(options.baseUrl, options.allowInsecureHttp === true);
    if (typeof options.appId !== 'string' || !isId('app', options.appId)) {
      throw new TypeError('appId must be the App ID of a credential (app_ followed by 22 characters)');
    }
    // the message never echoes the value: it may be a secret passed in the wrong place
    if (typeof options.appSecret !== 'string' || options.appSecret.length > MAX_SECRET_LENGTH || !PRINTABLE_ASCII.test(options.appSecret)) {
      throw new TypeError('appSecret must be the App Secret of the credential (printable ASCII, no spaces)');
    }
    this.#appId = options.appId;
    this.#authorization = `Basic ${btoa(`${options.appId}:${options.appSecret}`)}`;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (typeof this.#timeoutMs !== 'number' || !Number.isFinite(this.#timeoutMs) || this.#timeoutMs < 1) {
      throw new TypeError('timeoutMs must be a number of at least 1');
    }
    this.#retry = resolveRetryPolicy(options.retry);
    this.#logger = checkFunction('logger', options.logger);
    const fetchImpl = checkFunction('fetch', options.fetch) ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('no global fetch: pass options.fetch');
    // called as a plain function: some runtimes refuse a fetch invoked with another `this`
    this.#fetch = (url, init) => fetchImpl(url, init);
    this.#clock = options.clock ?? systemClock;
    if (typeof this.#clock.nowMs !== 'function') throw new TypeError('clock must have a nowMs() method');
    this.#sleep = checkFunction('sleep', options.sleep) ?? systemSleep;
    this.#random = checkFunction('random', options.random) ?? Math.random;
  }

  /** Token API host this client talks to. */
  get baseUrl(): string {
    return this.#baseUrl;
  }

  /** App ID of the credential (not a secret). */
  get appId(): string {
    return this.#appId;
  }

  /**
   * Issues media credentials for one user in one room (`POST /v1/rtc/tokens`). The platform
   * validates the request; its answers arrive as {@link TokenApiError} (`invalid_request`,
   * `scope_denied`, `turn_unavailable`, ...).
   *
   * Issue one token per user and room and let the app SDK renew it; do not issue in a loop.
   * An attempt that timed out may have issued a token that is never delivered: it expires unused.
   *
   * @example
   * ```ts
   * const t = await tokens.issue({ room_id: 'r_81', user_id: 'u_7', role: 'audience', subscribe_room: true, ttl_seconds: 900 });
   * console.log(t.expires_at, t.media.sfu_host);
   * ```
   */
  async issue(request: TokenRequest, options: CallOptions = {}): Promise<TokenResponse> {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      throw new TypeError('issue() needs a token request object');
    }
    return this.#call('issue', 'POST', '/v1/rtc/tokens', JSON.stringify(request), readTokenResponse, options);
  }

  /**
   * Revokes the token behind a revocation handle (`POST /v1/rtc/tokens/revoke`): the media
   * server cuts that user's session within about a second, and the grant is refused from then on.
   * Idempotent, so it is retried like `issue`. A handle of another project, or an altered one,
   * is a {@link TokenApiError} with code `unknown_handle`. Stop issuing new tokens to the user too.
   *
   * @example
   * ```ts
   * await tokens.revoke(t.media.revocation_handle);
   * ```
   */
  async revoke(handle: string, options: CallOptions = {}): Promise<void> {
    if (typeof handle !== 'string' || handle.length === 0) {
      throw new TypeError('revoke() needs the revocation_handle string of a token response');
    }
    const body: RevocationRequest = { revocation_handle: handle };
    await this.#call('revoke', 'POST', '/v1/rtc/tokens/revoke', JSON.stringify(body), () => true, options);
  }

  /**
   * The live rooms of the credential's project, oldest first (`GET /v1/rtc/rooms`,
   * docs/reference/room-api.md): rooms with at least one participant joined on a media node.
   *
   * @example
   * ```ts
   * for (const room of await tokens.listRooms()) console.log(room.room_id, room.participants.length);
   * ```
   */
  async listRooms(options: CallOptions = {}): Promise<RtcRoom[]> {
    const read = (json: unknown): RtcRoom[] | undefined =>
      (isObject(json) && Array.isArray(json['rooms']) && json['rooms'].every(isRoom) ? json['rooms'] : undefined);
    return this.#call('listRooms', 'GET', '/v1/rtc/rooms', undefined, read, options);
  }

  /**
   * One live room and its participants (`GET /v1/rtc/rooms/{room_id}`); a room without a
   * participant is a {@link TokenApiError} with code `not_found`.
   */
  async getRoom(roomId: string, options: CallOptions = {}): Promise<RtcRoom> {
    return this.#call('getRoom', 'GET', `/v1/rtc/rooms/${pathId('roomId', roomId)}`, undefined,
      (json) => (isRoom(json) ? json : undefined), options);
  }

  /**
   * Removes a participant (`POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/remove`):
   * its session closes within about a second (close code 4003) and the grants it used are refused
   * from then on; the user comes back only with a new token. `not_found` when it is not live.
   *
   * @example
   * ```ts
   * const room = await tokens.getRoom('r_81');
   * const troll = room.participants.find((p) => p.user_id === 'u_13');
   * if (troll) await tokens.removeParticipant('r_81', troll.participant_id);
   * ```
   */
  async removeParticipant(roomId: string, participantId: string, options: CallOptions = {}): Promise<void> {
    await this.#call('removeParticipant', 'POST',
      `/v1/rtc/rooms/${pathId('roomId', roomId)}/participants/${pathId('participantId', participantId)}/remove`, undefined, () => true, options);
  }

  /**
   * Ends a room (`POST /v1/rtc/rooms/{room_id}/end`): every participant is removed like
   * {@link TokenClient.removeParticipant}. Resolves with how many participants were closed.
   */
  async endRoom(roomId: string, options: CallOptions = {}): Promise<{ participants: number }> {
    const read = (json: unknown): { participants: number } | undefined =>
      (isObject(json) && typeof json['participants'] === 'number' ? { participants: json['participants'] } : undefined);
    return this.#call('endRoom', 'POST', `/v1/rtc/rooms/${pathId('roomId', roomId)}/end`, undefined, read, options);
  }

  /**
   * Changes what a live participant may publish and receive, at once and without a reconnection
   * (`PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}`). Granting needs the
   * credential's scopes (`scope_denied`); the audience role never publishes (`invalid_request`).
   *
   * @example
   * ```ts
   * await tokens.updateParticipant('r_81', p.participant_id, { publish_streams: [] }); // mute
   * ```
   */
  async updateParticipant(
    roomId: string, participantId: string, permissions: ParticipantPermissions, options: CallOptions = {},
  ): Promise<RtcParticipant> {
    if (typeof permissions !== 'object' || permissions === null || Array.isArray(permissions)) {
      throw new TypeError('updateParticipant() needs a permissions object');
    }
    return this.#call('updateParticipant', 'PATCH',
      `/v1/rtc/rooms/${pathId('roomId', roomId)}/participants/${pathId('participantId', participantId)}`,
      JSON.stringify(permissions), (json) => (isParticipant(json) ? json : undefined), options);
  }

  /** The client as JSON: base URL and App ID only. */
  toJSON(): { baseUrl: string; appId: string } {
    return { baseUrl: this.#baseUrl, appId: this.#appId };
  }

  /** What `util.inspect` and `console.log` show: base URL and App ID only. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TokenClient { baseUrl: ${JSON.stringify(this.#baseUrl)}, appId: ${JSON.stringify(this.#appId)} }`;
  }

  async #call<T>(
    operation: TokenOperation,
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    body: string | undefined,
    read: (json: unknown) => T | undefined,
    options: CallOptions,
  ): Promise<T> {
    const signal = options.signal;
    signal?.throwIfAborted();
    const started = this.#clock.nowMs();
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.#attempt(operation, method, path, body, read, attempt, started, signal);
      if (result.ok) return result.value;
      const decision = decideRetry(result.failure, attempt, this.#clock.nowMs() - started, this.#retry, this.#random);
      if (!decision.retry) throw result.error;
      this.#emit({ type: 'retry', operation, attempt: attempt + 1, delayMs: decision.delayMs, basis: decision.basis });
      await this.#sleep(decision.delayMs, signal);
      signal?.throwIfAborted();
    }
  }

  async #attempt<T>(
    operation: TokenOperation,
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    body: string | undefined,
    read: (json: unknown) => T | undefined,
    attempt: number,
    started: number,
    signal: AbortSignal | undefined,
  ): Promise<AttemptResult<T>> {
    const url = `${this.#baseUrl}${path}`;
    const left = this.#retry.maxElapsedMs - (this.#clock.nowMs() - started);
    const timeoutMs = Math.max(1, Math.min(this.#timeoutMs, left));
    const timeout = AbortSignal.timeout(timeoutMs);
    const attemptSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const sent = this.#clock.nowMs();
    this.#emit({ type: 'request', operation, attempt, url });

    let status: number;
    let headers: FetchResponseHeaders;
    let text: string;
    try {
      const response = await this.#fetch(url, {
        method,
        headers: {
          authorization: this.#authorization,
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
      const origin = new URL(this.#baseUrl).origin;
      const message = reason === 'timeout'
        ? `no answer from the token API at ${origin} within ${timeoutMs} ms`
        : `could not reach the token API at ${origin}${describeNetworkCause(cause)}`;
      this.#emit({ type: 'network_error', operation, attempt, reason, durationMs: this.#clock.nowMs() - sent });
      return { ok: false, failure: { kind: 'network' }, error: new TokenNetworkError(reason, message, { operation, attempts: attempt, cause }) };
    }

    const retryAfterSec = parseRetryAfter(headers.get('retry-after'), this.#clock.nowMs());
    const requestId = headers.get('x-request-id') ?? undefined;
    const json = parseJson(text);
    const details = { operation, attempts: attempt, retryAfterSec, requestId };
    const errorBody = status >= 400 ? readErrorBody(json) : undefined;
    this.#emit({
      type: 'response', operation, attempt, status, code: errorBody?.error, retryAfterSec, requestId,
      durationMs: this.#clock.nowMs() - sent,
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
    if (!this.#logger) return;
    try {
      this.#logger(event);
    } catch {
      // a failing logger must not fail the call
    }
  }
}

type FetchResponseHeaders = { get(name: string): string | null };

function checkFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`${name} must be a function`);
  return value;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The base URL without a trailing slash; http(s) only, no credentials, query or fragment. */
function parseBaseUrl(raw: unknown, allowInsecureHttp: boolean): string {
  if (typeof raw !== 'string') throw new TypeError('baseUrl must be a string');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError('baseUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('baseUrl must be an http(s) URL');
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('baseUrl must not carry credentials: pass appId and appSecret');
  }
  if (url.search !== '' || url.hash !== '') throw new TypeError('baseUrl must not have a query or a fragment');
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new TypeError(
      'baseUrl uses http:// to a host other than loopback: the App Secret would cross the network in clear text. ' +
        'Use https://, or set allowInsecureHttp behind a TLS-terminating proxy you control.',
    );
  }
  return url.href.replace(/\/+$/, '');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A room or participant id as a path segment. */
function pathId(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(value);
}

function readErrorBody(json: unknown): { error: TokenApiError['code']; message: string } | undefined {
  if (!isObject(json) || !isErrorCode(json['error'])) return undefined;
  return { error: json['error'], message: typeof json['message'] === 'string' ? json['message'] : '' };
}

/** Accepts a body with the fields an app needs to join; the rest is the platform's promise. */
function readTokenResponse(json: unknown): TokenResponse | undefined {
  if (!isObject(json) || !isObject(json['media'])) return undefined;
  const media = json['media'];
  const ok = typeof json['expires_at'] === 'number'
    && typeof media['grant'] === 'string' && typeof media['key'] === 'string'
    && typeof media['sfu_host'] === 'string' && typeof media['sfu_port'] === 'number'
    && typeof media['revocation_handle'] === 'string';
  return ok ? (json as unknown as TokenResponse) : undefined;
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
