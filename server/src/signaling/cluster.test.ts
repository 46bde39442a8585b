/**
 * Signaling nodes of a cluster, composed in this process on one real Redis (and one SQLite data
 * directory for the store): every node serves every room (docs/operations/scale-out.md,
 * "Signaling"). Requests and streams go over HTTP to each node's own listener.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../config.ts';
import { createPasswordHasher } from '../core/password.ts';
import { composeServices, type Services } from '../main/compose.ts';
import { createSignalingApp } from './app.ts';
import { createRedisRoomState } from './redis-rooms.ts';
import { createSignalingService } from './service.ts';
import { defaultSignalingSettings, type SignalingSettings } from './settings.ts';
import { projectCutoffAt } from '../customers/project-cutoff.ts';
import { roomCutoffAt } from '../rooms/cutoff.ts';
import { issueToken } from '../tokens/issue.ts';
import { revokeByHandle } from '../tokens/revoke.ts';
import { request } from '../../../test/helpers/http.ts';
import { openEventStream, type EventStream as Stream, type StreamFrame as Frame } from '../../../test/helpers/signaling.ts';
import { startRedis, type RedisServer } from '../../../test/helpers/redis.ts';

const ISSUER = 'rtc-platform';
const PROJECT = `prj_${'A'.repeat(22)}`;
// a session without a stream stays for the grace after its join: on a loaded machine the few requests
// a test makes between a join and that session's first message can take more than a second
const GRACE_MS = 3000;
const SETTINGS: SignalingSettings = { ...defaultSignalingSettings(ISSUER), presenceGraceMs: GRACE_MS, maxSessionsPerRoom: 3 };

interface SignalingNode {
  readonly url: string;
  readonly deps: Services;
  /** Ends the node without a goodbye: its streams drop, its sessions stay joined in Redis. */
  stop(): Promise<void>;
}

describe('signaling on several nodes sharing Redis', () => {
  let redis: RedisServer;
  let dataDir: string;
  let a: SignalingNode;
  let b: SignalingNode;
  const nodes: SignalingNode[] = [];
  const streams: Stream[] = [];
  let roomCounter = 0;

  const startNode = async (): Promise<SignalingNode> => {
    const config = loadConfig({ RTC_DATA_DIR: dataDir, RTC_ROLES: 'signaling', REDIS_URL: redis.url });
    const deps = await composeServices(config, {
      onBusError: (err) => { throw err; }, passwords: createPasswordHasher({ N: 1024, r: 8, p: 1 }),
    });
    const rooms = createRedisRoomState({ target: redis.url, settings: SETTINGS, clock: deps.clock, onError: () => {}, sweepMs: 50 });
    await rooms.ready();
    const service = createSignalingService(deps, SETTINGS, { rooms });
    const { app, endStreams } = createSignalingApp(service, { logger: pino({ level: 'silent' }) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    let stopped = false;
    const node: SignalingNode = {
      url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      deps,
      async stop() {
        if (stopped) return;
        stopped = true;
        service.close();
        endStreams();
        await app.close();
        await deps.close();
      },
    };
    nodes.push(node);
    return node;
  };

  before(async () => {
    redis = await startRedis();
    dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-signaling-cluster-'));
    a = await startNode();
    b = await startNode();
  });
  after(async () => {
    for (const s of streams) s.close();
    for (const node of nodes) await node.stop();
    await redis.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const newRoom = (): string => `room-${++roomCounter}`;

  /** A signaling token and its revocation handle, issued on node A's services. */
  const token = async (room: string, user: string, projectId = PROJECT): Promise<{ token: string; handle: string }> => {
    // no media node runs here: the token names the configured one
    const issued = await issueToken({ ...a.deps, mediaNodes: undefined }, { issuer: ISSUER, sfuHost: 'localhost', sfuPort: 7880, signalingUrl: a.url }, {
      projectId, appId: `app_${'B'.repeat(22)}`, publisher: true, subscriber: true, maxTtlSeconds: 3600,
    }, { room_id: room, user_id: user, role: 'participant', signaling: true });
    return { token: issued.signaling!.token, handle: issued.media.revocation_handle };
  };

  const join = async (node: SignalingNode, tok: string): Promise<{ last_event_id: string; participants: { user_id: string }[] }> => {
    const res = await request(`${node.url}/v1/signaling/join`, { body: { token: tok } });
    assert.equal(res.status, 200, res.text);
    return res.json();
  };

  const send = async (node: SignalingNode, tok: string, data: unknown, to?: string): Promise<string> => {
    const res = await request(`${node.url}/v1/signaling/messages`, { body: { token: tok, data, ...(to !== undefined && { to }) } });
    assert.equal(res.status, 200, res.text);
    return res.json<{ id: string }>().id;
  };

  const listen = async (node: SignalingNode, tok: string, lastEventId?: string): Promise<Stream> => {
    const stream = await openEventStream(node.url, tok, lastEventId);
    streams.push(stream);
    await stream.waitFor((f) => f.event === 'ready', 'ready');
    return stream;
  };

  const participants = async (node: SignalingNode, tok: string): Promise<string[]> => {
    const res = await request(`${node.url}/v1/signaling/participants`, { headers: { authorization: `Bearer ${tok}` } });
    assert.equal(res.status, 200, res.text);
    return res.json<{ participants: { user_id: string }[] }>().participants.map((p) => p.user_id);
  };

  const message = (n: number) => (f: Frame): boolean => f.event === 'message' && (f.data['data'] as { n?: number }).n === n;

  it('delivers a message sent on one node to a stream on the other, both ways, in one order', async () => {
    const room = newRoom();
    const alice = await token(room, 'alice');
    const bob = await token(room, 'bob');
    await join(a, alice.token);
    const joined = await join(a, bob.token);
    assert.deepEqual(joined.participants.map((p) => p.user_id), ['alice', 'bob']);
    const aliceStream = await listen(a, alice.token);
    const bobStream = await listen(b, bob.token, joined.last_event_id);

    const id1 = await send(a, alice.token, { n: 1 });
    assert.equal((await bobStream.waitFor(message(1), 'message 1 on node B')).id, id1);
    const id2 = await send(b, bob.token, { n: 2 });
    assert.equal((await aliceStream.waitFor(message(2), 'message 2 on node A')).id, id2);
    const [epoch1, seq1] = id1.split('.');
    const [epoch2, seq2] = id2.split('.');
    assert.equal(epoch1, epoch2, 'one log for the room, whichever node appended');
    assert.equal(Number(seq2), Number(seq1) + 1);
    assert.deepEqual(await participants(b, alice.token), ['alice', 'bob']);
    // the sender does not receive its own message
    assert.equal(aliceStream.frames.some(message(1)), false);
  });

  it('resumes a stream on another node from its Last-Event-ID with nothing missed, then live', async () => {
    const room = newRoom();
    const alice = await token(room, 'alice');
    const bob = await token(room, 'bob');
    await join(a, alice.token);
    await join(b, bob.token);
    const first = await listen(b, bob.token);
    const id1 = await send(a, alice.token, { n: 1 });
    await first.waitFor(message(1), 'message 1');
    first.close();
    await first.ended;
    const missed = [await send(a, alice.token, { n: 2 }), await send(b, alice.token, { n: 3 })];

    const resumed = await listen(a, bob.token, id1);
    const before = resumed.frames.filter((f) => f.event !== 'ready');
    assert.deepEqual(before.map((f) => f.id), missed);
    assert.equal(resumed.frames.find((f) => f.event === 'ready')!.data['replayed'], 2);
    await send(b, alice.token, { n: 4 });
    await resumed.waitFor(message(4), 'the live message after the replay');
  });

  it('a killed node: its sessions leave after the presence grace, and a reader resumes on another node with nothing missed', async () => {
    const c = await startNode();
    const room = newRoom();
    const alice = await token(room, 'alice');
    const carol = await token(room, 'carol');
    const dave = await token(room, 'dave');
    await join(a, alice.token);
    await join(c, carol.token);
    await join(c, dave.token);
    const watcher = await listen(a, alice.token);
    await listen(c, carol.token);
    const daveOnC = await listen(c, dave.token);
    const id1 = await send(a, alice.token, { n: 1 });
    await daveOnC.waitFor(message(1), 'message 1 on node C');

    await c.stop();
    const stoppedAt = Date.now();
    const missed = await send(a, alice.token, { n: 2 });
    const daveOnB = await listen(b, dave.token, id1);
    assert.deepEqual(daveOnB.frames.filter((f) => f.event !== 'ready').map((f) => f.id), [missed]);

    const leave = await watcher.waitFor((f) => f.event === 'leave', 'carol leaving', GRACE_MS * 5);
    // the lease runs the grace from the node's last renewal (renewed every third of the grace)
    const afterMs = Date.now() - stoppedAt;
    assert.ok(afterMs >= (GRACE_MS * 2) / 3 - 50, `left ${afterMs} ms after the node stopped, before the grace`);
    assert.deepEqual({ user: leave.data['user_id'], reason: leave.data['reason'] }, { user: 'carol', reason: 'timeout' });
    // dave resumed within the grace: still present
    assert.deepEqual(await participants(a, alice.token), ['alice', 'dave']);
  });

  it('delivers a direct message across nodes to its recipient only', async () => {
    const room = newRoom();
    const alice = await token(room, 'alice');
    const bob = await token(room, 'bob');
    const carol = await token(room, 'carol');
    await join(a, alice.token);
    await join(a, bob.token);
    await join(b, carol.token);
    const bobStream = await listen(b, bob.token);
    const carolStream = await listen(b, carol.token);
    const carolOnA = await listen(a, carol.token);

    const direct = await send(a, alice.token, { n: 1 }, 'bob');
    const got = await bobStream.waitFor(message(1), 'the direct message');
    assert.equal(got.id, direct);
    assert.equal(got.data['to'], 'bob');
    await send(a, alice.token, { n: 2 });
    for (const s of [carolStream, carolOnA]) {
      await s.waitFor(message(2), 'the room message');
      assert.equal(s.frames.some(message(1)), false, 'a direct message reached someone else');
    }
    const res = await request(`${b.url}/v1/signaling/messages`, { body: { token: alice.token, data: {}, to: 'nobody' } });
    assert.equal(res.status, 404);
  });

  it('ends the streams of a revoked session on both nodes, and the room sees one leave', async () => {
    const room = newRoom();
    const alice = await token(room, 'alice');
    const eve = await token(room, 'eve');
    const frank = await token(room, 'frank');
    await join(a, alice.token);
    await join(b, eve.token);
    await join(b, frank.token);
    const watcher = await listen(a, frank.token);
    const eveOnA = await listen(a, eve.token);
    const eveOnB = await listen(b, eve.token);

    await revokeByHandle(a.deps, PROJECT, eve.handle);
    for (const s of [eveOnA, eveOnB]) {
      await s.waitFor((f) => f.event === 'revoked', 'revoked', 1000);
      await s.ended;
    }
    await watcher.waitFor((f) => f.event === 'leave', 'eve leaving');
    await send(b, alice.token, { n: 1 });
    await watcher.waitFor(message(1), 'the message after');
    const leaves = watcher.frames.filter((f) => f.event === 'leave');
    assert.deepEqual(leaves.map((f) => [f.data['user_id'], f.data['reason']]), [['eve', 'revoked']]);
    const refused = await request(`${b.url}/v1/signaling/join`, { body: { token: eve.token } });
    assert.equal(refused.status, 401);
  });

  it('ends on every node the sessions of an archived project, streaming or not', async () => {
    const archived = `prj_${Buffer.alloc(16, 7).toString('base64url')}`;
    const room = newRoom();
    const carl = await token(room, 'carl', archived);
    const dora = await token(room, 'dora', archived);
    const erin = await token(room, 'erin', archived);
    await join(a, carl.token);
    await join(b, dora.token);
    await join(a, erin.token);
    const carlOnB = await listen(b, carl.token);
    const doraOnA = await listen(a, dora.token);

    const cutoff = projectCutoffAt(archived, Math.floor(Date.now() / 1000));
    await a.deps.store.insertProjectCutoff(cutoff);
    await a.deps.bus.publish({ type: 'project.archived', ...cutoff });
    for (const s of [carlOnB, doraOnA]) {
      await s.waitFor((f) => f.event === 'revoked', 'revoked', 1000);
      await s.ended;
    }
    // erin had no stream: her session goes too, and the room is gone
    const observer = createRedisRoomState({ target: redis.url, settings: SETTINGS, clock: a.deps.clock, onError: () => {}, sweepMs: 60_000 });
    try {
      await observer.ready();
      for (let attempt = 0; (await observer.participants(archived, room)).length > 0; attempt++) {
        assert.ok(attempt < 100, 'the archived sessions are still present');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      observer.close();
    }
    // a revoked stream ends before its own user's leave; another user's, processed by another node
    // first, may come just before the revocation reaches this stream's node
    for (const [stream, user] of [[carlOnB, 'carl'], [doraOnA, 'dora']] as const) {
      const own = stream.frames.filter((f) => f.event === 'leave' && (f.data as { user_id?: string }).user_id === user);
      assert.deepEqual(own, [], `${user}'s revoked stream ends before ${user}'s leave`);
    }
  });

  it('removes a user from the room on every node, also a session joined through a node that is gone', async () => {
    const c = await startNode();
    const room = newRoom();
    const alice = await token(room, 'alice');
    const mallory = await token(room, 'mallory');
    await join(a, alice.token);
    // joined through C, which then stops: no running node joined this session
    await join(c, mallory.token);
    await c.stop();
    const watcher = await listen(a, alice.token);
    const malloryOnB = await listen(b, mallory.token);

    const stored = await a.deps.store.insertRoomCutoff(roomCutoffAt(PROJECT, room, 'mallory', Math.floor(Date.now() / 1000)));
    await a.deps.bus.publish({ type: 'room.cut_off', ...stored });
    await malloryOnB.waitFor((f) => f.event === 'revoked', 'revoked', 1000);
    await malloryOnB.ended;
    const leave = await watcher.waitFor((f) => f.event === 'leave', 'mallory leaving');
    assert.deepEqual([leave.data['user_id'], leave.data['reason']], ['mallory', 'revoked']);
    assert.deepEqual(await participants(b, alice.token), ['alice']);
  });

  it('counts the room-size limit and the streams per session across nodes', async () => {
    const room = newRoom();
    const users = await Promise.all(['u1', 'u2', 'u3', 'u4'].map((u) => token(room, u)));
    await join(a, users[0]!.token);
    await join(b, users[1]!.token);
    await join(a, users[2]!.token);
    for (const node of [a, b]) {
      const full = await request(`${node.url}/v1/signaling/join`, { body: { token: users[3]!.token } });
      assert.equal(full.status, 409, full.text);
      assert.match(full.text, /the room is full/);
    }

    // a fifth stream of one session, wherever it opens, ends the oldest
    const opened: Stream[] = [];
    for (const node of [a, b, a, b]) opened.push(await listen(node, users[0]!.token));
    await listen(b, users[0]!.token);
    await opened[0]!.ended;
    await send(b, users[1]!.token, { n: 1 });
    for (const s of opened.slice(1)) await s.waitFor(message(1), 'the message on a stream that stays open');
  });

  it('answers 503 unavailable with Retry-After while Redis is down, ends the streams, and serves again once it is back', async () => {
    const room = newRoom();
    const alice = await token(room, 'alice');
    await join(a, alice.token);
    const stream = await listen(b, alice.token);
    await redis.stop();
    await stream.ended;
    for (const node of [a, b]) {
      const res = await request(`${node.url}/v1/signaling/join`, { body: { token: alice.token } });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json<{ error: string }>().error, 'unavailable');
      assert.equal(res.headers['retry-after'], '1');
    }
    await redis.start();
    // Redis came back empty: the session joins again
    for (let attempt = 0; ; attempt++) {
      const res = await request(`${b.url}/v1/signaling/join`, { body: { token: alice.token } });
      if (res.status === 200) break;
      assert.equal(res.status, 503, res.text);
      assert.ok(attempt < 100, 'the node never served again');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await listen(a, alice.token);
  });
});
