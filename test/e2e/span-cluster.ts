/**
 * A cluster whose rooms span media nodes (docs/operations/scale-out.md, "Rooms across media nodes"):
 * PostgreSQL, Redis, one api and token node and media nodes of their own processes, each taking
 * `RTC_MEDIA_MAX_SESSIONS` sessions before placement opens a room on the next.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { mediaNodesSeen } from './cluster-helpers.ts';

export interface SpanCluster {
  /** The api and token node (admin listener on). */
  readonly api: RunningServer;
  readonly media: readonly RunningServer[];
  readonly customer: Customer;
  /** Stops every node, then Redis and PostgreSQL, and removes the data directories. */
  stop(): Promise<void>;
}

export interface SpanClusterOptions {
  readonly mediaNodes: number;
  /** Sessions a media node takes before a room spills (RTC_MEDIA_MAX_SESSIONS). */
  readonly maxSessions: number;
  /** More environment for every node. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts the cluster and resolves once the token node sees every media node live. */
export async function startSpanCluster(options: SpanClusterOptions): Promise<SpanCluster> {
  const [postgres, redis]: [Postgres, RedisServer] = await Promise.all([startPostgres(), startRedis()]);
  const servers: RunningServer[] = [];
  const dirs: string[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
    await redis.dispose();
    await postgres.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const env = {
      DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url, RTC_MEDIA_PUBLIC_HOST: '127.0.0.1',
      RTC_MEDIA_MAX_SESSIONS: String(options.maxSessions),
      RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_LOG_LEVEL: 'info', ...options.env,
    };
    const start = async (roles: readonly string[], extra: Record<string, string> = {}): Promise<RunningServer> => {
      const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-span-'));
      dirs.push(dataDir);
      const server = await startServer({ dataDir, roles, env: { ...env, ...extra } });
      servers.push(server);
      return server;
    };
    // the first node creates the schema and the key ring; the media nodes then share them
    const api = await start(['api', 'token'], { RTC_ADMIN_PORT: '0' });
    const media = await Promise.all(Array.from({ length: options.mediaNodes }, () => start(['media'])));
    const customer = await createCustomer(api);
    await mediaNodesSeen(api, options.mediaNodes);
    return { api, media, customer, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
