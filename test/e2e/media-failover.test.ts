import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { FailoverCall } from '../helpers/media-failover.ts';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';

const ROOMS = 2;
const PER_ROOM = 2;
/** A killed node leaves the directory NODE_LIVENESS_MS (6 s) after its last announcement; the apps then move within a second. */
const KILL_MOVE_TIMEOUT_MS = 20_000;
const DRAIN_MOVE_TIMEOUT_MS = 10_000;

// docs/operations/scale-out.md, "Drain and failure of a media node": app SDK clients in rooms of
// a cluster (PostgreSQL, Redis, two token nodes, two media nodes) publish and receive; a media
// node is killed, then the one they moved to is drained, and each time they end up on a live node
// with frames flowing both ways.
describe('media nodes that go away (a cluster on PostgreSQL and Redis)', () => {
  let postgres: Postgres | undefined;
  let redis: RedisServer | undefined;
  let env: Record<string, string> = {};
  const servers: RunningServer[] = [];
  const dirs: string[] = [];
  let tokenNodes: RunningServer[] = [];
  let customer: Customer;
  let call: FailoverCall | undefined;

  const node = async (roles: readonly string[], extra: Record<string, string> = {}): Promise<RunningServer> => {
    const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-failover-'));
    dirs.push(dataDir);
    const server = await startServer({ dataDir, roles, env: { RTC_MEDIA_PUBLIC_HOST: '127.0.0.1', ...env, ...extra } });
    servers.push(server);
    return server;
  };
  const mediaNodeOf = (server: RunningServer): string => new URL(server.urls['media']!).host;

  let issued = 0;
  /** Where each token sent its app, and when it was answered. */
  const placements: { at: number; node: string }[] = [];
  const issue = async (room: string, user: string): Promise<TokenResponse> => {
    // the token nodes in turn: neither may send an app back to a node that is gone
    const server = tokenNodes[issued++ % tokenNodes.length]!;
    const res = await request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'speaker', publish_streams: Array.from({ length: PER_ROOM }, (_, i) => i + 1), subscribe_room: true },
    });
    assert.equal(res.status, 200, res.text);
    const token = res.json<TokenResponse>();
    placements.push({ at: performance.now(), node: `${token.media.sfu_host}:${token.media.sfu_port}` });
    return token;
  };

  /** Resolves once every token node's `rtc_media_nodes_live` gauge reads `count`. */
  const liveNodesSeen = async (count: number): Promise<void> => {
    for (const server of tokenNodes) {
      for (let attempt = 0; ; attempt++) {
        const res = await request(`${server.urls['admin']}/metrics`);
        if (sampleValue(parsePrometheusText(res.text), 'rtc_media_nodes_live') === count) break;
        assert.ok(attempt < 400, `${server.token} never saw ${count} live media nodes`);
        await new Promise<void>((resolve) => setTimeout(resolve, 50));
      }
    }
  };

  /** Rooms the cluster places on `media` (a probe token places each). */
  const roomsOn = async (media: RunningServer, prefix: string): Promise<string[]> => {
    const rooms: string[] = [];
    for (let i = 0; rooms.length < ROOMS; i++) {
      assert.ok(i < 100, `no room placed on ${mediaNodeOf(media)}`);
      const token = await issue(`${prefix}-${i}`, 'probe');
      if (`${token.media.sfu_host}:${token.media.sfu_port}` === mediaNodeOf(media)) rooms.push(`${prefix}-${i}`);
    }
    return rooms;
  };

  before(async () => {
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    env = { DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url, RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000' };
    const [a, b] = await Promise.all([
      node(['api', 'token'], { RTC_ADMIN_PORT: '0' }), node(['api', 'token'], { RTC_ADMIN_PORT: '0' }), node(['media']), node(['media']),
    ]);
    tokenNodes = [a!, b!];
    customer = await createCustomer(a!);
    await liveNodesSeen(2);
  });

  after(async () => {
    await call?.close();
    await Promise.all(servers.map((s) => s.stop()));
    await redis?.dispose();
    await postgres?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('moves every app of a killed media node to the live one, where frames flow both ways again; then a drain moves them faster', async () => {
    const [killed, survivor] = servers.filter((s) => s.urls['media'] !== undefined) as [RunningServer, RunningServer];
    const rooms = await roomsOn(killed, 'kill');
    call = await FailoverCall.start({ rooms, perRoom: PER_ROOM, issue });
    assert.deepEqual(call.nodes(), new Set([mediaNodeOf(killed)]));
    await call.flowingAfter(performance.now(), '', 5000);

    // SIGKILL: no going_away, the sockets drop; the node leaves the directory when its lease runs out
    const killedAt = performance.now();
    killed.process.kill('SIGKILL');
    const afterKill = await call.flowingAfter(killedAt, mediaNodeOf(killed), KILL_MOVE_TIMEOUT_MS);
    assert.deepEqual(call.nodes(), new Set([mediaNodeOf(survivor)]), 'every app is on the live node');
    for (const client of call.clients) {
      assert.equal(client.session.state, 'connected');
      const back = client.events.filter((e) => e.type === 'reconnected');
      assert.equal(back.length, 1, `${client.user}: one reconnection`);
      assert.deepEqual(back[0], { type: 'reconnected', participantId: client.session.participantId, moved: true, mediaNode: mediaNodeOf(survivor) });
      assert.ok(client.events.some((e) => e.type === 'reconnecting' && e.moving), `${client.user} moved rather than backing off`);
      assert.equal(client.stream.active, true, 'the same stream, published again');
    }

    // a third media node joins; the token nodes' lists then hold it and the survivor only
    const third = await node(['media']);
    await liveNodesSeen(2);
    for (const client of call.clients) client.events.length = 0;
    const drainedAt = performance.now();
    const stopped = survivor.stop();
    const afterDrain = await call.flowingAfter(drainedAt, mediaNodeOf(survivor), DRAIN_MOVE_TIMEOUT_MS);
    assert.deepEqual(await stopped, { code: 0, signal: null });
    assert.deepEqual(call.nodes(), new Set([mediaNodeOf(third)]));
    for (const client of call.clients) {
      assert.equal(client.events[0]?.type === 'reconnecting' && client.events[0].error.code, 'going_away');
      const back = client.events.filter((e) => e.type === 'reconnected');
      assert.deepEqual(back, [{ type: 'reconnected', participantId: client.session.participantId, moved: true, mediaNode: mediaNodeOf(third) }],
        `${client.user}: straight to the third node, never back to the drained one`);
    }
    const sinceDrain = placements.filter((p) => p.at > drainedAt);
    assert.ok(sinceDrain.length >= call.clients.length);
    assert.deepEqual(new Set(sinceDrain.map((p) => p.node)), new Set([mediaNodeOf(third)]), 'no token named the drained node');
    assert.ok(Math.max(...afterDrain) < Math.max(...afterKill), `a drain (${Math.max(...afterDrain)} ms) moves faster than a kill (${Math.max(...afterKill)} ms)`);
  });
});
