import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request, type PlatformClient } from './http.ts';
import { ROOT } from './root.ts';

export { ROOT };
const CLI = join(ROOT, 'server/src/main/cli.ts');
// a deadline, not a wait: on a loaded 2-core machine compiling and starting a server can take long
const START_TIMEOUT_MS = 60_000;

/** `rtc serve` in a child process; `request` goes over real sockets. */
export interface RunningServer extends PlatformClient {
  /** The roles' URLs, and `admin` when the admin listener is on (RTC_ADMIN_PORT). */
  readonly urls: Readonly<Record<string, string>>;
  readonly api: string;
  readonly token: string;
  readonly dataDir: string;
  readonly process: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then waits for the exit; SIGKILL after 10 s. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  readonly env?: Record<string, string>;
  readonly dataDir?: string;
  readonly roles?: readonly string[];
  /** Lowers the open-file limit of the process (soft and hard, so Node cannot raise it) to this many. */
  readonly maxOpenFiles?: number;
}

// servers still running when this test process ends (a file-level timeout, a crash) go with it:
// a stopped test run leaves no server behind
const children = new Set<ChildProcess>();
const killChildren = (): void => {
  for (const child of children) child.kill('SIGKILL');
};
const onSignal = (signal: NodeJS.Signals): void => {
  killChildren();
  process.kill(process.pid, signal);
};
let watching = false;
function watchChildren(): void {
  if (watching) return;
  watching = true;
  process.once('exit', killChildren);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

/** Starts `rtc serve` as a child process on port 0 and waits for its role lines. */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rtc-test-'));
  const roles = options.roles ?? ['api', 'token'];
  const node = [process.execPath, '--import', 'tsx', CLI, 'serve'];
  const command = options.maxOpenFiles === undefined
    ? node
    : ['/bin/sh', '-c', `ulimit -n ${options.maxOpenFiles} && exec "$0" "$@"`, ...node];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      RTC_DATA_DIR: dataDir,
      RTC_ROLES: roles.join(','),
      RTC_API_PORT: '0',
      RTC_TOKEN_PORT: '0',
      RTC_SIGNALING_PORT: '0',
      RTC_MEDIA_PORT: '0',
      RTC_LOG_LEVEL: 'debug',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  watchChildren();
  children.add(child);
  const chunks: string[] = [];
  child.stderr!.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  const urls: Record<string, string> = {};
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${chunks.join('')}`)), START_TIMEOUT_MS);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      chunks.push(`${line}\n`);
      try {
        const parsed = JSON.parse(line) as { role?: string; url?: string; admin?: string };
        if (parsed.role && parsed.url) urls[parsed.role] = parsed.url;
        if (parsed.admin) urls['admin'] = parsed.admin;
      } catch {
        // not a role line
      }
      if (roles.every((r) => urls[r])) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it started:\n${chunks.join('')}`));
    });
  });

  return {
    urls,
    api: urls['api'] ?? '',
    token: urls['token'] ?? '',
    request,
    dataDir,
    process: child,
    output: () => chunks.join(''),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const result = await exited;
        clearTimeout(kill);
        return result;
      }
      return exited;
    },
  };
}
