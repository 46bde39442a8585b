/** Starts the built platform (dist/, as `rtc serve` runs it) and creates a customer through its API. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postJson } from './http.ts';
import { startServerProcess, type ServerProcess } from './process.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist/server/src/main/cli.js');

export interface PlatformOptions {
  readonly dataDir: string;
  readonly stderrFile: string;
  readonly roles?: readonly string[];
  /** More RTC_* variables (rate limits, trusted proxies, ...). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Node flags of the server under test, from BENCH_SERVER_NODE_ARGS (space-separated), e.g.
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
    cwd: ROOT,
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

export interface BenchCredential {
  readonly projectId: string;
  readonly appId: string;
  readonly appSecret: string;
}

async function call(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await postJson(url, JSON.stringify(body), headers);
  if (res.status < 200 || res.status > 299) throw new Error(`POST ${new URL(url).pathname}: ${res.status} ${res.text}`);
  return JSON.parse(res.text) as Record<string, unknown>;
}

/** Registers an account, creates a project and a credential with both scopes. */
export async function createCredential(apiUrl: string): Promise<BenchCredential> {
  const suffix = `${process.pid}-${Date.now()}`;
  const account = await call(`${apiUrl}/v1/auth/register`, {
    email: `bench-${suffix}@example.test`, password: `bench password ${suffix}`,
  });
  const bearer = { authorization: `Bearer ${String(account['access_token'])}` };
  const project = await call(`${apiUrl}/v1/projects`, { name: 'bench' }, bearer);
  const projectId = String(project['id']);
  const credential = await call(`${apiUrl}/v1/projects/${projectId}/credentials`,
    { scopes: ['publisher', 'subscriber'] }, bearer);
  return { projectId, appId: String(credential['app_id']), appSecret: String(credential['app_secret']) };
}

/** The value of an HTTP Basic `Authorization` header. */
export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
