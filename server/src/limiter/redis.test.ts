import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../test/helpers/redis.ts';
import { createRedisClient, redisReady } from '../redis/client.ts';
import { createRedisLimiter, LimiterUnavailableError } from './redis.ts';

describe('Redis limiter (one count for every node)', () => {
  let redis: RedisServer;
  const clients: Redis[] = [];
  const errors: Error[] = [];
  const node = (): ReturnType<typeof createRedisLimiter> => {
    const client = createRedisClient(redis.url, (err) => errors.push(err));
    clients.push(client);
    return createRedisLimiter(client, 'test:shared');
  };

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await redis?.dispose();
  });

  it('counts hits from two nodes against one limit and tells when to retry', async () => {
    const a = node();
    const b = node();
    await Promise.all(clients.map((c) => redisReady(c)));
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await (i % 2 === 0 ? a : b).hit('app_1', 8, 60));
    assert.deepEqual(results.map((r) => r.ok), [true, true, true, true, true, true, true, true, false, false]);
    assert.ok(results[9]!.retryAfterSec >= 1 && results[9]!.retryAfterSec <= 60);
    assert.equal((await a.peek('app_1', 8, 60)).ok, false, 'peek sees the other node\'s hits');
    assert.equal((await b.peek('app_2', 8, 60)).ok, true, 'another key has its own count');
  });

  it('refuses at once while Redis is down and counts again once it is back', async () => {
    const limiter = node();
    await redisReady(clients.at(-1)!);
    await redis.stop();
    const refused = await limiter.hit('app_3', 5, 60).then(() => undefined, (err: unknown) => err);
    assert.ok(refused instanceof LimiterUnavailableError, `expected LimiterUnavailableError, got ${String(refused)}`);
    await redis.start();
    await Promise.all(clients.map((c) => redisReady(c)));
    assert.equal((await limiter.hit('app_3', 5, 60)).ok, true);
  });
});
