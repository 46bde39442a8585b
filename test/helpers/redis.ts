import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeTcpPort } from './ports.ts';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 20_000;

/** A real redis-server on a free loopback port, without persistence. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM) and waits for its exit; `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

/** Starts `redis-server` in the foreground and resolves once it accepts connections. */
function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start:\n${output.join('')}`));
    }, START_TIMEOUT_MS);
    child.stdout!.on('data', (c: Buffer) => {
      output.push(c.toString('utf8'));
      if (output.join('').includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (c: Buffer) => output.push(c.toString('utf8')));
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${output.join('')}`));
    });
  });
}

function terminate(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Starts a Redis server for a test file; call `dispose()` in `after`. */
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-redis-'));
  const port = await freeTcpPort(HOST);
  let child: ChildProcess | undefined = await launch(port, dir);
  const killOnExit = (): void => {
    child?.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  return {
    url: `redis://${HOST}:${port}`,
    port,
    async stop() {
      await terminate(child);
      child = undefined;
    },
    async start() {
      child ??= await launch(port, dir);
    },
    async dispose() {
      await terminate(child);
      child = undefined;
      process.off('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
