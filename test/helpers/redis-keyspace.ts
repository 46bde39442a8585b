import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The environment variable through which `npm test` (scripts/test.mjs) names its one Redis server. */
export const SHARED_REDIS_ENV = 'TEST_REDIS_URL';

/**
 * A Redis for one test file: the URL of a server and a key prefix no other file uses. On the shared
 * server the keyspace and the pub/sub channels are every file's at once: the file gives `prefix` to
 * every key prefix and channel it opens (`keyPrefix`, `channel`, `prefix` options) and never flushes.
 */
export interface RedisKeyspace {
  readonly url: string;
  /** `test:<random>`: a prefix of this file's own. */
  readonly prefix: string;
  /** Deletes this file's keys (or stops this file's own server). */
  dispose(): Promise<void>;
}

/** What test/helpers/redis.ts's `startRedis` gives; declared here so that this module does not import that one. */
interface OwnRedis {
  readonly url: string;
  dispose(): Promise<void>;
}

/** Deletes every key under `prefix` on the server at `url`. */
async function deleteKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    await client.connect();
    for (let cursor = '0'; ;) {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await client.unlink(...keys);
      if (next === '0') break;
      cursor = next;
    }
  } finally {
    client.disconnect();
  }
}

/**
 * Redis for a test file that needs it only as a store or bus: the test run's server when `npm test`
 * started one (TEST_REDIS_URL), else a server this process starts itself, as a file run alone does.
 * A test that stops or restarts Redis uses `startRedis` (test/helpers/redis.ts) for its own server.
 */
export async function redisKeyspace(): Promise<RedisKeyspace> {
  const prefix = `test:${randomBytes(6).toString('hex')}`;
  const shared = process.env[SHARED_REDIS_ENV];
  if (shared !== undefined && shared !== '') return { url: shared, prefix, dispose: () => deleteKeys(shared, prefix) };
  // loaded only here: the module that starts servers stays out of the files the shared server serves
  const own = new URL('./redis.ts', import.meta.url).href;
  const { startRedis } = await import(own) as { startRedis: () => Promise<OwnRedis> };
  const server = await startRedis();
  return { url: server.url, prefix, dispose: () => server.dispose() };
}
