/** Starts the built platform (dist/, as `rtc serve` runs it) and creates a customer through its API. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createCustomer } from '../../test/helpers/customer.ts';
import { basic, request } from '../../test/helpers/http.ts';
import { startServerProcess, type ServerProcess } from './process.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The checkout whose build is measured: this one, or BENCH_PLATFORM_ROOT (another checkout's built
 * dist/, to compare a change with the code before it in one window).
 */
const PLATFORM_ROOT = process.env['BENCH_PLATFORM_ROOT'] || ROOT;
const CLI = join(PLATFORM_ROOT, 'dist/server/src/main/cli.js');

export interface PlatformOptions {
  readonly dataDir: string;
  readonly stderrFile: string;
  readonly roles?: readonly string[];
  /** More RTC_* variables (rate limits, trusted proxies, ...). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Node flags of the server under test and of the servers it is compared with, from
 * BENCH_SERVER_NODE_ARGS (space-separated), e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it during a bench run.
 */
function serverNodeArgs(): string[] {
  return (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
}

/** `node dist/server/src/main/cli.js serve` on free loopback ports, logging at `info` like production. */
export async function startPlatformServer(options: PlatformOptions): Promise<ServerProcess> {
  if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` (npm run bench builds first)');
  const roles = options.roles ?? ['api', 'token'];
  return startServerProcess({
    command: process.execPath,
    args: [...serverNodeArgs(), CLI, 'serve'],
    cwd: PLATFORM_ROOT,
    roles,
    stderrFile: options.stderrFile,
    env: {
      PATH: process.env['PATH'] ?? '',
      RTC_DATA_DIR: options.dataDir,
      RTC_ROLES: roles.join(','),
      RTC_HOST: '127.0.0.1',
      RTC_API_PORT: '0',
      RTC_TOKEN_PORT: '0',
      RTC_SIGNALING_PORT: '0',
      RTC_MEDIA_PORT: '0',
      RTC_LOG_LEVEL: 'info',
      ...options.env,
    },
  });
}

/** Every role in one process, as `npm start` runs it. */
export const EMBEDDED_ROLES: readonly string[] = ['api', 'token', 'signaling', 'media'];

/** The variables `npm start` of the measured checkout adds to the server's environment (scripts/lib.mjs: NODE_OPTIONS). */
export async function npmStartEnvironment(): Promise<Record<string, string>> {
  const lib = await import(pathToFileURL(join(PLATFORM_ROOT, 'scripts/lib.mjs')).href) as {
    serveEnvironment?: (env: Record<string, string>) => Record<string, string>;
  };
  // a checkout from before serveEnvironment started its server with node's defaults
  return lib.serveEnvironment?.({}) ?? {};
}

export interface BenchCredential {
  readonly projectId: string;
  readonly appId: string;
  readonly appSecret: string;
  /** The console session of the account that owns the project. */
  readonly accessToken: string;
}

/** Registers an account, creates a project and a credential with both scopes (the tests' helper, over sockets). */
export async function createCredential(apiUrl: string): Promise<BenchCredential> {
  const { projectId, appId, appSecret, accessToken } = await createCustomer({ api: apiUrl, token: apiUrl, request });
  return { projectId, appId, appSecret, accessToken };
}

/** The value of an HTTP Basic `Authorization` header. */
export const basicAuthorization = basic;

/**
 * The bench file itself run with `role` as its argument: a comparison server that prints
 * `{"role":<role>,"url":..}` once it listens (its standard error goes to `<role>.log` in `work`).
 */
export function startBenchFileServer(work: string, benchFile: string, role: string): Promise<ServerProcess> {
  return startServerProcess({
    command: process.execPath, args: [...serverNodeArgs(), '--import', 'tsx', benchFile, role], cwd: ROOT, roles: [role],
    stderrFile: join(work, `${role}.log`), env: { PATH: process.env['PATH'] ?? '' },
  });
}

/**
 * For the media benchmarks: the platform with the media role, and the bench file itself run with
 * the `baseline` argument as the server it is compared with. Both are added to `started` as they
 * start, so the caller stops whatever did start.
 */
export async function startMediaAndBaseline(
  work: string, benchFile: string, started: ServerProcess[],
): Promise<{ platform: ServerProcess; baseline: ServerProcess; cred: BenchCredential }> {
  const platform = await startPlatformServer({
    dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
    env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  started.push(platform);
  const baseline = await startBenchFileServer(work, benchFile, 'baseline');
  started.push(baseline);
  return { platform, baseline, cred: await createCredential(platform.urls['api']!) };
}
