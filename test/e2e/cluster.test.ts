import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RtcRoom, TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { SignalingClient } from '../../sdk/app/src/signaling.ts';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { basic as basicAuth, request, type HttpResult } from '../helpers/http.ts';
import { startServer, type RunningServer, type StartOptions } from '../helpers/platform.ts';
import { pool } from '../helpers/pool.ts';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { collect } from '../helpers/signaling.ts';
import { issueFollowingRetryAfter, mediaNodesSeen, startOnFreePort, tally } from './cluster-helpers.ts';
import { join, nextEvent } from '../helpers/media-session.ts';

// trust authentication and a password-less Redis accept any password: they are there to show that none reaches the logs
const DB_PASSWORD = 'cluster-db-pa55word';
const HIGH_ADDRESS_LIMIT = { RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000' };

/** What differs between the two deployments under test. */
interface Deployment {
  readonly name: string;
  /** PostgreSQL and Redis, each node with its own data directory; else SQLite in one shared data directory. */
  readonly cluster: boolean;
}

// The deployment of docs/operations/scale-out.md: two api/token nodes, two media nodes and one
// signaling node on one PostgreSQL and one Redis, each with its own data directory, all started
// at the same moment on an empty database. The same processes on the embedded default (one media
// node, every process on one data directory) keep the guarantees that do not need Redis.
for (const deployment of [
  { name: 'a cluster on PostgreSQL and Redis', cluster: true },
  { name: 'processes of the embedded default on one data directory', cluster: false },
] satisfies Deployment[]) {
describe(deployment.name, () => {
  const { cluster } = deployment;
  let postgres: Postgres | undefined;
  let redis: RedisServer | undefined;
  let sharedEnv: Record<string, string> = {};
  let a: RunningServer;
  let b: RunningServer;
  let media1: RunningServer;
  let media2: RunningServer;
  let signaling: RunningServer;
  let customer: Customer;
  const dirs: string[] = [];
  const sessions: MediaSession[] = [];

  const node = (roles: readonly string[], env: Record<string, string> = {}): Promise<RunningServer> => {
    const dataDir = !cluster && dirs[0] !== undefined ? dirs[0] : mkdtempSync(joinPath(tmpdir(), 'rtc-cluster-'));
    if (!dirs.includes(dataDir)) dirs.push(dataDir);
    const options: StartOptions = { dataDir, roles, env: { RTC_MEDIA_PUBLIC_HOST: '127.0.0.1', ...HIGH_ADDRESS_LIMIT, ...sharedEnv, ...env } };
    return startServer(options);
  };

  const issueOn = async (server: RunningServer, body: Record<string, unknown>, who: Customer = customer): Promise<TokenResponse> => {
    const res = await request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: who.auth }, body });
    assert.equal(res.status, 200, res.text);
    return res.json<TokenResponse>();
  };
  const issueWhenAvailable = (server: RunningServer, body: Record<string, unknown>): Promise<TokenResponse> =>
    issueFollowingRetryAfter(server, customer, body);
  const nodeOnFreePort = (roles: readonly string[], portVariable: string, env: Record<string, string> = {}) =>
    startOnFreePort((port) => node(roles, { ...env, [portVariable]: String(port) }));

  before(async () => {
    if (cluster) {
      [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
      const databaseUrl = (await postgres.createDatabase()).replace('postgres@', `postgres:${DB_PASSWORD}@`);
      sharedEnv = { DATABASE_URL: databaseUrl, REDIS_URL: redis.url };
    }
    // the nodes whose address others announce start first, on the ports they are then known by
    const signalingNode = await nodeOnFreePort(['signaling'], 'RTC_SIGNALING_PORT');
    const signalingUrl = `http://127.0.0.1:${signalingNode.port}`;
    let mediaNodes: Promise<RunningServer>[];
    if (cluster) {
      mediaNodes = [node(['media']), node(['media'])];
    } else {
      // one media node, at a port the token nodes announce
      const mediaNode = await nodeOnFreePort(['media'], 'RTC_MEDIA_PORT');
      sharedEnv = { RTC_MEDIA_PUBLIC_PORT: String(mediaNode.port) };
      mediaNodes = [Promise.resolve(mediaNode.server)];
    }
    // the token nodes' admin listeners tell how many media nodes each has seen
    const tokenEnv = { RTC_SIGNALING_PUBLIC_URL: signalingUrl, RTC_ADMIN_PORT: '0' };
    const started = await Promise.all([
      node(['api', 'token'], tokenEnv),
      node(['api', 'token'], tokenEnv),
      Promise.resolve(signalingNode.server),
      ...mediaNodes,
    ]);
    [a, b, signaling, media1] = started as [RunningServer, RunningServer, RunningServer, RunningServer];
    media2 = started[4] ?? media1;
    customer = await createCustomer(a);
    // a token node reads the live media nodes once a second: every room placed before both
    // token nodes saw both media nodes would go to the one they saw
    if (cluster) await Promise.all([a, b].map((s) => mediaNodesSeen(s, 2)));
  });

  after(async () => {
    for (const s of sessions) await s.close();
    const all = [...new Set([a, b, media1, media2, signaling])].filter((s): s is RunningServer => s !== undefined);
    await Promise.all(all.map((s) => s.stop()));
    for (const server of all) {
      assert.ok(!server.output().includes(DB_PASSWORD), 'the database password reached the output');
      assert.ok(!server.output().includes(customer?.appSecret ?? '\u0000'), 'an App Secret reached the output');
    }
    await redis?.dispose();
    await postgres?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('comes up with the same keys on every node: a credential made on A issues on B, and its grants join either media node', async () => {
    const [jwksA, jwksB] = await Promise.all([a, b].map(async (s) => (await request(`${s.token}/.well-known/jwks.json`)).json()));
    assert.deepEqual(jwksA, jwksB);
    const token = await issueOn(b, { room_id: 'keys-room', user_id: 'u1', role: 'speaker' });
    const session = await join(token);
    sessions.push(session);
    assert.equal(session.state, 'connected');
  });

  if (cluster) it('sends every token of one room to the same media node, and spreads rooms over both', async () => {
    const ports = new Set([media1, media2].map((m) => Number(new URL(m.urls['media']!).port)));
    const used = new Set<number>();
    for (let room = 0; room < 12; room++) {
      const placed = new Set<string>();
      for (let i = 0; i < 4; i++) {
        const token = await issueOn(i % 2 === 0 ? a : b, { room_id: `spread-${room}`, user_id: `u${i}`, role: 'speaker' });
        placed.add(`${token.media.sfu_host}:${token.media.sfu_port}`);
        used.add(token.media.sfu_port);
      }
      assert.equal(placed.size, 1, `room spread-${room} went to ${[...placed].join(', ')}`);
    }
    assert.deepEqual(used, ports, 'both media nodes receive rooms');
    // the public catalog names the same live nodes, on both api nodes
    for (const server of [a, b]) {
      const res = await request(`${server.api}/v1/public/platform/catalog`);
      assert.equal(res.status, 200, res.text);
      const hosts = res.json<{ regions: { media_hosts: { host: string; port: number }[] }[] }>().regions[0]!.media_hosts;
      assert.deepEqual(new Set(hosts.map((h) => h.port)), ports);
      assert.ok(hosts.every((h) => h.host === '127.0.0.1'));
    }
  });

  it('refuses the old secret on B at the very next request after a rotate answered on A', async () => {
    const own = await createCustomer(a);
    const rotated = await request(`${a.api}/v1/projects/${own.projectId}/credentials/${own.appId}/rotate`, {
      headers: bearer(own.accessToken), body: {},
    });
    assert.equal(rotated.status, 200, rotated.text);
    const old = await request(`${b.token}/v1/rtc/tokens`, { headers: { authorization: own.auth }, body: { room_id: 'r', user_id: 'u', role: 'speaker' } });
    assert.equal(old.status, 401, old.text);
    const secret = rotated.json<{ app_secret: string }>().app_secret;
    const fresh = await request(`${b.token}/v1/rtc/tokens`, {
      headers: { authorization: basicAuth(own.appId, secret) }, body: { room_id: 'r', user_id: 'u', role: 'speaker' },
    });
    assert.equal(fresh.status, 200, fresh.text);
  });

  it('refuses at once on B, which had cached the credential, a rotate, a revoke, an allowlist change and an archive answered on A', async () => {
    const body = { room_id: 'cached', user_id: 'u', role: 'speaker' };
    const issueOnB = (auth: string): Promise<HttpResult> => request(`${b.token}/v1/rtc/tokens`, { headers: { authorization: auth }, body });
    // the first requests read the store; the next ones are served from B's cache (docs/decisions.md, "Credential cache")
    const warm = async (auth: string): Promise<void> => {
      for (let i = 0; i < 3; i++) assert.equal((await issueOnB(auth)).status, 200);
    };
    const change = async (who: Customer, path: string, init: { method?: string; body?: Record<string, unknown> } = {}): Promise<HttpResult> => {
      const res = await request(`${a.api}/v1/projects/${who.projectId}${path}`, { headers: bearer(who.accessToken), body: {}, ...init });
      assert.equal(res.status, 200, res.text);
      return res;
    };

    const own = await createCustomer(a);
    await warm(own.auth);
    const rotated = await change(own, `/credentials/${own.appId}/rotate`);
    assert.equal((await issueOnB(own.auth)).status, 401, 'the old secret after a rotate');
    const rotatedAuth = basicAuth(own.appId, rotated.json<{ app_secret: string }>().app_secret);
    await warm(rotatedAuth);

    await change(own, `/credentials/${own.appId}`, { method: 'PATCH', body: { ip_allowlist: ['10.0.0.0/8'] } });
    const outside = await issueOnB(rotatedAuth);
    assert.equal(outside.status, 403, outside.text);
    assert.equal(outside.json()['error'], 'ip_not_allowed');
    await change(own, `/credentials/${own.appId}`, { method: 'PATCH', body: { ip_allowlist: ['127.0.0.1'] } });
    await warm(rotatedAuth);

    await change(own, '/archive');
    const archived = await issueOnB(rotatedAuth);
    assert.equal(archived.status, 403, archived.text);
    assert.equal(archived.json()['error'], 'project_archived');
    await change(own, '/unarchive');
    await warm(rotatedAuth);

    await change(own, `/credentials/${own.appId}/revoke`);
    assert.equal((await issueOnB(rotatedAuth)).status, 401, 'a revoked credential');
  });

  it('closes a session held on the (second) media node with 4003 within a second of a revoke answered on B, and ends its signaling stream', async () => {
    const media2Port = Number(new URL(media2.urls['media']!).port);
    let token: TokenResponse | undefined;
    for (let room = 0; room < 50 && !token; room++) {
      const t = await issueOn(a, { room_id: `revoke-${room}`, user_id: 'victim', role: 'speaker', signaling: true });
      if (t.media.sfu_port === media2Port) token = t;
    }
    assert.ok(token, 'a room placed on media node 2');
    const session = await join(token);
    sessions.push(session);
    const client = new SignalingClient({ url: token.signaling!.url, token: token.signaling!.token });
    await client.join();
    const inbox = collect(client);
    await inbox.waitFor((e) => e.type === 'ready', 5000, 'the signaling stream');

    const disconnected = nextEvent(session, 'disconnected', 5000);
    const res = await request(`${b.token}/v1/rtc/tokens/revoke`, {
      headers: { authorization: customer.auth }, body: { revocation_handle: token.media.revocation_handle },
    });
    assert.equal(res.status, 200, res.text);
    const answeredAt = performance.now();
    const info = await disconnected;
    const latencyMs = performance.now() - answeredAt;
    assert.equal(info.code, 4003);
    assert.ok(latencyMs < 1000, `closed ${latencyMs.toFixed(0)} ms after the revoke was answered`);
    await inbox.waitFor((e) => e.type === 'revoked', 1000, 'the revoked event on the signaling stream');
  });

  it('refuses, after a removal with a ban answered on B, the user\'s grant issued on A before it and never used, on every node', async () => {
    const own = await createCustomer(a);
    const body = { room_id: 'cutoff-room', user_id: 'mallory', role: 'speaker', signaling: true };
    const first = await issueOn(a, body, own);
    const renewal = await issueOn(b, body, own);
    const session = await join(first);
    sessions.push(session);
    const client = new SignalingClient({ url: first.signaling!.url, token: first.signaling!.token });
    await client.join();
    const inbox = collect(client);
    await inbox.waitFor((e) => e.type === 'ready', 5000, 'the signaling stream');
    const room = (server: RunningServer, path: string, method = 'GET', payload?: unknown) =>
      request(`${server.api}/v1/rtc/rooms/cutoff-room${path}`, { method, headers: { authorization: own.auth }, ...(payload !== undefined && { body: payload }) });
    let participantId: string | undefined;
    while (participantId === undefined) {
      const res = await room(b, '');
      if (res.status === 200) participantId = res.json<{ participants: { participant_id: string }[] }>().participants[0]?.participant_id;
    }

    const disconnected = nextEvent(session, 'disconnected', 5000);
    const removed = await room(b, `/participants/${participantId}/remove`, 'POST', { ban_seconds: 120 });
    assert.equal(removed.status, 200, removed.text);
    const stored = removed.json<{ cut_off_at: number; banned_until: number }>();
    assert.equal(stored.banned_until, stored.cut_off_at);
    assert.ok(Math.abs(stored.banned_until - (Date.now() / 1000 + 120)) < 60);
    assert.equal((await disconnected).code, 4003);
    await inbox.waitFor((e) => e.type === 'revoked', 1000, 'the revoked event on the signaling stream');

    for (const token of [renewal, await issueOn(a, body, own)]) {
      const refused = await join(token).then(() => undefined, (err: unknown) => err as { closeCode?: number });
      assert.equal(refused?.closeCode, 4003, 'a grant issued before the ban ends is refused at the media node');
      const signalingJoin = await request(`${token.signaling!.url}/v1/signaling/join`, { body: { token: token.signaling!.token } });
      assert.equal(signalingJoin.status, 401, signalingJoin.text);
    }
    const elsewhere = await join(await issueOn(b, { ...body, room_id: 'cutoff-other-room' }, own));
    sessions.push(elsewhere);
    assert.equal(elsewhere.state, 'connected', 'another room of the user is untouched');
  });

  it('lists the rooms of every media node on both api nodes, and removes or updates a participant on whichever node holds it', async () => {
    const own = await createCustomer(a);
    const rooms = (server: RunningServer, path = '', method = 'GET', body?: unknown) =>
      request(`${server.api}/v1/rtc/rooms${path}`, { method, headers: { authorization: own.auth }, ...(body !== undefined && { body }) });
    const joined: MediaSession[] = [];
    const nodes = new Set<string>();
    for (let room = 0; room < 8; room++) {
      const token = await issueOn(a, { room_id: `presence-${room}`, user_id: 'u', role: 'speaker', publish_streams: [1], subscribe_room: true }, own);
      nodes.add(`${token.media.sfu_host}:${token.media.sfu_port}`);
      joined.push(await join(token));
    }
    sessions.push(...joined);
    let listed: { room_id: string; media_node: string; participants: { participant_id: string }[] }[] = [];
    while (listed.length < joined.length) listed = (await rooms(b)).json<{ rooms: typeof listed }>().rooms;
    assert.deepEqual(new Set(listed.map((r) => r.media_node)), nodes);
    if (cluster) assert.equal(nodes.size, 2, 'rooms on both media nodes');
    assert.deepEqual((await rooms(a)).json<{ rooms: typeof listed }>().rooms.map((r) => r.room_id).sort(), listed.map((r) => r.room_id).sort());

    for (const server of [a, b]) {
      const session = joined.shift()!;
      // a stream muted from this api node stops on the media node that holds it, and the other api node lists it muted
      const other = server === a ? b : a;
      const roomPath = `/${encodeURIComponent(session.roomId)}`;
      await session.publish(1, 'audio', { source: 'microphone' });
      const streamsOn = async (node: RunningServer) => (await rooms(node, roomPath)).json<RtcRoom>().participants[0]?.streams ?? [];
      while ((await streamsOn(other)).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const told = nextEvent(session, 'streamMuted', 5000);
      const muted = await rooms(server, `${roomPath}/participants/${session.participantId}/streams/1/mute`, 'POST', { muted: true });
      assert.equal(muted.status, 200, muted.text);
      assert.deepEqual(await told, { streamId: 1, participantId: session.participantId, muted: true });
      assert.deepEqual((await streamsOn(other)).map((s) => [s.stream_id, s.source, s.muted]), [[1, 'microphone', true]]);
      const permissions = nextEvent(session, 'permissions', 5000);
      const updated = await rooms(server, `/${encodeURIComponent(session.roomId)}/participants/${session.participantId}`, 'PATCH', { publish_streams: [] });
      assert.equal(updated.status, 200, updated.text);
      assert.deepEqual((await permissions).publishStreams, []);
      const disconnected = nextEvent(session, 'disconnected', 5000);
      const removed = await rooms(server, `/${encodeURIComponent(session.roomId)}/participants/${session.participantId}/remove`, 'POST');
      assert.equal(removed.status, 200, removed.text);
      const answeredAt = performance.now();
      assert.equal((await disconnected).code, 4003);
      assert.ok(performance.now() - answeredAt < 1000);
    }
    for (const session of joined) assert.equal(session.state, 'connected');
  });

  if (cluster) it('counts one App ID\'s 1200 a minute across both nodes: 700 + 700 requests give 200 refusals', async () => {
    const own = await createCustomer(a);
    const body = { room_id: 'limit-room', user_id: 'u', role: 'speaker' };
    const results = await pool(1400, 16, (i) => request(`${(i % 2 === 0 ? a : b).token}/v1/rtc/tokens`, {
      headers: { authorization: own.auth }, body,
    }));
    assert.deepEqual(tally(results), { 200: 1200, 429: 200 });
    const refused = results.find((r) => r.status === 429)!;
    assert.equal(refused.json()['error'], 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
  });

  if (cluster) it('blocks an address on both nodes after 10 + 10 failed authentications on A and B', async () => {
    const from = '127.0.0.77';
    const wrong = { authorization: basicAuth(customer.appId, 'not-the-secret') };
    const body = { room_id: 'r', user_id: 'u', role: 'speaker' };
    for (let i = 0; i < 10; i++) {
      for (const server of [a, b]) {
        const res = await request(`${server.token}/v1/rtc/tokens`, { headers: wrong, body, localAddress: from });
        assert.equal(res.status, 401, res.text);
      }
    }
    for (const server of [a, b]) {
      const res = await request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body, localAddress: from });
      assert.equal(res.status, 429, `${server.token}: ${res.text}`);
    }
    const elsewhere = await request(`${a.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body, localAddress: '127.0.0.78' });
    assert.equal(elsewhere.status, 200, elsewhere.text);
  });

  it('keeps refusing a revoked grant on a media node restarted after the revoke', async () => {
    const wasSecond = media2 === media1;
    const media1Port = Number(new URL(media1.urls['media']!).port);
    let token: TokenResponse | undefined;
    for (let room = 0; room < 50 && !token; room++) {
      const t = await issueOn(a, { room_id: `restart-${room}`, user_id: 'gone', role: 'speaker' });
      if (t.media.sfu_port === media1Port) token = t;
    }
    assert.ok(token, 'a room placed on media node 1');
    const res = await request(`${a.token}/v1/rtc/tokens/revoke`, {
      headers: { authorization: customer.auth }, body: { revocation_handle: token.media.revocation_handle },
    });
    assert.equal(res.status, 200, res.text);
    await media1.stop();
    media1 = await node(['media'], { RTC_MEDIA_PORT: String(media1Port) });
    if (wasSecond) media2 = media1;
    await assert.rejects(join(token), (err: Error & { closeCode?: number }) => {
      assert.equal(err.closeCode, 4003, err.message);
      return true;
    });
  });

  if (cluster) it('while Redis is down: issuance is refused with 503 and Retry-After, a revoke still cuts the session within a second; all resumes when Redis is back', async () => {
    const token = await issueOn(a, { room_id: 'outage-room', user_id: 'cut', role: 'speaker' });
    const session = await join(token);
    sessions.push(session);
    await redis!.stop();
    try {
      const refused = await request(`${a.token}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth }, body: { room_id: 'outage-room', user_id: 'new', role: 'speaker' },
      });
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.json()['error'], 'unavailable');
      assert.equal(refused.headers['retry-after'], '1');

      const disconnected = nextEvent(session, 'disconnected', 5000);
      const revoked = await request(`${b.token}/v1/rtc/tokens/revoke`, {
        headers: { authorization: customer.auth }, body: { revocation_handle: token.media.revocation_handle },
      });
      assert.equal(revoked.status, 200, revoked.text);
      const answeredAt = performance.now();
      assert.equal((await disconnected).code, 4003);
      assert.ok(performance.now() - answeredAt < 1000, 'closed within a second while Redis was down');
    } finally {
      await redis!.start();
    }
    // back: issuance works again on each node once it has reconnected (they retry every 2 s at most)
    for (const server of [a, b]) await issueWhenAvailable(server, { room_id: 'after-outage', user_id: 'u', role: 'speaker' });
    const later = await issueOn(b, { room_id: 'after-outage', user_id: 'v', role: 'speaker' });
    const laterSession = await join(later);
    sessions.push(laterSession);
    const closed = nextEvent(laterSession, 'disconnected', 5000);
    const res = await request(`${a.token}/v1/rtc/tokens/revoke`, {
      headers: { authorization: customer.auth }, body: { revocation_handle: later.media.revocation_handle },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await closed).code, 4003);
  });

  it('loses no answered write when A is killed under a write load, and B keeps serving', async () => {
    const writer = await createCustomer(a);
    const answered: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await request(`${a.api}/v1/projects`, { headers: bearer(writer.accessToken), body: { name: `load-${w}-${i}` } });
          if (res.status === 201) answered.push(res.json<{ id: string }>().id);
          else if (res.status === 409 || res.status === 400) stop = true;
        } catch {
          // the connection died with the process: this write was never answered
          return;
        }
      }
    });
    while (answered.length < 20) await new Promise<void>((resolve) => setImmediate(resolve));
    a.process.kill('SIGKILL');
    await Promise.all(writers);
    stop = true;
    const list = await request(`${b.api}/v1/projects`, { headers: bearer(writer.accessToken) });
    assert.equal(list.status, 200, list.text);
    const stored = new Set(list.json<{ projects: { id: string }[] }>().projects.map((p) => p.id));
    for (const id of answered) assert.ok(stored.has(id), `${id} was answered 201 by A but is missing`);
    const still = await issueWhenAvailable(b, { room_id: 'after-kill', user_id: 'u', role: 'speaker' });
    assert.ok(still.media.grant.length > 0);
  });
});
}
