/**
 * An impaired network link for media tests: a UDP proxy on loopback, in a process of its own, that
 * drops, delays and rate-limits the packets of each direction (docs/operations/benchmarks.md,
 * "webrtc-network"). Put one in front of coturn for each browser page and point the page's TURN
 * URI at it: every packet of that page then crosses the link, whatever the far end is.
 *
 * @example
 * ```ts
 * const link = await startImpairedLink({ target: { host: coturn.host, port: coturn.port }, settings: bothWays({ lossRate: 0.03 }) });
 * // the page's ICE server: link.turnUri, with the TURN credentials
 * await link.set({ down: { rateKbps: 500 } });
 * await link.set({ down: { rateKbps: null } }); // the cap lifted
 * const { down } = await link.stats();
 * await link.close();
 * ```
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { applyPatch, CLEAN_LINK, type LinkSettings, type LinkSettingsPatch } from './link-settings.ts';
import type { LinkReply, LinkRequest, LinkStart, LinkStats } from './protocol.ts';

const PROCESS_FILE = fileURLToPath(new URL('./link-process.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
// a deadline, not a wait: starting node with tsx on a loaded 2-core machine can take seconds
const START_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** Scheduling priority of the link's process (best effort): its timers are the link's delays. */
const LINK_PRIORITY = -10;

export interface ImpairedLinkOptions {
  /** Where packets go: coturn's UDP listener, say. */
  readonly target: { readonly host: string; readonly port: number };
  /** Where the link listens: 127.0.0.1 and a free port unless given. */
  readonly listen?: { readonly host?: string; readonly port?: number };
  /** Settings from the start (each direction clean unless given). */
  readonly settings?: LinkSettingsPatch;
  /** Seeds the loss and jitter draws, so that two runs drop the same share in the same pattern. */
  readonly seed?: number;
}

export interface ImpairedLink {
  readonly host: string;
  readonly port: number;
  /** `turn:<host>:<port>?transport=udp`: a TURN URI that reaches the target through this link. */
  readonly turnUri: string;
  /** The settings as last set. */
  readonly settings: LinkSettings;
  /** Changes the settings while packets flow; resolves with the settings now in force. */
  set(patch: LinkSettingsPatch): Promise<LinkSettings>;
  /** Counters of both directions. */
  stats(): Promise<LinkStats>;
  /** Stops forwarding (pending packets are dropped) and ends the process. */
  close(): Promise<void>;
}

type Request = LinkRequest extends infer R ? (R extends LinkRequest ? Omit<R, 'id'> : never) : never;
type Pending = { resolve: (value: LinkReply) => void; reject: (err: Error) => void };

/** Starts a link's process and resolves once it listens. */
export async function startImpairedLink(options: ImpairedLinkOptions): Promise<ImpairedLink> {
  const settings = applyPatch(CLEAN_LINK, options.settings ?? {});
  const start: LinkStart = {
    listen: { host: options.listen?.host ?? '127.0.0.1', port: options.listen?.port ?? 0 },
    target: { host: options.target.host, port: options.target.port },
    settings,
    seed: options.seed ?? randomInt(2 ** 31),
  };
  const child: ChildProcess = fork(PROCESS_FILE, [JSON.stringify(start)], {
    cwd: ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json',
  });
  if (child.pid !== undefined) {
    try {
      setPriority(child.pid, LINK_PRIORITY);
    } catch {
      // not allowed to raise it (not root): the link still works, its timers are less punctual
    }
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let gone = false;
  child.once('exit', (code, signal) => {
    gone = true;
    for (const p of pending.values()) p.reject(new Error(`the impaired link's process exited (${code ?? signal})`));
    pending.clear();
  });

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the impaired link's process did not listen within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.on('message', (message: LinkReply) => {
      if (message.op === 'ready') {
        clearTimeout(timer);
        resolve(message.port);
        return;
      }
      const p = pending.get(message.id);
      if (!p) return;
      pending.delete(message.id);
      p.resolve(message);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the impaired link's process exited before it listened (${code ?? signal})`));
    });
  });

  const call = (request: Request): Promise<LinkReply> => {
    if (gone) return Promise.reject(new Error('the impaired link is closed'));
    const id = nextId++;
    return new Promise<LinkReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the impaired link did not answer ${request.op} within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      child.send({ ...request, id } as LinkRequest);
    });
  };
  const resultOf = <T>(reply: LinkReply): T => {
    if (reply.op !== 'reply') throw new Error('unexpected message from the impaired link');
    if (!reply.ok) throw new TypeError(reply.error);
    return reply.result as T;
  };

  let current = settings;
  const host = start.listen.host;
  return {
    host,
    port,
    turnUri: `turn:${host}:${port}?transport=udp`,
    get settings() {
      return current;
    },
    async set(patch) {
      // checked here too, so that a mistake throws at the caller's line
      applyPatch(current, patch);
      current = resultOf<LinkSettings>(await call({ op: 'set', patch }));
      return current;
    },
    async stats() {
      return resultOf<LinkStats>(await call({ op: 'stats' }));
    },
    async close() {
      if (!gone) {
        await call({ op: 'close' }).catch(() => undefined);
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(kill);
      }
    },
  };
}
