import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { startRedis, startRedisSentinels, type RedisSentinelGroup, type RedisServer } from '../../../test/helpers/redis.ts';
import { createRedisLimiter, LimiterUnavailableError } from '../limiter/redis.ts';
import { createRedisClient, redisOptions, redisReady } from './client.ts';

const PASSWORD = 'client-test-pa55word';

describe('Redis connections (docs/operations/scale-out.md, "Redis Sentinel")', () => {
  let primary: RedisServer;
  let other: RedisServer;
  let guarded: RedisServer;
  const clients: Redis[] = [];

  before(async () => {
    [primary, other, guarded] = await Promise.all([startRedis(), startRedis(), startRedis({ args: ['--requirepass', PASSWORD] })]);
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await Promise.all([primary, other, guarded].map((r) => r?.dispose()));
  });

  it('drops and remakes a connection whose server became a read-only replica; the limiter refuses with 503 meanwhile, never an error of its own', async () => {
    const client = createRedisClient(primary.url, () => {});
    clients.push(client);
    await redisReady(client);
    const limiter = createRedisLimiter(client, 'test:readonly');
    assert.equal((await limiter.hit('k', 10, 60)).ok, true);

    const admin = new Redis(primary.url);
    clients.push(admin);
    await admin.call('REPLICAOF', '127.0.0.1', String(other.port));
    try {
      const reconnected = new Promise<void>((resolve) => client.once('reconnecting', () => resolve()));
      await assert.rejects(limiter.hit('k', 10, 60), (err: unknown) => {
        assert.ok(err instanceof LimiterUnavailableError, String(err));
        assert.equal(err.status, 503);
        assert.equal(err.retryAfterSec, 1);
        assert.match(String((err.cause as Error).message), /^READONLY/);
        return true;
      });
      await reconnected;
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
    }
    await redisReady(client);
    for (let attempt = 0; !(await limiter.hit('k2', 10, 60).then((r) => r.ok, () => false)); attempt++) {
      assert.ok(attempt < 100, 'the limiter never counted again');
      // a hit can fail while the connection is up (it may be dropped once more meanwhile): wait for
      // it to be ready, which is at once when it already is, and a moment more
      await redisReady(client);
      await new Promise<void>((resolve) => setTimeout(resolve, 50));
    }
  });

  it('connects again a connection whose reconnection was cut short (ioredis then gives it up), until the platform closes it', { timeout: 30_000 }, async () => {
    const client = createRedisClient(primary.url, () => {});
    clients.push(client);
    await redisReady(client);
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    // what the sentinels' +switch-master does to a connection already reconnecting: its connector is closed under it
    client.once('connecting', () => (client as unknown as { connector: { disconnect(): void } }).connector.disconnect());
    client.disconnect(true);
    await ended;
    await redisReady(client, 10_000);
    assert.equal(await client.ping(), 'PONG');
    // closed by the platform: it stays closed
    const closed = new Promise<void>((resolve) => client.once('end', () => resolve()));
    client.disconnect();
    await closed;
    await new Promise<void>((resolve) => setTimeout(resolve, 300));
    assert.equal(client.status, 'end');
  });

  it('never hands a password to the error listener', async () => {
    const errors: Error[] = [];
    const wrong = 'wrong-pa55word-in-url';
    const reported = new Promise<void>((resolve) => {
      const client = createRedisClient(guarded.url.replace('redis://', `redis://:${wrong}@`), (err) => {
        errors.push(err);
        resolve();
      });
      clients.push(client);
    });
    await reported;
    for (const err of errors) {
      assert.ok(!inspect(err, { depth: 10 }).includes(wrong), inspect(err));
      assert.ok(!JSON.stringify(err).includes(wrong));
    }
  });

  it('asks the sentinels for the master, with the passwords given, and reconnects on READONLY', () => {
    const options = redisOptions({
      sentinels: [{ host: 's1', port: 26379 }, { host: '::1', port: 26380 }], masterName: 'rtc', password: 'p', sentinelPassword: 'sp',
    }, { enableOfflineQueue: false });
    assert.deepEqual(options.sentinels, [{ host: 's1', port: 26379 }, { host: '::1', port: 26380 }]);
    assert.equal(options.name, 'rtc');
    assert.equal(options.role, 'master');
    assert.equal(options.password, 'p');
    assert.equal(options.sentinelPassword, 'sp');
    assert.equal(options.failoverDetector, true);
    assert.equal(options.enableOfflineQueue, false);
    const reconnect = options.reconnectOnError!;
    assert.equal(reconnect(new Error("READONLY You can't write against a read only replica.")), true);
    assert.equal(reconnect(new Error('ERR wrong number of arguments')), false);
    assert.equal(redisOptions({ url: 'redis://x' }, {}).sentinels, undefined);
  });
});

describe('Redis connections through Sentinel, closed by the platform', () => {
  let group: RedisSentinelGroup | undefined;
  after(async () => {
    await group?.dispose();
  });

  it('closes the failover detector a connection attempt it abandoned opens late, whose sentinel connections would reconnect for ever', { timeout: 30_000 }, async () => {
    group = await startRedisSentinels();
    const client = createRedisClient({
      sentinels: group.sentinels, masterName: group.masterName, password: group.password, sentinelPassword: group.sentinelPassword,
    }, () => {});
    await redisReady(client);
    client.disconnect();
    // what ioredis does when the stream of an attempt abandoned by that disconnect connects after it
    type Detector = { sentinels: { client: Redis }[] };
    const connector = (client as unknown as { connector: { initFailoverDetector(): Promise<void>; failoverDetector: Detector | null } }).connector;
    await connector.initFailoverDetector();
    const late = connector.failoverDetector!.sentinels.map((s) => s.client);
    assert.ok(late.length > 0);
    for (const s of late) if (s.status !== 'end') await new Promise<void>((resolve) => s.once('end', () => resolve()));
    assert.ok(late.every((s) => s.status === 'end'), late.map((s) => s.status).join());
  });
});
