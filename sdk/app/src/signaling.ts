import {
  isErrorCode, parseSignalingEvent,
  type ErrorCode, type SignalingEvent, type SignalingJoinResult, type SignalingLeaveReason, type SignalingParticipant,
} from '@rtc/protocol';

export type { SignalingEvent, SignalingJoinResult, SignalingLeaveReason, SignalingParticipant };

/** The fresh signaling credentials of a renewal: `signaling` of a new token response, or its token. */
export type SignalingRenewal = string | { readonly token: string; readonly url?: string };

/** The part of `fetch` the client uses (the global one in browsers and Node 20+). */
export type SignalingFetch = (input: string, init: {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}) => Promise<Response>;

export interface SignalingClientOptions {
  /** `signaling.url` of the token response. */
  readonly url: string;
  /** `signaling.token` of the token response. */
  readonly token: string;
  /**
   * Asks the app's own server for a fresh token (of the same project, room and user) shortly
   * before the current one expires; the client joins with it and resumes its event stream without
   * losing an event. Without it the session ends at expiry with an `expired` event.
   */
  readonly renewToken?: () => Promise<SignalingRenewal>;
  /** Renew this long before the token's expiry; default 30 000 ms (a tenth of a short token's life at most). */
  readonly renewBeforeMs?: number;
  /** Delays between reconnection attempts: doubling from `minMs` up to `maxMs`, with jitter. */
  readonly reconnect?: { readonly minMs?: number; readonly maxMs?: number };
  /** A stream silent this long counts as dropped and is reopened; the server writes every 15 s. Default 45 000 ms. */
  readonly idleTimeoutMs?: number;
  /** Injectable for tests and unusual runtimes; defaults to the global `fetch`. */
  readonly fetch?: SignalingFetch;
}

/**
 * The signaling service answered with an error of the platform's catalogue
 * (`{"error": code, "message": text}`). Branch on `code`; `code` is undefined when the answer
 * carried no catalogue body (a proxy's error page, for instance).
 *
 * @example
 * ```ts
 * try {
 *   await signaling.send({ kind: 'offer', sdp }, { to: 'u_8' });
 * } catch (err) {
 *   if (err instanceof SignalingError && err.code === 'rate_limited') await sleep(err.retryAfterSec! * 1000);
 *   else throw err;
 * }
 * ```
 */
export class SignalingError extends Error {
  readonly code: ErrorCode | undefined;
  readonly status: number;
  /** `Retry-After` of the answer in seconds (always present on `429 rate_limited`). */
  readonly retryAfterSec: number | undefined;
  /** `X-Request-Id` of the answer. */
  readonly requestId: string | undefined;

  constructor(status: number, code: ErrorCode | undefined, message: string, details: { retryAfterSec?: number | undefined; requestId?: string | undefined } = {}) {
    super(code === undefined ? `signaling: unexpected answer (status ${status})` : `signaling: ${status} ${code}: ${message}`);
    this.name = 'SignalingError';
    this.code = code;
    this.status = status;
    this.retryAfterSec = details.retryAfterSec;
    this.requestId = details.requestId;
  }
}

const DEFAULT_RENEW_BEFORE_MS = 30_000;
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
const DEFAULT_RECONNECT = { minMs: 250, maxMs: 5_000 };

/**
 * A client of the room signaling service: presence, room and direct messages, and an event
 * stream that survives dropped connections and token renewal without losing or repeating events.
 *
 * @example
 * ```ts
 * const signaling = new SignalingClient({
 *   url: token.signaling.url,
 *   token: token.signaling.token,
 *   renewToken: async () => (await myServer.freshToken()).signaling,
 * });
 * await signaling.join();
 * void (async () => {
 *   for await (const event of signaling.events()) {
 *     if (event.type === 'message') handle(event.from, event.data);
 *   }
 * })();
 * await signaling.send({ hello: 'room' });
 * await signaling.send({ kind: 'offer', sdp }, { to: 'u_8' });
 * ```
 */
export class SignalingClient {
  #url: string;
  #token: string;
  #lastEventId: string | undefined;
  #joined = false;
  #closed = false;
  #iteration: AbortController | undefined;
  readonly #options: SignalingClientOptions;
  readonly #fetch: SignalingFetch;

  constructor(options: SignalingClientOptions) {
    if (typeof options.url !== 'string' || !/^https?:\/\//.test(options.url)) throw new TypeError('url must be the http(s) signaling.url of a token response');
    if (typeof options.token !== 'string' || options.token === '') throw new TypeError('token must be the signaling.token of a token response');
    const fetchImpl = options.fetch ?? (globalThis.fetch as SignalingFetch | undefined);
    if (!fetchImpl) throw new TypeError('no fetch available: pass options.fetch');
    this.#options = options;
    this.#fetch = fetchImpl;
    this.#url = options.url.replace(/\/+$/, '');
    this.#token = options.token;
  }

  /** The id of the last event delivered (the resume point of the stream). */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  /** Joins the room's presence; others see a `join` event unless this user was already present. */
  async join(): Promise<SignalingJoinResult> {
    const result = await this.#post<SignalingJoinResult>('/v1/signaling/join', { token: this.#token });
    this.#joined = true;
    this.#lastEventId ??= result.last_event_id;
    return result;
  }

  /** Leaves the room; the event stream ends. */
  async leave(): Promise<void> {
    this.#joined = false;
    this.#iteration?.abort();
    await this.#post('/v1/signaling/leave', { token: this.#token });
  }

  /**
   * Sends `data` (any JSON value but null, at most 16 KiB as JSON) to the whole room, or to one
   * participant with `to`. Resolves with the event id the message got in the room's order.
   */
  async send(data: unknown, options: { readonly to?: string } = {}): Promise<{ id: string }> {
    return this.#post<{ id: string }>('/v1/signaling/messages', {
      token: this.#token, data, ...(options.to !== undefined && { to: options.to }),
    });
  }

  /** Who is in the room now. */
  async participants(): Promise<SignalingParticipant[]> {
    const res = await this.#request('GET', '/v1/signaling/participants', undefined, undefined);
    return (await res.json() as { participants: SignalingParticipant[] }).participants;
  }

  /**
   * The room's events, in the room's order. Dropped connections are reopened from the last event
   * id (nothing lost, nothing repeated within the service's retention window), the room is joined
   * again if the presence lapsed, and the token is renewed before expiry when `renewToken` is set.
   * The iteration ends after `revoked` or `expired`, after {@link leave} or {@link close}, or when
   * `signal` aborts; it throws a {@link SignalingError} the service gives for good (401 without renewal).
   */
  async *events(options: { readonly signal?: AbortSignal } = {}): AsyncGenerator<SignalingEvent, void, undefined> {
    if (this.#iteration) throw new TypeError('events() is already being iterated');
    if (this.#closed) throw new TypeError('the client is closed');
    const iteration = new AbortController();
    this.#iteration = iteration;
    const stop = options.signal ? AbortSignal.any([iteration.signal, options.signal]) : iteration.signal;
    const reconnect = { ...DEFAULT_RECONNECT, ...this.#options.reconnect };
    let failures = 0;
    let renewDue = false;
    let renewFailures = 0;
    let renewNotBefore = 0;
    let refused: SignalingError | undefined;
    const backOff = async (): Promise<void> => {
      failures += 1;
      const ceiling = Math.min(reconnect.maxMs, reconnect.minMs * 2 ** Math.min(failures - 1, 16));
      await sleep(ceiling / 2 + Math.random() * (ceiling / 2), stop);
    };
    try {
      if (!this.#joined) {
        // joined here: the join's participant list opens the iteration, and the stream resumes from it
        const joined = await this.join();
        this.#lastEventId = joined.last_event_id;
        yield { type: 'snapshot', id: joined.last_event_id, room_id: joined.room_id, participants: joined.participants, reset: false };
      }
      while (!stop.aborted && this.#joined) {
        if (renewDue) {
          renewDue = false;
          if (await this.#renew()) {
            renewFailures = 0;
            refused = undefined;
          } else if (refused) {
            // the current token is refused and no fresh one came: the session is over
            throw refused;
          } else {
            // keep the current token while it lasts; ask again later rather than at once
            renewFailures += 1;
            renewNotBefore = Date.now() + Math.min(30_000, 1_000 * 2 ** Math.min(renewFailures - 1, 5));
            await backOff();
            continue;
          }
        }
        const attempt = new AbortController();
        const renewTimer = this.#scheduleRenewal(renewNotBefore, () => {
          renewDue = true;
          attempt.abort();
        });
        try {
          const signal = AbortSignal.any([stop, attempt.signal]);
          const res = await this.#request('GET', '/v1/signaling/events', undefined, signal, true);
          failures = 0;
          for await (const frame of readSse(res, signal, this.#options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS)) {
            const event = parseSignalingEvent(frame);
            if (!event) continue;
            if ('id' in event) this.#lastEventId = event.id;
            if (event.type === 'expired' && this.#options.renewToken) {
              renewDue = true;
              break;
            }
            if (event.type === 'revoked' || event.type === 'expired') this.#joined = false;
            yield event;
            if (event.type === 'revoked' || event.type === 'expired') return;
          }
        } catch (err) {
          if (stop.aborted) return;
          if (!attempt.signal.aborted) {
            renewDue = await this.#recover(err, stop);
            if (renewDue && err instanceof SignalingError) refused = err;
          }
        } finally {
          clearTimeout(renewTimer);
        }
        if (stop.aborted) return;
        // a scheduled renewal reopens at once; anything else backs off before reopening from the last event id
        if (!(renewDue && attempt.signal.aborted)) await backOff();
      }
    } finally {
      if (this.#iteration === iteration) this.#iteration = undefined;
    }
  }

  /** What a failed stream needs before it is reopened: true when the token must be renewed first. */
  async #recover(err: unknown, stop: AbortSignal): Promise<boolean> {
    if (!(err instanceof SignalingError)) return false;
    if (err.status === 401) {
      if (this.#options.renewToken) return true;
      throw err;
    }
    if (err.status === 429) {
      await sleep((err.retryAfterSec ?? 1) * 1000, stop);
      return false;
    }
    // the presence lapsed (no stream for too long): join again, then resume from the last event id
    if (err.status === 409) {
      try {
        await this.join();
      } catch (joinErr) {
        // a full room stays full: that is for the app to handle
        if (joinErr instanceof SignalingError && joinErr.status === 409) throw joinErr;
        return this.#recover(joinErr, stop);
      }
      return false;
    }
    if (err.status >= 500) return false;
    throw err;
  }

  /** Ends the event stream and stops renewals; does not leave the room (see {@link leave}). */
  close(): void {
    this.#closed = true;
    this.#iteration?.abort();
  }

  #scheduleRenewal(notBefore: number, renew: () => void): ReturnType<typeof setTimeout> | undefined {
    if (!this.#options.renewToken) return undefined;
    const exp = tokenExpiry(this.#token);
    if (exp === undefined) return undefined;
    const before = this.#options.renewBeforeMs ?? DEFAULT_RENEW_BEFORE_MS;
    const lifetimeMs = exp * 1000 - Date.now();
    const delay = Math.max(0, lifetimeMs - Math.min(before, lifetimeMs / 10 + 1_000), notBefore - Date.now());
    // a timer beyond setTimeout's range would fire at once; tokens live an hour at most
    return setTimeout(renew, Math.min(delay, 2 ** 31 - 1));
  }

  /** Swaps in a fresh token: join with it first, so presence never lapses, then drop the old session. */
  async #renew(): Promise<boolean> {
    const renewToken = this.#options.renewToken;
    if (!renewToken) return false;
    try {
      const fresh = await renewToken();
      const next = typeof fresh === 'string' ? { token: fresh } : fresh;
      const old = this.#token;
      this.#token = next.token;
      if (next.url) this.#url = next.url.replace(/\/+$/, '');
      await this.#post('/v1/signaling/join', { token: this.#token });
      if (old !== this.#token) void this.#post('/v1/signaling/leave', { token: old }).catch(() => undefined);
      return true;
    } catch {
      return false;
    }
  }

  async #post<T>(path: string, body: Record<string, unknown>): Promise<T> {
    if (this.#closed && path !== '/v1/signaling/leave') throw new TypeError('the client is closed');
    const res = await this.#request('POST', path, JSON.stringify(body), undefined);
    return await res.json() as T;
  }

  async #request(method: string, path: string, body: string | undefined, signal: AbortSignal | undefined, stream = false): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    else headers['authorization'] = `Bearer ${this.#token}`;
    if (stream) {
      headers['accept'] = 'text/event-stream';
      if (this.#lastEventId !== undefined) headers['last-event-id'] = this.#lastEventId;
    }
    const res = await this.#fetch(`${this.#url}${path}`, {
      method, headers, ...(body !== undefined && { body }), ...(signal !== undefined && { signal }),
    });
    if (res.ok) return res;
    throw await errorOf(res);
  }
}

async function errorOf(res: Response): Promise<SignalingError> {
  const retryAfter = Number(res.headers.get('retry-after'));
  const details = {
    retryAfterSec: Number.isFinite(retryAfter) && retryAfter >= 0 && res.headers.has('retry-after') ? retryAfter : undefined,
    requestId: res.headers.get('x-request-id') ?? undefined,
  };
  let parsed: unknown;
  try {
    parsed = await res.json();
  } catch {
    parsed = undefined;
  }
  const body = typeof parsed === 'object' && parsed !== null ? parsed as Record<string, unknown> : {};
  const code = isErrorCode(body['error']) ? body['error'] : undefined;
  return new SignalingError(res.status, code, typeof body['message'] === 'string' ? body['message'] : '', details);
}

/** The `exp` claim of a compact JWS, read without verifying it (the server verifies). */
function tokenExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const claims = JSON.parse(atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4))) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp : undefined;
  } catch {
    return undefined;
  }
}

/** One dispatched Server-Sent Event; `id` only when the event carried an `id` field. */
export interface SseFrame {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/**
 * Reads Server-Sent Events from a fetch response (the WHATWG event-stream format: lines ending
 * in CR, LF or CRLF; `:` comments; `field: value`; a blank line dispatches). Ends with the body;
 * throws when `signal` aborts or no byte arrives for `idleTimeoutMs`. Internal: not exported by
 * the package's index.
 */
export async function* readSse(res: Response, signal: AbortSignal, idleTimeoutMs: number): AsyncGenerator<SseFrame, void, undefined> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let idle: ReturnType<typeof setTimeout> | undefined;
  let rearm: () => void = () => undefined;
  let onAbort: () => void = () => undefined;
  const watchdog = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason ?? new Error('aborted'));
    rearm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => reject(new Error('the event stream went silent')), idleTimeoutMs);
    };
  });
  watchdog.catch(() => undefined);
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  rearm();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  try {
    for (;;) {
      const chunk = await Promise.race([reader.read(), watchdog]);
      if (chunk.done) return;
      rearm();
      buffer += decoder.decode(chunk.value, { stream: true });
      let newline: RegExpExecArray | null;
      const lineEnd = /\r\n|\r|\n/g;
      let consumed = 0;
      while ((newline = lineEnd.exec(buffer)) !== null) {
        // a CR at the very end may be the first half of a CRLF split across chunks
        if (newline[0] === '\r' && newline.index === buffer.length - 1) break;
        const line = buffer.slice(consumed, newline.index);
        consumed = newline.index + newline[0].length;
        if (line === '') {
          if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
          data = [];
          event = '';
          id = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\u0000')) id = value;
      }
      buffer = buffer.slice(consumed);
    }
  } finally {
    clearTimeout(idle);
    signal.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => undefined);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
