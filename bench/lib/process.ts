/** Starts a server process that announces its listeners as JSON lines on stdout, and stops it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface ServerProcess {
  readonly pid: number;
  /** Listener URLs by role, from the `{"role":..,"url":..}` lines. */
  readonly urls: Readonly<Record<string, string>>;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Roles whose lines must appear before the server counts as started. */
  readonly roles: readonly string[];
  /** Standard error goes to this file (a pipe read during the run would cost the client CPU). */
  readonly stderrFile: string;
  readonly startTimeoutMs?: number;
}

/** Spawns the process and resolves once every role in `roles` has printed its URL. */
export async function startServerProcess(options: StartOptions): Promise<ServerProcess> {
  const stderrFd = openSync(options.stderrFile, 'w');
  const child: ChildProcess = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env },
    stdio: ['ignore', 'pipe', stderrFd],
  });
  closeSync(stderrFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const urls: Record<string, string> = {};
  const stderrTail = (): string => {
    try {
      return readFileSync(options.stderrFile, 'utf8').slice(-4000);
    } catch {
      return '';
    }
  };

  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${options.args.join(' ')} did not start in time:\n${stderrTail()}`)),
        options.startTimeoutMs ?? 30_000);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${options.args.join(' ')} exited (${code ?? signal}) before it started:\n${stderrTail()}`));
      });
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const parsed = JSON.parse(line) as { role?: unknown; url?: unknown };
          if (typeof parsed.role === 'string' && typeof parsed.url === 'string') urls[parsed.role] = parsed.url;
        } catch {
          return;
        }
        if (options.roles.every((role) => urls[role] !== undefined)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  }

  const pid = child.pid!;
  return {
    pid,
    urls,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(kill);
    },
  };
}
