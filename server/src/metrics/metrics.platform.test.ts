import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { expressions, metricNames, readDashboard, reportedNames } from '../../../test/helpers/grafana.ts';
import { basic, freshAddress, request } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { startPostgres, type Postgres } from '../../../test/helpers/postgres.ts';
import { allLabelValues, parseStrictExposition, sampleValue, type MetricFamily } from '../../../test/helpers/prometheus.ts';
import { startRedis, type RedisServer } from '../../../test/helpers/redis.ts';
import { joinRoom, type Participant } from '../../../test/helpers/signaling.ts';
import { RtcTestClient, gatheredOffer, vp8Payload, type RtcTrackSpec } from '../../../test/helpers/webrtc-client.ts';
import { join, nextEvent, text, TokenIssuer, until } from '../../../test/helpers/media-session.ts';

const ALL_ROLES = ['api', 'token', 'signaling', 'media'];
const GENEROUS_LIMITS = { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000', RTC_LOG_LEVEL: 'info' };
const PARALLEL = 200;

async function scrape(server: ServedPlatform): Promise<ReadonlyMap<string, MetricFamily>> {
  const res = await request(`${server.urls['admin']}/metrics`);
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  // every sample a float of the text format (no `Nan`), every family with HELP and TYPE, no series twice
  return parseStrictExposition(res.text);
}

async function ready(url: string): Promise<{ status: number; body: { status: string; failing?: string[] } }> {
  const res = await request(`${url}/ready`);
  return { status: res.status, body: res.json<{ status: string; failing?: string[] }>() };
}

describe('metrics and readiness of rtc serve (every role, admin listener on)', () => {
  let server: ServedPlatform;
  let customer: Customer;
  const room = 'metrics-room-91';
  const users: string[] = [];
  const closers: (() => Promise<void> | void)[] = [];

  before(async () => {
    server = await serveInProcess({ roles: ALL_ROLES, env: { ...GENEROUS_LIMITS, RTC_ADMIN_PORT: '0' } });
    customer = await createCustomer({ api: server.api, token: server.token, request });
  });
  after(async () => {
    for (const close of closers) await close();
    await server?.stop();
  });

  const issue = (user: string, body: Record<string, unknown> = {}): Promise<TokenResponse> => {
    users.push(user);
    return request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth },
      body: { room_id: room, user_id: user, role: 'speaker', subscribe_room: true, ...body },
    }).then((res) => {
      assert.equal(res.status, 200, res.text);
      return res.json<TokenResponse>();
    });
  };

  it('names the admin listener on every role line, on loopback, and is ready once started', async () => {
    assert.match(server.urls['admin'] ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(await ready(server.urls['admin']!), { status: 200, body: { status: 'ready' } });
    for (const role of ['api', 'token', 'signaling']) {
      assert.deepEqual(await ready(server.urls[role]!), { status: 200, body: { status: 'ready' } }, role);
    }
    const health = await request(`${server.urls['admin']}/health`);
    assert.deepEqual([health.status, health.json()], [200, { status: 'ok' }]);
    assert.equal((await request(`${server.urls['admin']}/nothing`)).status, 404);
    // the admin listener is not the media or api port
    assert.equal((await request(`${server.api}/metrics`)).status, 404);
  });

  it('counts tokens issued and refused by code, with their latency, under 200 parallel requests', async () => {
    const before = await scrape(server);
    const issuedBefore = sampleValue(before, 'rtc_tokens_issued_total');
    const latencyBefore = countOr0(before, 'rtc_token_issue_duration_seconds_count', { outcome: 'issued' });
    const wrongSecret = basic(customer.appId, `${customer.appSecret.slice(0, -2)}xx`);
    const kinds = Array.from({ length: PARALLEL }, (_, i) => i % 4);
    const results = await Promise.all(kinds.map((kind, i) => {
      const user = `load-user-${i}`;
      // each failure from its own address: 20 from one address would block it (429)
      if (kind === 0) {
        return request(`${server.token}/v1/rtc/tokens`, {
          headers: { authorization: wrongSecret }, body: { room_id: room, user_id: user, role: 'speaker' }, localAddress: freshAddress(),
        });
      }
      if (kind === 1) return request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'emperor' } });
      users.push(user);
      return request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'speaker' } });
    }));
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 401).length, PARALLEL / 4);
    assert.equal(statuses.filter((s) => s === 400).length, PARALLEL / 4);
    assert.equal(statuses.filter((s) => s === 200).length, PARALLEL / 2);

    const afterLoad = await scrape(server);
    assert.equal(sampleValue(afterLoad, 'rtc_tokens_issued_total') - issuedBefore, PARALLEL / 2);
    assert.equal(sampleValue(afterLoad, 'rtc_tokens_refused_total', { code: 'invalid_credentials' })
      - countOr0(before, 'rtc_tokens_refused_total', { code: 'invalid_credentials' }), PARALLEL / 4);
    assert.equal(sampleValue(afterLoad, 'rtc_tokens_refused_total', { code: 'invalid_request' })
      - countOr0(before, 'rtc_tokens_refused_total', { code: 'invalid_request' }), PARALLEL / 4);
    assert.equal(sampleValue(afterLoad, 'rtc_token_issue_duration_seconds_count', { outcome: 'issued' }) - latencyBefore, PARALLEL / 2);
    assert.equal(afterLoad.get('rtc_token_issue_duration_seconds')?.type, 'histogram');
    assert.ok(sampleValue(afterLoad, 'rtc_token_issue_duration_seconds_bucket', { outcome: 'issued', le: '1' }) > 0);
    assert.equal(afterLoad.get('rtc_tokens_issued_total')?.type, 'counter');
  });

  it('counts media sessions, rooms and forwarded frames, and a revocation with its close latency', async () => {
    const aliceToken = await issue('alice-metrics', { publish_streams: [1] });
    const bobToken = await issue('bob-metrics', { role: 'audience' });
    const alice = await join(aliceToken);
    const bob = await join(bobToken);
    closers.push(() => alice.close(), () => bob.close());
    const frames: unknown[] = [];
    bob.on('frame', (f) => frames.push(f));
    const wsAudio = (direction: string) => ({ transport: 'websocket', direction, kind: 'audio' });
    const start = await scrape(server);
    const stream = await alice.publish(1, 'audio');
    await until(() => bob.streams().length === 1, 3000, 'bob to see the stream');
    for (let i = 0; i < 5; i++) await stream.send(text(`frame ${i}`));
    await until(() => frames.length === 5, 3000, 'the frames');

    const during = await scrape(server);
    assert.equal(sampleValue(during, 'rtc_media_sessions'), 2);
    assert.equal(sampleValue(during, 'rtc_media_rooms'), 1);
    assert.equal(sampleValue(during, 'rtc_media_frames_forwarded_total'), 5);
    assert.equal(sampleValue(during, 'rtc_media_frames_dropped_total'), 0);
    // five frames in from alice, five out to bob, each its whole sealed message
    for (const direction of ['in', 'out']) {
      assert.equal(sampleValue(during, 'rtc_media_packets_total', wsAudio(direction)) - sampleValue(start, 'rtc_media_packets_total', wsAudio(direction)), 5);
      assert.ok(sampleValue(during, 'rtc_media_bytes_total', wsAudio(direction)) - sampleValue(start, 'rtc_media_bytes_total', wsAudio(direction)) > 5 * 'frame 0'.length);
    }
    assert.deepEqual(['participants', 'publishers', 'subscribers', 'streams'].map((g) => sampleValue(during, `rtc_media_${g}`)), [2, 1, 1, 1]);
    assert.equal(during.get('rtc_media_sessions')?.type, 'gauge');
    const revocationsBefore = sampleValue(during, 'rtc_token_revocations_total');

    const disconnected = nextEvent(bob, 'disconnected');
    const revoked = await request(`${server.token}/v1/rtc/tokens/revoke`, {
      headers: { authorization: customer.auth }, body: { revocation_handle: bobToken.media.revocation_handle },
    });
    assert.equal(revoked.status, 200);
    assert.equal((await disconnected).code, 4003);

    const afterRevoke = await scrape(server);
    assert.equal(sampleValue(afterRevoke, 'rtc_token_revocations_total') - revocationsBefore, 1);
    assert.equal(sampleValue(afterRevoke, 'rtc_media_revocation_close_seconds_count'), 1);
    assert.ok(sampleValue(afterRevoke, 'rtc_media_revocation_close_seconds_bucket', { le: '1' }) === 1);
    assert.equal(sampleValue(afterRevoke, 'rtc_media_sessions'), 1);
  });

  it('counts open signaling streams', async () => {
    const before = sampleValue(await scrape(server), 'rtc_signaling_streams');
    users.push('carol-metrics');
    const carol: Participant = await joinRoom(server.token, customer, { room_id: room, user_id: 'carol-metrics' });
    closers.push(() => carol.client.close());
    assert.equal(sampleValue(await scrape(server), 'rtc_signaling_streams') - before, 1);
    carol.client.close();
    await carol.inbox.ended;
    await waitFor(async () => sampleValue(await scrape(server), 'rtc_signaling_streams') === before, 'the stream to be counted closed');
  });

  it('counts TURN credentials refused for want of a relay', async () => {
    const before = await scrape(server);
    assert.equal(sampleValue(before, 'rtc_turn_credentials_total', { outcome: 'issued' }), 0);
    users.push('turn-metrics');
    const res = await request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: room, user_id: 'turn-metrics', role: 'speaker', turn: true },
    });
    assert.deepEqual([res.status, res.json<{ error: string }>().error], [502, 'turn_unavailable']);
    const afterRefusal = await scrape(server);
    assert.equal(sampleValue(afterRefusal, 'rtc_turn_credentials_total', { outcome: 'unavailable' })
      - sampleValue(before, 'rtc_turn_credentials_total', { outcome: 'unavailable' }), 1);
    assert.equal(sampleValue(afterRefusal, 'rtc_turn_credentials_total', { outcome: 'issued' }), 0);
  });

  it('defines webhook deliveries and the process metrics, and never puts an id or a secret in a label', async () => {
    const families = await scrape(server);
    for (const outcome of ['delivered', 'failed', 'abandoned']) {
      assert.equal(sampleValue(families, 'rtc_webhook_deliveries_total', { outcome }), 0);
    }
    assert.ok(families.has('process_resident_memory_bytes'));
    assert.ok(families.has('nodejs_eventloop_lag_seconds'));
    const forbidden = new Set([customer.appId, customer.appSecret, customer.projectId, room, ...users]);
    for (const value of allLabelValues(families)) assert.ok(!forbidden.has(value), `label value ${value}`);
    const exposition = (await request(`${server.urls['admin']}/metrics`)).text;
    for (const secret of [customer.appSecret, customer.appId, room]) assert.ok(!exposition.includes(secret));
  });

  it('reports every metric the Grafana dashboard of docs/operations uses', async () => {
    const reported = reportedNames(await scrape(server));
    const missing = expressions(readDashboard()).flatMap(({ panel, expr }) => metricNames(expr).filter((n) => !reported.has(n)).map((n) => `${panel}: ${n}`));
    assert.deepEqual(missing, []);
  });
});

describe('media quality metrics of a WebRTC publisher and subscriber (media role, admin listener on)', () => {
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  const clients: RtcTestClient[] = [];
  const room = 'metrics-webrtc';
  const send: RtcTrackSpec = { streamId: 1, kind: 'video', direction: 'send' };
  const recv: RtcTrackSpec = { streamId: 1, kind: 'video', direction: 'recv' };
  const rtcVideo = (direction: string) => ({ transport: 'webrtc', direction, kind: 'video' });

  before(async () => {
    // TURN credentials are issued without a relay to use them: the count is the token API's; the
    // relay's address is not the clients' loopback one, whose direct pairs count as direct
    server = await serveInProcess({
      roles: ['api', 'token', 'media'],
      env: { ...GENEROUS_LIMITS, RTC_ADMIN_PORT: '0', RTC_TURN_SECRET: 'metrics-turn-secret', RTC_TURN_URIS: 'turn:127.0.0.2:3478' },
    });
    issuer = await TokenIssuer.create(() => server.api);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await server?.stop();
  });

  const client = async (user: string, body: Record<string, unknown>): Promise<RtcTestClient> => {
    const c = await RtcTestClient.join(server.urls['media']!, await issuer.issue({ room_id: room, user_id: user, role: 'speaker', ...body }));
    clients.push(c);
    return c;
  };

  it('counts RTP both ways, ICE, key frame requests, NACKs, loss and round trips, and live rooms and subscribers until they leave', async () => {
    const empty = await scrape(server);
    assert.deepEqual(['rooms', 'participants', 'publishers', 'subscribers', 'streams'].map((g) => sampleValue(empty, `rtc_media_${g}`)), [0, 0, 0, 0, 0]);
    assert.equal(sampleValue(empty, 'rtc_media_ice_total', { outcome: 'connected' }), 0);

    const pub = await client('publisher', { publish_streams: [1], turn: true });
    assert.equal((await pub.publish(1, 'video')).type, 'published');
    assert.deepEqual((await pub.negotiate([send])).refused, []);
    await pub.waitConnected();
    const sub = await client('subscriber', { role: 'audience', subscribe_room: true });
    assert.deepEqual((await sub.negotiate([recv])).refused, []);
    await sub.waitConnected();

    // video until the subscriber has some, every tenth packet a key frame; then packets the server
    // never gets (a gap it asks again for, and counts lost once its receiver report says so)
    let sent = 0;
    const pump = async (done: () => Promise<boolean> | boolean, what: string): Promise<void> => {
      await waitFor(async () => {
        if (await done()) return true;
        pub.sendRtp(1, vp8Payload(300, sent % 10 === 0));
        sent += 1;
        return false;
      }, what, 20_000);
    };
    await pump(() => sub.receivedCount(1) >= 20, 'video at the subscriber');
    const flowing = await scrape(server);
    for (const direction of ['in', 'out']) {
      assert.ok(sampleValue(flowing, 'rtc_media_packets_total', rtcVideo(direction)) >= 20, direction);
      assert.ok(sampleValue(flowing, 'rtc_media_bytes_total', rtcVideo(direction)) >= 20 * 300, direction);
    }
    assert.equal(sampleValue(flowing, 'rtc_media_packets_total', { transport: 'websocket', direction: 'in', kind: 'video' }), 0);
    assert.equal(sampleValue(flowing, 'rtc_media_ice_total', { outcome: 'connected' }), 2);
    assert.equal(sampleValue(flowing, 'rtc_media_ice_selected_pairs_total', { path: 'direct' }), 2);
    assert.equal(sampleValue(flowing, 'rtc_media_ice_selected_pairs_total', { path: 'relay' }), 0);
    assert.deepEqual(['rooms', 'participants', 'publishers', 'subscribers', 'streams'].map((g) => sampleValue(flowing, `rtc_media_${g}`)), [1, 2, 1, 1, 1]);

    // the subscriber asks for a key frame (PLI) and again for a packet (NACK); the server passes a
    // key frame request on to the publisher (at most every 250 ms per stream: ask until one passes)
    const received = (f: ReadonlyMap<string, MetricFamily>, name: string, direction: string): number => sampleValue(f, name, { direction });
    const plisAtPublisher = pub.pliReceived(1);
    await sub.sendNack(1, [sub.lastReceivedSeq(1)!]);
    let askedAt = 0;
    await waitFor(async () => {
      if (Date.now() - askedAt > 300) {
        askedAt = Date.now();
        await sub.sendPli(1);
      }
      return pub.pliReceived(1) > plisAtPublisher;
    }, 'a PLI at the publisher');
    pub.skipRtp(1, 5);
    await pump(async () => {
      const f = await scrape(server);
      return received(f, 'rtc_media_key_frame_requests_total', 'received') >= 1 && received(f, 'rtc_media_key_frame_requests_total', 'sent') >= 1
        && received(f, 'rtc_media_nacks_total', 'received') >= 1 && received(f, 'rtc_media_nacks_total', 'sent') >= 1
        && received(f, 'rtc_media_packets_lost_total', 'in') >= 5 && sampleValue(f, 'rtc_media_rtt_seconds_count') >= 1;
    }, 'key frame requests, NACKs both ways, the uplink\'s loss and a round trip to be counted');
    const quality = await scrape(server);
    // the five never sent; loopback may lose more only under a very heavy load
    assert.ok(received(quality, 'rtc_media_packets_lost_total', 'in') <= sent);
    assert.equal(sampleValue(quality, 'rtc_turn_credentials_total', { outcome: 'issued' }), 1);
    // on loopback, a round trip is under the smallest buckets but for a loaded machine
    assert.ok(sampleValue(quality, 'rtc_media_rtt_seconds_bucket', { le: '2' }) >= 1);
    assert.ok(sampleValue(quality, 'rtc_media_rtt_seconds_sum') >= 0);

    await sub.close();
    await pub.close();
    await waitFor(async () => {
      const f = await scrape(server);
      return ['rooms', 'participants', 'publishers', 'subscribers', 'streams', 'sessions'].every((g) => sampleValue(f, `rtc_media_${g}`) === 0);
    }, 'the room and its participants to be gone');
    const left = await scrape(server);
    // a connection counts one ICE outcome: closing a connected one adds none
    assert.equal(sampleValue(left, 'rtc_media_ice_total', { outcome: 'connected' }), 2);
    assert.equal(sampleValue(left, 'rtc_media_ice_total', { outcome: 'abandoned' }), 0);
  });

  it('counts a peer connection whose session ends before its ICE connects as abandoned', async () => {
    const before = await scrape(server);
    const ice = (f: ReadonlyMap<string, MetricFamily>, outcome: string): number => sampleValue(f, 'rtc_media_ice_total', { outcome });
    const c = await client('never-connects', { role: 'audience', subscribe_room: true });
    // an offer the server answers, from a client peer connection already closed and with candidates
    // where nothing listens: nothing answers the server's connectivity checks, and the session ends
    // before they give up
    const transceiver = c.pc.addTransceiver('video', { direction: 'recvonly' });
    // every candidate names port 9 (discard), where nothing listens
    const sdp = (await gatheredOffer(c.pc)).replace(/^(a=candidate:\S+ \d+ \S+ \d+ \S+ )\d+/gm, '$19');
    await c.pc.close();
    const answer = await c.offer(sdp, [{ mid: transceiver.mid!, stream_id: 1, direction: 'recv' }]);
    assert.equal(answer.type, 'rtc_answer');
    await c.close();
    await waitFor(async () => ice(await scrape(server), 'abandoned') === ice(before, 'abandoned') + 1, 'the abandoned connection to be counted');
    const after = await scrape(server);
    for (const outcome of ['connected', 'failed', 'timed_out']) assert.equal(ice(after, outcome), ice(before, outcome), outcome);
  });
});

describe('readiness of a PostgreSQL and Redis process', () => {
  let postgres: Postgres;
  let redis: RedisServer;
  let server: ServedPlatform;

  before(async () => {
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    server = await serveInProcess({
      roles: ['api', 'token'],
      env: { DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url, RTC_ADMIN_PORT: '0', RTC_LOG_LEVEL: 'info' },
    });
  });
  after(async () => {
    await server?.stop();
    await redis?.dispose();
    await postgres?.stop();
  });

  it('is ready, turns 503 naming Redis while Redis is stopped (health stays 200), and ready again once it is back', async () => {
    assert.deepEqual(await ready(server.urls['admin']!), { status: 200, body: { status: 'ready' } });
    await redis.stop();
    await waitFor(async () => (await ready(server.urls['admin']!)).status === 503, 'readiness to notice Redis is gone');
    for (const url of [server.urls['admin']!, server.token, server.api]) {
      assert.deepEqual(await ready(url), { status: 503, body: { status: 'unavailable', failing: ['redis'] } }, url);
    }
    const body = (await request(`${server.urls['admin']}/ready`)).text;
    assert.ok(!body.includes(String(redis.port)) && !body.includes('redis://'), 'no address in the answer');
    assert.equal((await request(`${server.token}/health`)).status, 200);

    await redis.start();
    await waitFor(async () => (await ready(server.urls['admin']!)).status === 200, 'readiness to come back', 15_000);
    assert.deepEqual(await ready(server.token), { status: 200, body: { status: 'ready' } });
  });

  it('is not ready from the start of a shutdown while a request is still in flight', async () => {
    // a request whose body is still arriving holds the shutdown, so the drain can be observed
    const url = new URL(server.token);
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const answered = once(socket, 'close').then(() => Buffer.concat(chunks).toString('utf8'));
    // 100 Continue says the server has the request's head: it is in flight
    socket.write(['POST /v1/rtc/tokens HTTP/1.1', `host: ${url.host}`, 'content-type: application/json', 'content-length: 2',
      'expect: 100-continue', '', ''].join('\r\n'));
    await once(socket, 'data');
    assert.match(Buffer.concat(chunks).toString('utf8'), /^HTTP\/1\.1 100 Continue/);
    socket.write('{');
    const exit = server.stop();
    await waitFor(async () => (await ready(server.urls['admin']!)).status === 503, 'readiness to turn off');
    assert.deepEqual(await ready(server.urls['admin']!), { status: 503, body: { status: 'unavailable', failing: ['shutting_down'] } });
    socket.write('}');
    assert.match(await answered, /^HTTP\/1\.1 401 /m);
    await exit;
  });
});

function countOr0(families: ReadonlyMap<string, MetricFamily>, name: string, labels: Record<string, string>): number {
  try {
    return sampleValue(families, name, labels);
  } catch {
    return 0;
  }
}

/** Polls `check` until it holds (rejects after `timeoutMs`). */
async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
