/**
 * What the client passes to `fetch`: always a POST with a JSON body, never following redirects.
 *
 * @example
 * ```ts
 * const traced: FetchLike = (url, init: FetchInitLike) => fetch(url, { ...init, headers: { ...init.headers, 'x-trace-id': traceId() } });
 * ```
 */
export interface FetchInitLike {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly headers: Record<string, string>;
  /** Absent on a GET and on calls without a body. */
  readonly body?: string;
  readonly signal: AbortSignal;
  readonly redirect: 'manual';
}

/**
 * The part of a fetch `Response` the client reads.
 *
 * @example
 * ```ts
 * const canned: FetchResponseLike = { status: 503, headers: new Headers({ 'retry-after': '1' }), text: async () => '' };
 * ```
 */
export interface FetchResponseLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/**
 * A `fetch`-compatible function. The global `fetch` of Node.js 20+ fits; tests and unusual
 * deployments (a proxy agent, a custom CA) pass their own.
 *
 * @example
 * ```ts
 * import { Agent, fetch as undiciFetch } from 'undici';
 * const dispatcher = new Agent({ connect: { ca: myCa } });
 * const fetchWithCa: FetchLike = (url, init) => undiciFetch(url, { ...init, dispatcher });
 * const tokens = new TokenClient({ baseUrl, appId, appSecret, fetch: fetchWithCa });
 * ```
 */
export type FetchLike = (url: string, init: FetchInitLike) => Promise<FetchResponseLike>;

/**
 * The client's clock: `nowMs()` for the call's time budget and `Retry-After` dates.
 *
 * @example
 * ```ts
 * let now = 0;
 * const clock: ClockLike = { nowMs: () => now };
 * ```
 */
export interface ClockLike {
  nowMs(): number;
}

/**
 * The wait between attempts; rejects with `signal.reason` when the caller aborts. Tests inject one
 * that records the delay instead of waiting.
 *
 * @example
 * ```ts
 * const waits: number[] = [];
 * const sleep: SleepLike = async (ms) => { waits.push(ms); };
 * ```
 */
export type SleepLike = (ms: number, signal: AbortSignal | undefined) => Promise<void>;

export const systemClock: ClockLike = { nowMs: () => Date.now() };

export const systemSleep: SleepLike = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
