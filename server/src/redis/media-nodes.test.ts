import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../test/helpers/redis.ts';
import { ApiError } from '../core/errors.ts';
import { placeRoom, type MediaNode } from '../core/media-placement.ts';
import { createRedisClient, redisReady } from './client.ts';
import { createRedisMediaNodeDirectory, NODE_LIVENESS_MS } from './media-nodes.ts';
import { placementContract } from '../../../test/helpers/placement-contract.ts';

const node = (i: number): MediaNode => ({ id: `10.0.0.${i}:7880`, host: `10.0.0.${i}`, port: 7880 });
const ROOMS = Array.from({ length: 200 }, (_, i) => `room-${i}`);

describe('media nodes in Redis (placement of rooms for every token node)', () => {
  let redis: RedisServer;
  const clients: Redis[] = [];
  let now = Date.now();
  let prefix = 0;
  // errors of the heartbeats; none while Redis runs (the last test stops it on purpose)
  const errors: unknown[] = [];
  const onError = (err: unknown): void => {
    errors.push(err);
  };

  const directories = async (count: number): Promise<ReturnType<typeof createRedisMediaNodeDirectory>[]> => {
    const keyPrefix = `test:${++prefix}`;
    const made = [];
    for (let i = 0; i < count; i++) {
      const client = createRedisClient(redis.url, () => {});
      clients.push(client);
      await redisReady(client);
      made.push(createRedisMediaNodeDirectory(client, { keyPrefix, nowMs: () => now, capacity: 100_000 }));
    }
    return made;
  };

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await redis?.dispose();
  });

  it('sends every participant of a room to one node, whichever token node asks', async () => {
    const [a, b, media] = await directories(3);
    const withdraw = await Promise.all([1, 2, 3].map((i) => media!.announce(node(i), onError)));
    await media!.refresh();
    await a!.refresh();
    await b!.refresh();
    assert.equal(a!.nodes().length, 3);
    const used = new Set<string>();
    for (const room of ROOMS) {
      const first = await a!.place('prj_1', room, 'user-1', 600);
      assert.deepEqual(await b!.place('prj_1', room, 'user-1', 600), first, room);
      assert.deepEqual(await a!.place('prj_1', room, 'user-1', 600), first, room);
      used.add(first.id);
    }
    assert.equal(used.size, 3, 'rooms are spread over every live node');
    await Promise.all(withdraw.map((w) => w()));
    assert.deepEqual(errors, []);
  });

  it('keeps a live room on its node when a node is added, and places new rooms by rendezvous hashing', async () => {
    const [token, media] = await directories(2);
    const withdraw = [await media!.announce(node(1), onError), await media!.announce(node(2), onError)];
    await token!.refresh();
    const before = new Map<string, string>();
    for (const room of ROOMS) before.set(room, (await token!.place('prj_1', room, 'user-1', 600)).id);
    withdraw.push(await media!.announce(node(3), onError));
    await token!.refresh();
    assert.equal(token!.nodes().length, 3);
    for (const room of ROOMS) assert.equal((await token!.place('prj_1', room, 'user-1', 600)).id, before.get(room), `${room} stays`);
    const all = [node(1), node(2), node(3)];
    let onNew = 0;
    for (let i = 0; i < 100; i++) {
      const placed = await token!.place('prj_1', `new-${i}`, 'user-1', 600);
      assert.equal(placed.id, placeRoom(all, 'prj_1', `new-${i}`)!.id);
      if (placed.id === node(3).id) onNew += 1;
    }
    assert.ok(onNew > 0, 'the new node receives new rooms');
    await Promise.all(withdraw.map((w) => w()));
    assert.deepEqual(errors, []);
  });

  it('moves the rooms of a node that stopped announcing itself, and only those', async () => {
    const [token] = await directories(1);
    const raw = clients.at(-1)!;
    // what each live node's heartbeat does: live until the given time
    const beat = (n: MediaNode): Promise<number> => raw.zadd(`test:${prefix}:nodes`, now + NODE_LIVENESS_MS, JSON.stringify([n.id, n.host, n.port]));
    await Promise.all([beat(node(1)), beat(node(2)), beat(node(3))]);
    await token!.refresh();
    const before = new Map<string, string>();
    for (const room of ROOMS) before.set(room, (await token!.place('prj_1', room, 'user-1', 600)).id);
    // node 3 is killed: nodes 1 and 2 keep announcing themselves, it does not
    now += NODE_LIVENESS_MS + 1;
    await Promise.all([beat(node(1)), beat(node(2))]);
    await token!.refresh();
    assert.deepEqual(token!.nodes().map((n) => n.id).sort(), [node(1).id, node(2).id]);
    for (const room of ROOMS) {
      const placed = (await token!.place('prj_1', room, 'user-1', 600)).id;
      if (before.get(room) === node(3).id) assert.equal(placed, placeRoom([node(1), node(2)], 'prj_1', room)!.id, room);
      else assert.equal(placed, before.get(room), `${room} stays`);
    }
  });

  it('withdraws a node that stops (it receives no new rooms), and refuses with 503 when no node is live', async () => {
    const [token, media] = await directories(2);
    const withdraw = await media!.announce(node(1), onError);
    await token!.refresh();
    assert.equal((await token!.place('prj_1', 'room-1', 'user-1', 600)).id, node(1).id);
    await withdraw();
    assert.deepEqual(errors, []);
    await token!.refresh();
    assert.deepEqual(token!.nodes(), []);
    await assert.rejects(token!.place('prj_1', 'room-1', 'user-1', 600), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.code, 'unavailable');
      assert.equal(err.status, 503);
      return true;
    });
  });

  it('never places a room on a node withdrawn after the token node last read the list (a drain), nor on one whose lease ran out', async () => {
    const [token, media] = await directories(2);
    const raw = clients.at(-1)!;
    const withdraw = await Promise.all([1, 2].map((i) => media!.announce(node(i), onError)));
    await token!.refresh();
    const onFirst = ROOMS.filter((room) => placeRoom([node(1), node(2)], 'prj_1', room)!.id === node(1).id);
    for (const room of onFirst.slice(0, 20)) assert.equal((await token!.place('prj_1', room, 'user-1', 600)).id, node(1).id);
    // node 1 drains: withdrawn in Redis, still in the token node's list (read up to a second ago)
    await withdraw[0]!();
    assert.equal(token!.nodes().length, 2);
    for (const room of onFirst.slice(0, 40)) assert.equal((await token!.place('prj_1', room, 'user-1', 600)).id, node(2).id, room);

    // node 3 is killed: its last announcement lasts NODE_LIVENESS_MS; the list read before still names it
    await raw.zadd(`test:${prefix}:nodes`, now + NODE_LIVENESS_MS, JSON.stringify([node(3).id, node(3).host, node(3).port]));
    await token!.refresh();
    const onThird = ROOMS.map((room) => `killed-${room}`).filter((room) => placeRoom([node(2), node(3)], 'prj_1', room)!.id === node(3).id).slice(0, 20);
    for (const room of onThird) assert.equal((await token!.place('prj_1', room, 'user-1', 600)).id, node(3).id, room);
    now += NODE_LIVENESS_MS + 1;
    await raw.zadd(`test:${prefix}:nodes`, now + NODE_LIVENESS_MS, JSON.stringify([node(2).id, node(2).host, node(2).port]));
    assert.equal(token!.nodes().length, 2, 'the list still names the killed node');
    for (const room of onThird) assert.equal((await token!.place('prj_1', room, 'user-1', 600)).id, node(2).id, room);
    await withdraw[1]!();
    assert.deepEqual(errors, []);
  });

  it('refuses with 503 unavailable, not a placement of its own, while Redis is down', async () => {
    const [token, media] = await directories(2);
    const withdraw = await media!.announce(node(1), onError);
    await token!.refresh();
    await redis.stop();
    try {
      await assert.rejects(token!.place('prj_1', 'room-down', 'user-1', 600), (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 'unavailable');
        assert.equal(err.retryAfterSec, 1);
        return true;
      });
    } finally {
      await redis.start();
    }
    await Promise.all(clients.map((c) => redisReady(c)));
    await withdraw();
  });
});

describe('placement by load in Redis', () => {
  let redis: RedisServer;
  const clients: Redis[] = [];
  let prefix = 0;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await redis?.dispose();
  });
  placementContract(async (policy, nowMs) => {
    const client = createRedisClient(redis.url, () => {});
    clients.push(client);
    await redisReady(client);
    return createRedisMediaNodeDirectory(client, { ...policy, nowMs, keyPrefix: `load:${++prefix}` });
  });
});
