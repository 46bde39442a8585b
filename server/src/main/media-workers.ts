import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';

/** The media processes of one `rtc serve` (docs/operations/scale-out.md, "Every core of one machine"). */
export interface MediaWorkers {
  /** Each worker's first `{"role":"media",...}` line, in worker order. */
  readonly lines: readonly string[];
  /** Each worker's media URL as it first announced it. */
  readonly urls: readonly string[];
  /** SIGTERM to every worker (each drains as a media node does), resolved once all have exited. */
  close(): Promise<void>;
}

/** A worker that dies is started again after this, doubled at each death in a row, up to the maximum. */
const RESTART_BASE_MS = 250;
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before dying starts the backoff over. */
const STEADY_MS = 60_000;

/** The `rtc` entry this process runs (cli.ts from the sources, cli.js from the build). */
const CLI = fileURLToPath(new URL(`./cli${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

/**
 * What worker `index` of `count` is told: the media role alone, its own port (consecutive from
 * RTC_MEDIA_PORT, or a free one for 0), its relay port (likewise), its share of the UDP range and its own admin port.
 */
export function workerEnvironment(config: Config, env: NodeJS.ProcessEnv, index: number, count: number): NodeJS.ProcessEnv {
  const next = (port: number): string => String(port === 0 ? 0 : port + index);
  const own: NodeJS.ProcessEnv = { ...env, RTC_ROLES: 'media', RTC_MEDIA_WORKER_INDEX: String(index), RTC_MEDIA_PORT: next(config.ports.media) };
  if (config.media.publicPort !== undefined) own['RTC_MEDIA_PUBLIC_PORT'] = next(config.media.publicPort);
  // each worker's relay datagrams on a port of its own, consecutive like the media ports
  own['RTC_MEDIA_RELAY_PORT'] = next(config.media.relay.port);
  // the parent's admin port stays its own; worker i takes the i + 1 after it
  if (config.admin) own['RTC_ADMIN_PORT'] = String(config.admin.port === 0 ? 0 : config.admin.port + 1 + index);
  const range = config.rtc?.portRange;
  if (range) {
    const share = Math.floor((range[1] - range[0] + 1) / count);
    own['RTC_MEDIA_UDP_PORT_MIN'] = String(range[0] + index * share);
    own['RTC_MEDIA_UDP_PORT_MAX'] = String(range[0] + (index + 1) * share - 1);
  }
  return own;
}

/**
 * Forks `config.media.workers` media processes (node:child_process, each its own `rtc serve` with
 * the media role alone: every worker is a media node with its own address, which apps reach
 * directly, so the cluster module's shared listening socket does not fit), and supervises them: a
 * worker that dies is started again with backoff and prints its media line again. Resolves once
 * every worker announced its media line; rejects if one exits first (its own error is on stderr).
 */
export async function startMediaWorkers(config: Config, logger: Logger, announce: (line: string) => void): Promise<MediaWorkers> {
  const count = config.media.workers;
  const children: (ChildProcess | undefined)[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const spawnWorker = (index: number, failures: number, first?: { resolve: (line: string) => void; reject: (err: Error) => void }): void => {
    const child = fork(CLI, ['serve'], {
      env: workerEnvironment(config, process.env, index, count), execArgv: process.execArgv, stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    children[index] = child;
    const startedAt = Date.now();
    let announced = false;
    logger.info({ worker: index, workerPid: child.pid }, 'media worker started');
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!announced && isMediaLine(line)) {
        announced = true;
        if (first) first.resolve(line);
        else announce(line);
        return;
      }
      process.stdout.write(`${line}\n`);
    });
    child.on('exit', (code, signal) => {
      if (children[index] === child) children[index] = undefined;
      if (closing) return;
      if (first && !announced) {
        first.reject(new Error(`media worker ${index} exited with ${signal ?? code} before it listened`));
        return;
      }
      const streak = Date.now() - startedAt > STEADY_MS ? 0 : failures + 1;
      const delay = Math.min(RESTART_BASE_MS * 2 ** Math.max(streak - 1, 0), RESTART_MAX_MS);
      logger.warn({ worker: index, code, signal, restartInMs: delay }, 'media worker exited; starting it again');
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!closing) spawnWorker(index, streak);
      }, delay);
      timers.add(timer);
    });
  };

  const close = async (): Promise<void> => {
    closing = true;
    for (const timer of timers) clearTimeout(timer);
    await Promise.all(children.map((child) => child && child.exitCode === null && child.signalCode === null
      ? new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      })
      : undefined));
  };

  const lines = await Promise.allSettled(Array.from({ length: count }, (_, index) =>
    new Promise<string>((resolve, reject) => spawnWorker(index, 0, { resolve, reject }))));
  const failed = lines.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  const announced = lines.map((l) => (l as PromiseFulfilledResult<string>).value);
  return { lines: announced, urls: announced.map((l) => (JSON.parse(l) as { url: string }).url), close };
}

function isMediaLine(line: string): boolean {
  try {
    const parsed = JSON.parse(line) as { role?: unknown; url?: unknown };
    return parsed.role === 'media' && typeof parsed.url === 'string';
  } catch {
    return false;
  }
}
