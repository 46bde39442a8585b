/**
 * The api and token apps of the platform in this process, on the real services (a SQLite file in
 * a temporary directory, the key ring, the memory bus and limiter) with a clock the test moves.
 * Requests go through fastify's `inject()`: no sockets, no child process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig } from '../../server/src/config.ts';
import { createHttpApp, type HttpRole } from '../../server/src/main/http-app.ts';
import { REDACT_PATHS } from '../../server/src/log.ts';
import { createPasswordHasher } from '../../server/src/core/password.ts';
import { composeServices, httpContext } from '../../server/src/main/compose.ts';
import { urlOf } from '../../server/src/main/serve.ts';
import type { Clock, Limiter } from '../../server/src/core/ports.ts';
import type { ServiceDeps } from '../../server/src/core/deps.ts';
import type { Store } from '../../server/src/store/port.ts';
import { encodeRequest, httpResult, type HttpResult, type PlatformClient, type RequestOptions } from './http.ts';

/** A clock that stands still until the test moves it. */
export interface TestClock extends Clock {
  advance(ms: number): void;
}

export function testClock(startMs = Date.now()): TestClock {
  let now = startMs;
  return {
    nowMs: () => now,
    advance(ms) {
      if (!(ms >= 0)) throw new TypeError('a test clock only moves forward');
      now += ms;
    },
  };
}

export interface InProcessOptions {
  /** `RTC_*` variables, as `rtc serve` reads them (trusted proxies, rate limits, TURN, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /** Defaults to a test clock at the current time. */
  readonly clock?: TestClock;
  /** Defaults to the memory limiter on the same clock. */
  readonly limiter?: Limiter;
  /** A data directory to start on again (a restart on its SQLite file and keys); left in place by `close()`. Defaults to a new one. */
  readonly dataDir?: string;
}

export interface InProcessPlatform extends PlatformClient {
  /** `http://api.in-process` and `http://token.in-process`: base URLs that `request` routes to each app. */
  readonly urls: Readonly<Record<HttpRole, string>>;
  readonly clock: TestClock;
  readonly deps: ServiceDeps<Store>;
  readonly dataDir: string;
  /** Lets the app also listen on a loopback port, for the few tests that need a real socket; its base URL. */
  listen(role: HttpRole): Promise<string>;
  /** Log lines written so far (debug level, redacted as in production). */
  output(): string;
  /** Closes both apps and the store and removes the data directory (unless it was given). */
  close(): Promise<void>;
}

/**
 * Passwords are hashed with scrypt at a cost that takes about a millisecond instead of the
 * production half second: accounts are made by the hundred here, and the hashing itself is
 * tested at the production cost on the platforms of test/helpers/serve-inproc.ts and test/e2e.
 */
const TEST_PASSWORD_COST = { N: 1024, r: 8, p: 1 } as const;

/** Where a request comes from when it does not say (`localAddress` of the socket helper). */
const DEFAULT_ADDRESS = '127.0.0.1';

export async function startInProcess(options: InProcessOptions = {}): Promise<InProcessPlatform> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rtc-inproc-'));
  const config = loadConfig({ RTC_ROLES: 'api,token', ...options.env, RTC_DATA_DIR: dataDir });
  const lines: string[] = [];
  const logger = pino(
    { level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    { write: (line: string) => { lines.push(line); } },
  );
  const clock = options.clock ?? testClock();
  const deps = await composeServices(config, {
    clock, limiter: options.limiter, onBusError: (err) => logger.error({ err }, 'event handler failed'),
    passwords: createPasswordHasher(TEST_PASSWORD_COST),
  });
  const ctx = httpContext(config, deps, new Map());
  const apps: Record<HttpRole, FastifyInstance> = {
    api: createHttpApp(ctx, { role: 'api', logger, listener: config.listeners.api }),
    token: createHttpApp(ctx, { role: 'token', logger, listener: config.listeners.token }),
  };
  await Promise.all([apps.api.ready(), apps.token.ready()]);
  const urls = { api: 'http://api.in-process', token: 'http://token.in-process' } as const;

  const request = async (url: string, requestOptions: RequestOptions = {}): Promise<HttpResult> => {
    const target = new URL(url);
    const role = (Object.keys(urls) as HttpRole[]).find((r) => urls[r] === target.origin);
    if (role === undefined) throw new TypeError(`${target.origin} is not an app of this in-process platform`);
    const { method, headers, payload } = encodeRequest(requestOptions);
    const res = await apps[role].inject({
      method,
      url: `${target.pathname}${target.search}`,
      headers,
      ...(payload !== undefined && { payload }),
      remoteAddress: requestOptions.localAddress ?? DEFAULT_ADDRESS,
    });
    return httpResult(res.statusCode, res.headers as IncomingHttpHeaders, res.payload);
  };

  return {
    api: urls.api,
    token: urls.token,
    urls,
    request,
    clock,
    deps,
    dataDir,
    output: () => lines.join(''),
    async listen(role) {
      const app = apps[role];
      if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
      return urlOf(app.server.address() as AddressInfo, 'http');
    },
    async close() {
      await Promise.allSettled([apps.api.close(), apps.token.close()]);
      await deps.close();
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts a platform before the tests of the enclosing describe block and closes it after them; call inside `describe`. */
export function useInProcess(options: InProcessOptions = {}): () => InProcessPlatform {
  let platform: InProcessPlatform | undefined;
  before(async () => {
    platform = await startInProcess(options);
  });
  after(async () => {
    await platform?.close();
  });
  return () => {
    if (platform === undefined) throw new Error('the platform starts in the block\'s before hook');
    return platform;
  };
}
