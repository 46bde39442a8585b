import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../test/helpers/redis.ts';
import type { AdmissionRequest, Clock, TokenAdmission } from '../core/ports.ts';
import { createRedisClient, redisReady } from '../redis/client.ts';
import { limiterAdmission } from './admission.ts';
import { createMemoryLimiter } from './memory.ts';
import { createRedisCredentialVersions, createRedisTokenAdmission } from './redis-admission.ts';
import { createRedisLimiter, LimiterUnavailableError } from './redis.ts';

const BLOCK = { key: 'authfail:10.0.0.1', max: 20, windowSec: 300 };
const RATE = { key: 'addr:10.0.0.1', max: 5, windowSec: 60 };
// wide enough that the address is never what refuses, where the test is about something else
const request = (over: Partial<AdmissionRequest> = {}): AdmissionRequest => ({ block: BLOCK, rate: { ...RATE, max: 1000 }, ...over });

function manualClock(): Clock & { advance(ms: number): void } {
  let now = 1_000_000;
  return { nowMs: () => now, advance: (ms) => { now += ms; } };
}

describe('token admission in one Redis round trip', () => {
  let redis: RedisServer;
  let client: Redis;
  let admin: Redis;

  /** Moves Redis's windows `ms` closer to their end, as the memory limiter's clock moves. */
  async function advanceRedis(ms: number): Promise<void> {
    for (const key of await admin.keys('*')) {
      const ttl = await admin.pttl(key);
      if (ttl <= 0) continue;
      if (ttl - ms <= 0) await admin.del(key);
      else await admin.pexpire(key, ttl - ms);
    }
  }

  before(async () => {
    redis = await startRedis();
    client = createRedisClient(redis.url, () => {});
    admin = createRedisClient(redis.url, () => {});
    await Promise.all([redisReady(client), redisReady(admin)]);
  });
  beforeEach(async () => {
    await admin.flushall();
  });
  after(async () => {
    client.disconnect();
    admin.disconnect();
    await redis?.dispose();
  });

  it('answers as the memory limiter for the address limit, the failure block and their Retry-After', async () => {
    const clock = manualClock();
    const memoryLimiter = createMemoryLimiter(clock);
    const memory = limiterAdmission(memoryLimiter);
    const redisLimiter = createRedisLimiter(client);
    const shared = createRedisTokenAdmission(client);
    const both = async (step: (admission: TokenAdmission, limiter: typeof memoryLimiter) => Promise<unknown>): Promise<void> => {
      const [m, r] = await Promise.all([step(memory, memoryLimiter), step(shared, redisLimiter)]);
      assert.deepEqual(r, m);
    };
    const admit = (a: TokenAdmission): Promise<unknown> => a.admit({ block: BLOCK, rate: RATE }).then((r) => r.address);
    const advance = async (ms: number): Promise<void> => {
      clock.advance(ms);
      await advanceRedis(ms);
    };
    // five requests a minute, then 429 with the seconds left, and a new window after
    for (let i = 0; i < 7; i++) await both(admit);
    await advance(42_300);
    await both(admit);
    await advance(17_700);
    for (let i = 0; i < 6; i++) await both(admit);
    // 20 failures within five minutes block the address, whatever its rate
    await advance(60_000);
    for (let i = 0; i < 19; i++) await both((_a, l) => l.hit(BLOCK.key, BLOCK.max, BLOCK.windowSec));
    await both(admit);
    await both((_a, l) => l.hit(BLOCK.key, BLOCK.max, BLOCK.windowSec));
    await both(admit);
    await advance(120_500);
    await both(admit);
    await advance(179_500);
    await both(admit);
    assert.deepEqual(await shared.admit({ block: BLOCK, rate: RATE }), { address: { ok: true, retryAfterSec: 0 }, version: undefined, app: undefined });
  });

  it('counts the App ID only while the version it was cached with is current, in the limiter\'s own count', async () => {
    const admission = createRedisTokenAdmission(client);
    const limiter = createRedisLimiter(client);
    const app = { key: 'app:app_1', max: 3, windowSec: 60 };
    const first = await admission.admit(request({ projectId: 'project_1' }));
    assert.ok(first.version, 'a version is started on first read');
    assert.equal(first.app, undefined);
    const again = await admission.admit(request({ projectId: 'project_1', app: { ...app, version: first.version } }));
    assert.equal(again.version, first.version);
    assert.deepEqual(again.app, { ok: true, retryAfterSec: 0 });
    // not counted under a version that is not the current one (a stale cache falls back to the store)
    const stale = await admission.admit(request({ projectId: 'project_1', app: { ...app, version: 'v1.1' } }));
    assert.equal(stale.app, undefined);
    assert.deepEqual(await limiter.hit(app.key, app.max, app.windowSec), { ok: true, retryAfterSec: 0 });
    assert.deepEqual((await admission.admit(request({ projectId: 'project_1', app: { ...app, version: first.version } }))).app,
      { ok: true, retryAfterSec: 0 });
    const over = await admission.admit(request({ projectId: 'project_1', app: { ...app, version: first.version } }));
    assert.equal(over.app?.ok, false);
    assert.ok(over.app!.retryAfterSec >= 59 && over.app!.retryAfterSec <= 60);
    assert.equal((await limiter.peek(app.key, app.max, app.windowSec)).ok, false);
    // a refused address counts nothing else
    const blocked = { ...RATE, max: 0 };
    const refused = await admission.admit({ block: BLOCK, rate: blocked, projectId: 'project_2', app: { key: 'app:app_2', max: 3, windowSec: 60, version: 'x' } });
    assert.equal(refused.address.ok, false);
    assert.equal(await admin.exists('rtc:limit:3/60:app:app_2'), 0);
  });

  it('gives no version while a change is under way and a new one after it, also when changes overlap', async () => {
    const admission = createRedisTokenAdmission(client);
    const versions = createRedisCredentialVersions(client);
    const read = async (projectId = 'project_1'): Promise<string | undefined> => (await admission.admit(request({ projectId }))).version;
    const v1 = await read();
    assert.equal(await read(), v1);
    await versions.beforeChange('project_1');
    assert.equal(await read(), undefined);
    const other = await read('project_2');
    assert.ok(other && other !== v1, 'each project has its own version');
    await versions.beforeChange('project_1');
    await versions.afterChange('project_1');
    assert.equal(await read(), undefined, 'the other change is still under way');
    await versions.afterChange('project_1');
    const v2 = await read();
    assert.ok(v2 && v2 !== v1, `a new version after the changes: ${v2} (was ${v1})`);
    assert.equal(await read('project_2'), other);
  });

  it('starts a new version when the change never says it is done (the mark expires)', async () => {
    const admission = createRedisTokenAdmission(client);
    const versions = createRedisCredentialVersions(client);
    const v1 = (await admission.admit(request({ projectId: 'project_1' }))).version;
    await versions.beforeChange('project_1');
    await advanceRedis(29_000);
    assert.equal((await admission.admit(request({ projectId: 'project_1' }))).version, undefined);
    await advanceRedis(1_000);
    const v2 = (await admission.admit(request({ projectId: 'project_1' }))).version;
    assert.ok(v2 && v2 !== v1, `a new version once the mark expired: ${v2} (was ${v1})`);
  });

  it('starts new versions when Redis restarts empty, and refuses while it is down', async () => {
    const admission = createRedisTokenAdmission(client);
    const versions = createRedisCredentialVersions(client);
    const v1 = (await admission.admit(request({ projectId: 'project_1' }))).version;
    await redis.stop();
    const down = await admission.admit(request({ projectId: 'project_1' })).then(() => undefined, (err: unknown) => err);
    assert.ok(down instanceof LimiterUnavailableError);
    const change = await versions.beforeChange('project_1').then(() => undefined, (err: unknown) => err);
    assert.ok(change instanceof LimiterUnavailableError, 'a change is refused when the caches cannot be told');
    await versions.afterChange('project_1');
    await redis.start();
    await Promise.all([redisReady(client), redisReady(admin)]);
    const v2 = (await admission.admit(request({ projectId: 'project_1' }))).version;
    assert.ok(v2 && v2 !== v1, `a new version after the restart: ${v2} (was ${v1})`);
  });

  it('confirms no version handed out before a lost connection, even when Redis comes back holding it (a snapshot, a replica)', async () => {
    const admission = createRedisTokenAdmission(client);
    const app = { key: 'app:app_1', max: 100, windowSec: 60 };
    const v1 = (await admission.admit(request({ projectId: 'project_1' }))).version;
    assert.ok(v1);
    const counted = await admission.admit(request({ projectId: 'project_1', app: { ...app, version: v1 } }));
    assert.deepEqual(counted.app, { ok: true, retryAfterSec: 0 });
    // the connection drops and comes back to a Redis whose version key is the one read before
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.disconnect(true);
    await closed;
    await redisReady(client);
    const again = await admission.admit(request({ projectId: 'project_1', app: { ...app, version: v1 } }));
    assert.equal(again.app, undefined, 'the App ID is not counted under a version of the earlier connection');
    assert.ok(again.version && again.version !== v1, `a version of this connection: ${again.version} (was ${v1})`);
  });
});
