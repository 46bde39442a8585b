import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Platform {
  /** Base URL of each role, e.g. `{ api: 'http://127.0.0.1:40123', media: 'ws://127.0.0.1:40125' }`. */
  readonly urls: Readonly<Record<string, string>>;
  /** Stops the platform (SIGTERM, then SIGKILL after 10 s) and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * Starts `rtc serve` from this repository's sources with every role on a free port, in a fresh
 * data directory, and waits for the line each role prints once it listens.
 */
export async function startPlatform(roles: readonly string[]): Promise<Platform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rtc-quickstart-'));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'server/src/main/cli.ts'), 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      RTC_DATA_DIR: dataDir,
      RTC_ROLES: roles.join(','),
      RTC_API_PORT: '0',
      RTC_TOKEN_PORT: '0',
      RTC_SIGNALING_PORT: '0',
      RTC_MEDIA_PORT: '0',
      // token responses name the media server by this host; the roles listen on 127.0.0.1
      RTC_MEDIA_PUBLIC_HOST: '127.0.0.1',
      RTC_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cleanUp = (): void => rmSync(dataDir, { recursive: true, force: true });

  const urls: Record<string, string> = {};
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the platform did not start within 30 s')), 30_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the platform exited with code ${code} before it started`));
      });
      createInterface({ input: child.stdout }).on('line', (line) => {
        try {
          const { role, url } = JSON.parse(line) as { role?: string; url?: string };
          if (role && url) urls[role] = url;
        } catch {
          // not a role line
        }
        if (roles.every((r) => urls[r])) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    cleanUp();
    throw new Error(`${(err as Error).message}\n${logs.join('')}`);
  }

  return {
    urls,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(force);
      }
      cleanUp();
    },
  };
}
