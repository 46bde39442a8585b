import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
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
function launch(port: number, dir: string, extra: readonly string[] = []): Promise<ChildProcess> {
  return spawnUntil('redis-server', [
    '--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', ...extra,
  ], 'Ready to accept connections');
}

/** Spawns `command` and resolves once its output shows `marker`. */
function spawnUntil(command: string, args: readonly string[], marker: string): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not start:\n${output.join('')}`));
    }, START_TIMEOUT_MS);
    let seen = '';
    const onData = (c: Buffer): void => {
      output.push(c.toString('utf8'));
      // the marker may span two chunks; once seen, the output is drained unread
      seen = (seen + c.toString('utf8')).slice(-4096);
      if (seen.includes(marker)) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => output.push(c.toString('utf8')));
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}:\n${output.join('')}`));
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

/** Starts a Redis server for a test file (`args`: more `redis-server` options); call `dispose()` in `after`. */
export async function startRedis(options: { readonly args?: readonly string[] } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-redis-'));
  const port = await freeTcpPort(HOST);
  const args = options.args ?? [];
  let child: ChildProcess | undefined = await launch(port, dir, args);
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
      child ??= await launch(port, dir, args);
    },
    async dispose() {
      await terminate(child);
      child = undefined;
      process.off('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The address of one sentinel. */
export interface SentinelEndpoint {
  readonly host: string;
  readonly port: number;
}

/**
 * A master, a replica and three sentinels (quorum 2) on loopback, with passwords on the data nodes
 * and on the sentinels: what `REDIS_SENTINELS` names in a deployment (docs/operations/scale-out.md,
 * "Redis Sentinel").
 */
export interface RedisSentinelGroup {
  readonly masterName: string;
  readonly sentinels: readonly SentinelEndpoint[];
  /** `requirepass` of the master and the replica. */
  readonly password: string;
  /** `requirepass` of the sentinels. */
  readonly sentinelPassword: string;
  /** The `rtc serve` variables that name this group. */
  readonly env: Readonly<Record<string, string>>;
  readonly downAfterMs: number;
  readonly failoverTimeoutMs: number;
  /** The port of the master the sentinels name now. */
  masterPort(): Promise<number>;
  /**
   * Resolves once the sentinels agree on a master, know the two other sentinels and a replica in
   * sync, and a new failover would start at once (twice the failover timeout since the last).
   */
  settled(): Promise<void>;
  /** Resolves once every sentinel names the same master (each has announced it). */
  agreed(): Promise<void>;
  /** SIGKILLs the master the sentinels name now; resolves with its port. */
  killMaster(): Promise<number>;
  /** Resolves with the new master's port once the sentinels name one other than `oldPort`. */
  promoted(oldPort: number): Promise<number>;
  /** Starts a killed server again on its port, as a replica of the master the sentinels name now. */
  restart(port: number): Promise<void>;
  /** Stops every process and removes their directories. */
  dispose(): Promise<void>;
}

export interface SentinelGroupOptions {
  /** `down-after-milliseconds`: how long the master must not answer before it counts as down (default 1000). */
  readonly downAfterMs?: number;
  /** `failover-timeout` (default 2000). */
  readonly failoverTimeoutMs?: number;
}

const POLL_MS = 50;
const SETTLE_TIMEOUT_MS = 60_000;

/** Listens on `port` and resets every connection: a dead server's address, kept from other tests. */
function holdDeadPort(port: number): Promise<Server> {
  const server = createServer((socket) => socket.resetAndDestroy());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => resolve(server));
  });
}

/**
 * Starts the group. Sentinels are `redis-server <conf> --sentinel` (the binary of Debian's
 * redis-server package; no redis-sentinel package needed). Call `dispose()` in `after`.
 */
export async function startRedisSentinels(options: SentinelGroupOptions = {}): Promise<RedisSentinelGroup> {
  const { Redis } = await import('ioredis');
  const masterName = 'rtc-main';
  const password = 'redis-pa55-sentinel-group';
  const sentinelPassword = 'sentinel-pa55-group';
  const downAfterMs = options.downAfterMs ?? 1000;
  const failoverTimeoutMs = options.failoverTimeoutMs ?? 2000;
  const root = mkdtempSync(join(tmpdir(), 'rtc-sentinel-'));
  const children = new Map<number, ChildProcess>();
  const killAll = (): void => {
    for (const child of children.values()) child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const auth = ['--requirepass', password, '--masterauth', password];
  const dataDir = (port: number): string => {
    const dir = join(root, `redis-${port}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const [masterPort, replicaPort] = [await freeTcpPort(HOST), await freeTcpPort(HOST)] as [number, number];
  children.set(masterPort, await launch(masterPort, dataDir(masterPort), auth));
  children.set(replicaPort, await launch(replicaPort, dataDir(replicaPort), [...auth, '--replicaof', HOST, String(masterPort)]));

  const sentinels: SentinelEndpoint[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freeTcpPort(HOST);
    const dir = join(root, `sentinel-${port}`);
    mkdirSync(dir);
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(conf, [
      `port ${port}`, `bind ${HOST}`, `dir ${dir}`, 'daemonize no',
      `requirepass ${sentinelPassword}`, `sentinel sentinel-pass ${sentinelPassword}`,
      `sentinel monitor ${masterName} ${HOST} ${masterPort} 2`,
      `sentinel auth-pass ${masterName} ${password}`,
      `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
      `sentinel failover-timeout ${masterName} ${failoverTimeoutMs}`,
      `sentinel parallel-syncs ${masterName} 1`, '',
    ].join('\n'));
    children.set(port, await spawnUntil('redis-server', [conf, '--sentinel'], '+monitor master'));
    sentinels.push({ host: HOST, port });
  }

  const ask = async <T>(endpoint: SentinelEndpoint, fn: (client: InstanceType<typeof Redis>) => Promise<T>): Promise<T> => {
    const client = new Redis({ ...endpoint, password: sentinelPassword, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    try {
      await client.connect();
      return await fn(client);
    } finally {
      client.disconnect();
    }
  };
  const pairs = (reply: unknown): Record<string, string> => {
    const flat = reply as string[];
    const out: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
    return out;
  };
  const named = async (endpoint: SentinelEndpoint): Promise<number> => {
    const reply = await ask(endpoint, (c) => c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as [string, string];
    return Number(reply[1]);
  };
  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`the sentinel group never ${what}`);
      await new Promise<void>((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
  let lastFailoverAt = 0;
  const deadPorts = new Map<number, Server>();
  const releaseDeadPort = async (port: number): Promise<void> => {
    const server = deadPorts.get(port);
    deadPorts.delete(port);
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  const group: RedisSentinelGroup = {
    masterName, sentinels, password, sentinelPassword, downAfterMs, failoverTimeoutMs,
    env: {
      REDIS_SENTINELS: sentinels.map((s) => `${s.host}:${s.port}`).join(','),
      REDIS_SENTINEL_MASTER: masterName,
      REDIS_PASSWORD: password,
      REDIS_SENTINEL_PASSWORD: sentinelPassword,
    },
    masterPort: () => named(sentinels[0]!),
    async settled() {
      await until('settled', async () => {
        const ports = await Promise.all(sentinels.map(named));
        if (new Set(ports).size !== 1) return undefined;
        for (const endpoint of sentinels) {
          const master = pairs(await ask(endpoint, (c) => c.call('SENTINEL', 'MASTER', masterName)));
          if (master['flags'] !== 'master' || Number(master['num-other-sentinels']) < 2) return undefined;
          const replicas = (await ask(endpoint, (c) => c.call('SENTINEL', 'REPLICAS', masterName)) as unknown[]).map(pairs);
          if (!replicas.some((r) => r['flags'] === 'slave' && r['master-link-status'] === 'ok')) return undefined;
        }
        return Date.now() - lastFailoverAt >= 2 * failoverTimeoutMs + 200 ? true : undefined;
      });
    },
    async agreed() {
      await until('agreed on a master', async () => (new Set(await Promise.all(sentinels.map(named))).size === 1 ? true : undefined));
    },
    async killMaster() {
      const port = await group.masterPort();
      const child = children.get(port);
      if (!child) throw new Error(`no server of this group on port ${port}`);
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
      children.delete(port);
      // the port of a dead server resets every connection until restart(): a server started
      // meanwhile by another test on that free port must not pass for this group's master
      deadPorts.set(port, await holdDeadPort(port));
      return port;
    },
    async promoted(oldPort) {
      const port = await until('promoted a replica', async () => {
        const now = await named(sentinels[0]!);
        return now !== oldPort ? now : undefined;
      });
      lastFailoverAt = Date.now();
      return port;
    },
    async restart(port) {
      if (children.has(port)) return;
      await releaseDeadPort(port);
      const master = await group.masterPort();
      children.set(port, await launch(port, dataDir(port), [...auth, '--replicaof', HOST, String(master)]));
    },
    async dispose() {
      process.off('exit', killAll);
      await Promise.all([...deadPorts.keys()].map(releaseDeadPort));
      await Promise.all([...children.values()].map(terminate));
      children.clear();
      rmSync(root, { recursive: true, force: true });
    },
  };
  await group.settled();
  return group;
}
