import { isId } from '@rtc/protocol';
import type { TokenClientLogger } from './client-events.ts';
import { resolveRetryPolicy, type RetryOptions, type RetryPolicy } from './retry.ts';
import { systemClock, systemSleep, type ClockLike, type FetchLike, type SleepLike } from './transport.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const MAX_SECRET_LENGTH = 1024;

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

/** {@link TokenClientOptions} checked, with every default filled in and the credential as an `Authorization` header. */
export interface ClientSettings {
  readonly baseUrl: string;
  readonly appId: string;
  readonly authorization: string;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly logger: TokenClientLogger | undefined;
  readonly fetch: FetchLike;
  readonly clock: ClockLike;
  readonly sleep: SleepLike;
  readonly random: () => number;
}

/** Checks the options of a `TokenClient`; a misuse is a `TypeError` whose message never echoes a value. */
export function resolveClientOptions(options: TokenClientOptions): ClientSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('TokenClient needs an options object');
  const baseUrl = parseBaseUrl(options.baseUrl, options.allowInsecureHttp === true);
  if (typeof options.appId !== 'string' || !isId('app', options.appId)) {
    throw new TypeError('appId must be the App ID of a credential (app_ followed by 22 characters)');
  }
  // the message never echoes the value: it may be a secret passed in the wrong place
  if (typeof options.appSecret !== 'string' || options.appSecret.length > MAX_SECRET_LENGTH || !PRINTABLE_ASCII.test(options.appSecret)) {
    throw new TypeError('appSecret must be the App Secret of the credential (printable ASCII, no spaces)');
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 1) {
    throw new TypeError('timeoutMs must be a number of at least 1');
  }
  const retry = resolveRetryPolicy(options.retry);
  const logger = checkFunction('logger', options.logger);
  const fetchImpl = checkFunction('fetch', options.fetch) ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new TypeError('no global fetch: pass options.fetch');
  const clock = options.clock ?? systemClock;
  if (typeof clock.nowMs !== 'function') throw new TypeError('clock must have a nowMs() method');
  return {
    baseUrl,
    appId: options.appId,
    authorization: `Basic ${btoa(`${options.appId}:${options.appSecret}`)}`,
    timeoutMs,
    retry,
    logger,
    // called as a plain function: some runtimes refuse a fetch invoked with another `this`
    fetch: (url, init) => fetchImpl(url, init),
    clock,
    sleep: checkFunction('sleep', options.sleep) ?? systemSleep,
    random: checkFunction('random', options.random) ?? Math.random,
  };
}

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
