import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import type { ProjectEventInput } from '../core/ports.ts';
import type { MediaSession } from '../../../sdk/app/src/index.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../../../test/helpers/inproc-media.ts';
import { sleep } from '../../../test/e2e/media-helpers.ts';
import { redisKeyspace, type RedisKeyspace } from '../../../test/helpers/redis-keyspace.ts';
import type { MediaNodeDirectory } from '../core/media-placement.ts';
import { createRedisClient } from '../redis/client.ts';
import { createRedisMediaNodeDirectory } from '../redis/media-nodes.ts';

// The media role in this process beside the in-process api and token apps, on their store and
// clock: what it records (presence, project events) is read back through the room service API.
for (const cluster of [false, true]) describe(`media role presence and project events${cluster ? ', in a cluster (Redis media node directory)' : ''}`, () => {
  let server: InProcessPlatform;
  let media: InProcessMedia;
  let redis: RedisKeyspace | undefined;
  let directory: MediaNodeDirectory | undefined;
  let redisClient: Redis | undefined;
  let customer: Customer;
  const recorded: ProjectEventInput[] = [];

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    const events = { record: async (event: ProjectEventInput) => { recorded.push(event); } };
    if (cluster) {
      redis = await redisKeyspace();
      redisClient = createRedisClient(redis.url, () => undefined);
      directory = createRedisMediaNodeDirectory(redisClient, { keyPrefix: `${redis.prefix}:media` });
    }
    media = await startInProcessMedia(server, customer, { ...server.deps, events, mediaNodes: directory });
  });

  after(async () => {
    await media?.close();
    directory?.close();
    redisClient?.disconnect();
    await redis?.dispose();
    await server?.close();
  });

  const rooms = () => server.request(`${server.api}/v1/rtc/rooms`, { method: 'GET', headers: { authorization: customer.auth } });
  const listedCount = async (): Promise<number> =>
    (await rooms()).json<{ rooms: { participants: unknown[] }[] }>().rooms.reduce((n, r) => n + r.participants.length, 0);
  const enter = (room: string, user: string): Promise<MediaSession> => media.enter(room, user);
  const eventsOf = (participantId: string | undefined, type: ProjectEventInput['type']) =>
    recorded.filter((e) => e.type === type && (participantId === undefined || e.data['participant_id'] === participantId));
  const settle = async (check: () => boolean | Promise<boolean>): Promise<void> => {
    for (let i = 0; !(await check()); i++) {
      assert.ok(i < 250, 'the media role recorded it within 5 s');
      await sleep(20);
    }
  };

  it('records room.started and participant.joined, then participant.left with a reason and room.finished, with ids only', async () => {
    const first = await enter('events-room', 'u1');
    const second = await enter('events-room', 'u2');
    await settle(async () => (await listedCount()) === 2);
    await settle(() => eventsOf(second.participantId, 'participant.joined').length === 1);
    // events name the node only where there are several (docs/reference/webhooks.md)
    const node = cluster ? `127.0.0.1:${new URL(media.role.url).port}` : null;
    assert.deepEqual(recorded.filter((e) => e.type === 'room.started').map((e) => e.data), [{ room_id: 'events-room', media_node: node, num_participants: 1 }]);
    const joined = eventsOf(first.participantId, 'participant.joined')[0]!;
    assert.equal(joined.projectId, customer.projectId);
    assert.deepEqual(joined.data, { room_id: 'events-room', participant_id: first.participantId, user_id: 'u1', role: 'speaker', media_node: node, num_participants: 1 });

    await first.close();
    await settle(() => eventsOf(first.participantId, 'participant.left').length === 1);
    assert.equal(eventsOf(first.participantId, 'participant.left')[0]!.data['reason'], 'left');
    assert.equal(eventsOf(first.participantId, 'participant.left')[0]!.data['num_participants'], 1);
    assert.equal(eventsOf(undefined, 'room.finished').length, 0);
    await second.close();
    await settle(() => eventsOf(undefined, 'room.finished').length === 1);
    assert.deepEqual(eventsOf(undefined, 'room.finished')[0]!.data, { room_id: 'events-room', media_node: node, num_participants: 0 });
    await settle(async () => (await listedCount()) === 0);
  });

  it('stops listing the participants of a media node not seen for 30 seconds (a crashed node)', async () => {
    await enter('crash-room', 'u3');
    await settle(async () => (await listedCount()) === 1);
    // the node's heartbeat (every 10 s of real time) would write the advanced time: read at once
    server.clock.advance(31_000);
    assert.equal(await listedCount(), 0);
  });
});
