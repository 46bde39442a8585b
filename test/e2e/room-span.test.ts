import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { collectFrames, join, nextEvent, text, until } from '../helpers/media-session.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { mediaNodesSeen } from './cluster-helpers.ts';
import { startSpanCluster, type SpanCluster } from './span-cluster.ts';

/**
 * A room of four over two media nodes of two sessions each, placed by load alone: its participants
 * see each other and receive each other's data, and the room service API shows and acts on both nodes.
 */
async function roomOfFour(api: RunningServer, customer: Customer, sessions: MediaSession[]): Promise<void> {
  const issue = async (room: string, user: string): Promise<TokenResponse> => {
    const res = await request(`${api.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'speaker', publish_streams: [1], subscribe_room: true },
    });
    assert.equal(res.status, 200, res.text);
    return res.json<TokenResponse>();
  };
  const roomApi = (path: string, method = 'GET') => request(`${api.api}/v1/rtc/rooms/${path}`, { method, headers: { authorization: customer.auth } });
  const room = 'town-hall';
  const tokens: TokenResponse[] = [];
  for (const user of ['p1', 'p2', 'p3', 'p4']) {
    const token = await issue(room, user);
    tokens.push(token);
    sessions.push(await join(token));
  }
  const nodes = tokens.map((t) => `${t.media.sfu_host}:${t.media.sfu_port}`);
  assert.equal(new Set(nodes).size, 2, `two nodes of two sessions: ${nodes.join(', ')}`);
  for (const s of sessions) await until(() => s.participants().length === 3, 10_000, `${s.userId} sees the three others`);

  // p1 sends data; the participants of the other node receive it as sent
  const other = sessions.filter((_, i) => nodes[i] !== nodes[0]);
  const received = other.map((s) => collectFrames(s));
  const stream = await sessions[0]!.publish(1, 'data');
  for (const s of other) await until(() => s.streams().some((st) => st.streamId === 1), 10_000, 'the stream crossed');
  await stream.send(text('across'));
  for (const r of received) await until(() => r.texts().includes('1:across'), 10_000, 'the frame crossed');

  const view = (await roomApi(room)).json<{ media_node: string; media_nodes: string[]; participants: { user_id: string; media_node: string }[] }>();
  assert.equal(view.media_node, nodes[0]);
  assert.deepEqual([...view.media_nodes].sort(), [...new Set(nodes)].sort());
  assert.deepEqual(view.participants.map((p) => p.media_node), nodes);

  // a removal asked of the api node closes the session on the other media node
  const target = other[0]!;
  const closed = nextEvent(target, 'revoked', 10_000);
  const left = nextEvent(sessions[0]!, 'participantLeft', 10_000, (p) => p.participantId === target.participantId);
  assert.equal((await roomApi(`${room}/participants/${target.participantId}/remove`, 'POST')).status, 200);
  await Promise.all([closed, left]);
  const ended = sessions.filter((s) => s !== target).map((s) => nextEvent(s, 'revoked', 10_000));
  assert.equal((await roomApi(`${room}/end`, 'POST')).status, 200);
  await Promise.all(ended);
}

// docs/operations/scale-out.md, "Rooms across media nodes": a cluster (PostgreSQL, Redis, one api
// and token node, two media nodes: processes of their own)
describe('a room across two media nodes of a cluster (PostgreSQL and Redis)', () => {
  let cluster: SpanCluster | undefined;
  const sessions: MediaSession[] = [];

  before(async () => {
    cluster = await startSpanCluster({ mediaNodes: 2, maxSessions: 2 });
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await cluster?.stop();
  });

  it('spreads a room of four over both nodes, one room for its participants and the room service API', { timeout: 120_000 }, async () => {
    await roomOfFour(cluster!.api, cluster!.customer, sessions);
  });
});

// the embedded default (SQLite, no Redis) with two media workers of `rtc serve`, which meet in the data directory's file
describe('a room across the two media workers of rtc serve on the embedded default', () => {
  const sessions: MediaSession[] = [];
  let server: RunningServer;
  let customer: Customer;

  before(async () => {
    server = await startServer({
      roles: ['api', 'token', 'media'],
      env: {
        RTC_MEDIA_WORKERS: '2', RTC_MEDIA_MAX_SESSIONS: '2', RTC_LOG_LEVEL: 'info', RTC_ADMIN_PORT: '0',
        RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000',
      },
    });
    customer = await createCustomer(server);
    await mediaNodesSeen(server, 2);
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await server?.stop();
  });

  it('spreads a room of four over both workers, one room for its participants and the room service API', { timeout: 120_000 }, async () => {
    await roomOfFour(server, customer, sessions);
  });
});
