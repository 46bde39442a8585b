import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedis, startRedisSentinels, type RedisSentinelGroup, type RedisServer } from '../../../test/helpers/redis.ts';
import type { BusEvent } from '../core/ports.ts';
import { createRedisClient, redisReady } from '../redis/client.ts';
import { createRedisBus, type RedisBus } from './redis.ts';

const failOnError = (err: unknown): never => {
  throw err;
};

/** Resolves with the first event the bus delivers that `match` accepts. */
function next(bus: RedisBus, match: (event: BusEvent) => boolean): Promise<BusEvent> {
  return new Promise((resolve) => {
    const off = bus.subscribe((event) => {
      if (!match(event)) return;
      off();
      resolve(event);
    });
  });
}

const revoked = (grantId: string): BusEvent => ({ type: 'grant.revoked', grantId, projectId: 'prj_1', expiresAt: 2_000_000_000 });

describe('Redis event bus (the cluster)', () => {
  let redis: RedisServer;
  const buses: RedisBus[] = [];
  const bus = (): RedisBus => {
    const b = createRedisBus(redis.url, { onHandlerError: failOnError, onError: () => {} });
    buses.push(b);
    return b;
  };

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await redis?.dispose();
  });

  it('delivers an event published on one node to the others once, and to its own subscribers at once', async () => {
    const a = bus();
    const b = bus();
    await Promise.all([a.ready(), b.ready()]);
    const seenByA: BusEvent[] = [];
    a.subscribe((event) => seenByA.push(event));
    const onB = next(b, (e) => e.type === 'grant.revoked' && e.grantId === 'g1');
    await a.publish(revoked('g1'));
    assert.deepEqual(seenByA, [revoked('g1')], 'delivered locally before publish returns');
    assert.deepEqual(await onB, revoked('g1'));
    // a marker from b: when a sees it, a's own g1 would have come back before it if it ever did
    const marker = next(a, (e) => e.type === 'credential.changed');
    await b.publish({ type: 'credential.changed', appId: 'app_1' });
    await marker;
    assert.deepEqual(seenByA, [revoked('g1'), { type: 'credential.changed', appId: 'app_1' }]);
  });

  it('while Redis is down, tells subscribers again and again to re-read the store, once more when it is back, and delivers again', async () => {
    const a = bus();
    const b = bus();
    await Promise.all([a.ready(), b.ready()]);
    const states: string[] = [];
    let cutOffTwice: () => void = () => {};
    const whileCutOff = new Promise<void>((resolve) => {
      cutOffTwice = resolve;
    });
    const resynced = new Promise<void>((resolve) => b.onResync((state) => {
      states.push(state);
      if (states.filter((s) => s === 'cut-off').length === 2) cutOffTwice();
      if (state === 'restored') resolve();
    }));
    await redis.stop();
    await whileCutOff;
    const seenByA: BusEvent[] = [];
    a.subscribe((event) => seenByA.push(event));
    await a.publish(revoked('during-outage'));
    assert.deepEqual(seenByA, [revoked('during-outage')], 'publishing never fails while Redis is down');
    await redis.start();
    await resynced;
    assert.equal(states.at(-1), 'restored');
    assert.ok(states.slice(0, -1).every((s) => s === 'cut-off'), states.join());
    const after = next(b, (e) => e.type === 'grant.revoked' && e.grantId === 'after-outage');
    await a.publish(revoked('after-outage'));
    await after;
  });

  it('ignores and reports what else is published on its channel, and keeps delivering', async () => {
    const reported: unknown[] = [];
    // a channel of its own: the other tests' buses must not hear the forged messages
    const b = createRedisBus(redis.url, { channel: 'test:forged', onHandlerError: (err) => reported.push(err), onError: () => {} });
    buses.push(b);
    await b.ready();
    const seen: BusEvent[] = [];
    b.subscribe((event) => seen.push(event));
    const raw = createRedisClient(redis.url, () => {});
    try {
      await redisReady(raw);
      const forged = [
        'null', 'not json', '{"origin":"x"}',
        JSON.stringify({ origin: 'x', event: { type: 'grant.revoked', grantId: { a: 1 }, projectId: 'prj_1', expiresAt: '9e99' } }),
        JSON.stringify({ origin: 'x', event: { type: 'participant.updated', projectId: 'p', roomId: 'r', participantId: 'q', publish: [-1], subscribe: [], subscribeRoom: true, setAt: 0 } }),
        JSON.stringify({ origin: 'x', event: { type: 'something.else' } }),
      ];
      for (const message of forged) await raw.publish('test:forged', message);
      const valid = next(b, (e) => e.type === 'grant.revoked' && e.grantId === 'after-garbage');
      await raw.publish('test:forged', JSON.stringify({ origin: 'another-node', event: revoked('after-garbage') }));
      await valid;
      assert.deepEqual(seen, [revoked('after-garbage')], 'nothing forged reached the subscribers');
      assert.equal(reported.length, forged.length);
    } finally {
      raw.disconnect();
    }
  });
});

describe('Redis event bus through Sentinel (docs/operations/scale-out.md, "Redis Sentinel")', () => {
  let group: RedisSentinelGroup;
  const buses: RedisBus[] = [];
  const bus = (): RedisBus => {
    const b = createRedisBus({
      sentinels: group.sentinels, masterName: group.masterName, password: group.password, sentinelPassword: group.sentinelPassword,
    }, { onHandlerError: failOnError, onError: () => {} });
    buses.push(b);
    return b;
  };

  before(async () => {
    group = await startRedisSentinels();
  });
  after(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await group?.dispose();
  });

  it('when the master dies, re-reads the store while no master answers, once more on the promoted replica, and delivers through it', async () => {
    const a = bus();
    const b = bus();
    await Promise.all([a.ready(), b.ready()]);
    const before = next(b, (e) => e.type === 'grant.revoked' && e.grantId === 'before-failover');
    await a.publish(revoked('before-failover'));
    await before;

    // only what follows the kill counts: a loaded machine can drop and restore a connection before it
    const states: string[] = [];
    let killed = false;
    const restored = new Promise<void>((resolve) => b.onResync((state) => {
      if (!killed) return;
      states.push(state);
      if (state === 'restored') resolve();
    }));
    killed = true;
    const old = await group.killMaster();
    await restored;
    assert.equal(states[0], 'cut-off', 'the store was re-read while cut off');
    // the old master is dead (its port resets every connection): the subscription is on the promoted replica
    assert.notEqual(await group.promoted(old), old);
    // each sentinel announces the new master in turn, and each announcement may drop the connection
    // once more (docs/operations/scale-out.md): the bus is live again once they are done
    while (!b.live()) await new Promise<void>((resolve) => setTimeout(resolve, 50));
    const afterFailover = next(b, (e) => e.type === 'grant.revoked' && e.grantId === 'after-failover');
    await a.publish(revoked('after-failover'));
    await afterFailover;
  });
});
