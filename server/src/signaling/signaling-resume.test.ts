import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { SignalingClient, type SignalingEvent } from '../../../sdk/app/src/signaling.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { collect, issueSignalingToken, joinRoom, startProxy, type CuttableProxy, type Participant } from '../../../test/helpers/signaling.ts';

interface Frame {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** Opens the event stream over plain fetch and reads frames up to and including `ready`. */
async function readUntilReady(url: string, token: string, lastEventId?: string): Promise<Frame[]> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const res = await fetch(`${url}/v1/signaling/events`, { headers });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/event: ready\n.*\n\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text.split('\n\n').filter((block) => block.includes('data: ')).map((block) => {
    const field = (name: string): string | undefined => new RegExp(`^${name}: (.*)$`, 'm').exec(block)?.[1];
    return { id: field('id'), event: field('event') ?? 'message', data: JSON.parse(field('data')!) as Record<string, unknown> };
  });
}

const counter = (e: SignalingEvent): number | undefined =>
  e.type === 'message' ? (e.data as { n?: number }).n : undefined;

describe('signaling: resuming event streams', () => {
  let server: ServedPlatform;
  let customer: Customer;
  let url: string;
  const clients: SignalingClient[] = [];
  const proxies: CuttableProxy[] = [];
  const join = async (room: string, user: string, options: Parameters<typeof joinRoom>[3] = {}, ttl?: number): Promise<Participant> => {
    const p = await joinRoom(server.token, customer, { room_id: room, user_id: user, ...(ttl !== undefined && { ttl_seconds: ttl }) }, options);
    clients.push(p.client);
    return p;
  };

  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'signaling'] });
    customer = await createCustomer(server);
    url = server.urls['signaling']!;
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const p of proxies) await p.close();
    await server.stop();
  });

  it('replays exactly the events after Last-Event-ID, and a snapshot when it cannot', async () => {
    const alice = await join('r-replay', 'alice');
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-replay', user_id: 'bob' });
    const joined = await request(`${url}/v1/signaling/join`, { body: { token: t.signaling.token } });
    const since = joined.json<{ last_event_id: string }>().last_event_id;
    const first = await readUntilReady(url, t.signaling.token, since);
    assert.deepEqual(first.map((f) => f.event), ['ready']);
    assert.equal(first[0]!.data['replayed'], 0);

    // the stream is closed: what is sent now waits in the room's log
    const ids: string[] = [];
    for (let n = 0; n < 3; n += 1) ids.push((await alice.client.send({ n })).id);
    const all = await readUntilReady(url, t.signaling.token, since);
    assert.deepEqual(all.map((f) => [f.event, f.id]), [['message', ids[0]], ['message', ids[1]], ['message', ids[2]], ['ready', undefined]]);
    assert.deepEqual(all.slice(0, 3).map((f) => f.data['data']), [{ n: 0 }, { n: 1 }, { n: 2 }]);
    assert.equal(all[3]!.data['replayed'], 3);

    const rest = await readUntilReady(url, t.signaling.token, ids[1]);
    assert.deepEqual(rest.map((f) => f.id), [ids[2], undefined]);
    const none = await readUntilReady(url, t.signaling.token, ids[2]);
    assert.deepEqual(none.map((f) => f.event), ['ready']);

    // an id from another room's log, or one not yet reached, cannot be honoured: a snapshot says so
    for (const unknown of ['AAAAAAAA.1', `${ids[2]!.split('.')[0]}.999999`, 'not-an-id']) {
      const reset = await readUntilReady(url, t.signaling.token, unknown);
      assert.deepEqual(reset.map((f) => f.event), ['snapshot', 'ready'], unknown);
      assert.equal(reset[0]!.data['reset'], true);
      assert.equal(reset[0]!.id, ids[2]);
      assert.deepEqual((reset[0]!.data['participants'] as { user_id: string }[]).map((p) => p.user_id), ['alice', 'bob']);
    }
  });

  it('never replays what happened before the user joined', async () => {
    const alice = await join('r-floor', 'alice');
    const before = (await alice.client.send({ secret: 'before bob' })).id;
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-floor', user_id: 'bob' });
    assert.equal((await request(`${url}/v1/signaling/join`, { body: { token: t.signaling.token } })).status, 200);
    // an id from before bob's join gets the room's current state, not alice's earlier message
    const frames = await readUntilReady(url, t.signaling.token, `${before.split('.')[0]}.0`);
    assert.deepEqual(frames.map((f) => f.event), ['snapshot', 'ready']);
    assert.equal(frames[0]!.data['reset'], true);
    assert.deepEqual((frames[0]!.data['participants'] as { user_id: string }[]).map((p) => p.user_id), ['alice', 'bob']);
    const justBefore = await readUntilReady(url, t.signaling.token, before);
    assert.deepEqual(justBefore.map((f) => f.event), ['join', 'ready']);
    assert.equal(justBefore[0]!.data['user_id'], 'bob');
  });

  it('resumes the SDK\'s stream after a dropped connection without losing or repeating an event', async () => {
    const alice = await join('r-drop', 'alice');
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-drop', user_id: 'bob' });
    const proxy = await startProxy(url);
    proxies.push(proxy);
    const bob = new SignalingClient({ url: proxy.url, token: t.signaling.token, reconnect: { minMs: 50, maxMs: 200 } });
    clients.push(bob);
    await bob.join();
    const inbox = collect(bob);
    await inbox.waitFor((e) => e.type === 'ready', 5000, 'the stream to open');

    for (let n = 0; n < 5; n += 1) await alice.client.send({ n });
    await inbox.waitFor((e) => counter(e) === 4, 5000, 'message 4');
    proxy.cut({ block: true });
    for (let n = 5; n < 10; n += 1) await alice.client.send({ n });
    // the SDK tried to come back while the network was down, and was refused
    await proxy.refused(2);
    proxy.unblock();
    await inbox.waitFor((e) => counter(e) === 9, 5000, 'message 9 after the reconnect');
    await alice.client.send({ n: 10 });
    await inbox.waitFor((e) => counter(e) === 10, 5000, 'message 10');

    assert.deepEqual(inbox.messages().map(counter), [...Array(11).keys()]);
    const ids = inbox.messages().map((m) => m.id);
    assert.equal(new Set(ids).size, ids.length);
    const readies = inbox.events.filter((e) => e.type === 'ready');
    assert.ok(readies.length >= 2, 'the stream was reopened');
    assert.equal(readies.at(-1)!.type === 'ready' && readies.at(-1)!.replayed, 5);
    // the presence survived the drop: alice never saw bob leave
    assert.equal(alice.inbox.events.some((e) => e.type === 'leave'), false);
  });

  it('joins again and resumes when the session was ended under the SDK', async () => {
    const alice = await join('r-rejoin', 'alice');
    const bob = await join('r-rejoin', 'bob', { reconnect: { minMs: 50, maxMs: 200 } });
    await alice.inbox.waitFor((e) => e.type === 'join' && e.user_id === 'bob', 5000, 'bob joining');
    // another holder of the same token leaves: the SDK's stream ends and its next open gets 409
    const left = await request(`${url}/v1/signaling/leave`, { body: { token: bob.token.signaling.token } });
    assert.equal(left.status, 200);
    await alice.inbox.waitFor((e) => e.type === 'join' && e.user_id === 'bob' && alice.inbox.events.some((l) => l.type === 'leave'), 5000, 'bob rejoining');
    await bob.inbox.waitFor((e) => e.type === 'ready' && bob.inbox.events.filter((r) => r.type === 'ready').length >= 2, 5000, 'the stream to reopen');
    // the stream saw bob's own leave before it ended, so it resumes from there: nothing is missing
    assert.deepEqual(bob.inbox.events.filter((e) => e.type !== 'ready').map((e) => `${e.type}:${(e as { user_id?: string }).user_id}`),
      ['leave:bob', 'join:bob']);
    await alice.client.send({ n: 1 });
    await bob.inbox.waitFor((e) => counter(e) === 1, 5000, 'a message after the rejoin');
  });

  it('renews the token before expiry and keeps every event, with no leave in between', async () => {
    const alice = await join('r-renew', 'alice');
    let renewals = 0;
    const renewToken = async (): Promise<{ token: string; url: string }> => {
      renewals += 1;
      return (await issueSignalingToken(server.token, customer, { room_id: 'r-renew', user_id: 'bob', ttl_seconds: 3 })).signaling;
    };
    const bob = await join('r-renew', 'bob', { renewToken, reconnect: { minMs: 50, maxMs: 200 } }, 3);
    await alice.inbox.waitFor((e) => e.type === 'join' && e.user_id === 'bob', 5000, 'bob joining');
    const sendUntil = Date.now() + 5000;
    let n = 0;
    while (Date.now() < sendUntil) {
      await alice.client.send({ n });
      n += 1;
      await delay(100);
    }
    await bob.inbox.waitFor((e) => counter(e) === n - 1, 5000, 'the last message');
    assert.ok(renewals >= 1, `renewed ${renewals} times`);
    assert.deepEqual(bob.inbox.messages().map(counter), [...Array(n).keys()]);
    assert.equal(bob.inbox.events.some((e) => e.type === 'expired' || e.type === 'revoked'), false);
    assert.equal(alice.inbox.events.some((e) => e.type === 'leave'), false);
    assert.deepEqual((await alice.client.participants()).map((p) => p.user_id), ['alice', 'bob']);
  });
});
