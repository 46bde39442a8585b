import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignalingClient, SignalingError, type SignalingEvent } from '../../../sdk/app/src/signaling.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { collect, issueSignalingToken, joinRoom, type Participant } from '../../../test/helpers/signaling.ts';

const isJoinOf = (user: string) => (e: SignalingEvent) => e.type === 'join' && e.user_id === user;
const isLeaveOf = (user: string) => (e: SignalingEvent) => e.type === 'leave' && e.user_id === user;
const isMessage = (match: (data: unknown) => boolean) => (e: SignalingEvent) => e.type === 'message' && match(e.data);
const seqOf = (e: SignalingEvent): number => Number((e as { id: string }).id.split('.')[1]);

async function expectError(promise: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof SignalingError, String(err));
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    return true;
  });
}

describe('signaling: a room through the app SDK', () => {
  let server: ServedPlatform;
  let customer: Customer;
  let other: Customer;
  const clients: SignalingClient[] = [];
  const join = async (c: Customer, room: string, user: string): Promise<Participant> => {
    const p = await joinRoom(server.token, c, { room_id: room, user_id: user });
    clients.push(p.client);
    return p;
  };

  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'signaling'] });
    customer = await createCustomer(server);
    other = await createCustomer(server);
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.stop();
  });

  it('sees several participants join, and lists them', async () => {
    const alice = await join(customer, 'r-presence', 'alice');
    const bob = await join(customer, 'r-presence', 'bob');
    await alice.inbox.waitFor(isJoinOf('bob'), 5000, 'bob joining');
    const carol = await join(customer, 'r-presence', 'carol');
    await alice.inbox.waitFor(isJoinOf('carol'), 5000, 'carol joining');
    await bob.inbox.waitFor(isJoinOf('carol'), 5000, 'carol joining');

    const listed = await carol.client.participants();
    assert.deepEqual(listed.map((p) => p.user_id), ['alice', 'bob', 'carol']);
    assert.deepEqual(listed.map((p) => p.role), ['participant', 'participant', 'participant']);
    // nobody sees a join from before their own
    assert.equal(bob.inbox.events.some(isJoinOf('alice')), false);
    assert.equal(carol.inbox.events.some((e) => e.type === 'join'), false);
  });

  it('delivers a room message to everyone else, and a direct message to its recipient only', async () => {
    const alice = await join(customer, 'r-messages', 'alice');
    const bob = await join(customer, 'r-messages', 'bob');
    const carol = await join(customer, 'r-messages', 'carol');

    const room = await alice.client.send({ text: 'hello room' });
    assert.match(room.id, /^[A-Za-z0-9_-]+\.\d+$/);
    for (const p of [bob, carol]) {
      const got = await p.inbox.waitFor(isMessage((d) => (d as { text?: string }).text === 'hello room'), 5000, 'the room message');
      assert.equal(got.type === 'message' && got.from, 'alice');
      assert.equal(got.type === 'message' && got.to, undefined);
      assert.equal((got as { id: string }).id, room.id);
    }

    await alice.client.send({ text: 'only bob' }, { to: 'bob' });
    const direct = await bob.inbox.waitFor(isMessage((d) => (d as { text?: string }).text === 'only bob'), 5000, 'the direct message');
    assert.equal(direct.type === 'message' && direct.to, 'bob');
    // a later room message reaches carol, so had the direct one been sent to her it would be there already
    await alice.client.send({ text: 'after' });
    await carol.inbox.waitFor(isMessage((d) => (d as { text?: string }).text === 'after'), 5000, 'the later room message');
    assert.equal(carol.inbox.messages().some((m) => (m.data as { text?: string }).text === 'only bob'), false);
    // the sender never receives its own messages
    assert.equal(alice.inbox.messages().length, 0);

    await expectError(alice.client.send({ text: 'nobody' }, { to: 'dave' }), 404, 'not_found');
    // JSON values other than objects travel as they are
    await alice.client.send('a string');
    await alice.client.send([1, 2, 3]);
    await bob.inbox.waitFor(isMessage((d) => Array.isArray(d)), 5000, 'the array message');
    assert.deepEqual(bob.inbox.messages().slice(-2).map((m) => m.data), ['a string', [1, 2, 3]]);
  });

  it('keeps one sender\'s messages in order, with increasing ids seen alike by every reader', async () => {
    const alice = await join(customer, 'r-order', 'alice');
    const bob = await join(customer, 'r-order', 'bob');
    const carol = await join(customer, 'r-order', 'carol');
    const sent: string[] = [];
    for (let i = 0; i < 20; i += 1) sent.push((await alice.client.send({ n: i })).id);
    await bob.client.send({ from_bob: true });
    for (const p of [bob, carol]) {
      await p.inbox.waitFor(isMessage((d) => (d as { n?: number }).n === 19), 5000, 'the last message');
    }
    const bobSeen = bob.inbox.messages().map((m) => (m.data as { n: number }).n);
    assert.deepEqual(bobSeen, [...Array(20).keys()]);
    assert.deepEqual(bob.inbox.messages().map((m) => m.id), sent);
    await carol.inbox.waitFor(isMessage((d) => (d as { from_bob?: boolean }).from_bob === true), 5000, "bob's message");
    const carolIds = carol.inbox.messages().map((m) => m.id);
    assert.deepEqual(carolIds.slice(0, 20), sent);
    const seqs = carol.inbox.events.filter((e) => 'id' in e && e.type !== 'snapshot').map(seqOf);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  });

  it('tells the room when someone leaves, ends their stream and stops their messages', async () => {
    const alice = await join(customer, 'r-leave', 'alice');
    const bob = await join(customer, 'r-leave', 'bob');
    await bob.client.leave();
    const left = await alice.inbox.waitFor(isLeaveOf('bob'), 5000, 'bob leaving');
    assert.equal(left.type === 'leave' && left.reason, 'left');
    assert.equal(await bob.inbox.ended, undefined);
    assert.deepEqual((await alice.client.participants()).map((p) => p.user_id), ['alice']);

    // the token still works, but a session that left must join again before it sends
    const again = new SignalingClient({ url: bob.token.signaling.url, token: bob.token.signaling.token });
    await expectError(again.send({ late: true }), 409, 'conflict');
    await again.join();
    await alice.inbox.waitFor((e) => e.type === 'join' && e.user_id === 'bob' && seqOf(e) > seqOf(left), 5000, 'bob rejoining');
    await again.leave();
  });

  it('counts a user once however many sessions they hold', async () => {
    const alice = await join(customer, 'r-sessions', 'alice');
    const phone = await join(customer, 'r-sessions', 'bob');
    await alice.inbox.waitFor(isJoinOf('bob'), 5000, 'bob joining');
    const laptop = await join(customer, 'r-sessions', 'bob');
    assert.deepEqual((await alice.client.participants()).map((p) => p.user_id), ['alice', 'bob']);

    await alice.client.send({ to_bob: 1 }, { to: 'bob' });
    for (const p of [phone, laptop]) await p.inbox.waitFor(isMessage((d) => (d as { to_bob?: number }).to_bob === 1), 5000, 'the direct message');
    // a message from one of bob's sessions reaches his other session too
    await phone.client.send({ from_phone: 1 });
    await laptop.inbox.waitFor(isMessage((d) => (d as { from_phone?: number }).from_phone === 1), 5000, 'the phone message');

    await phone.client.leave();
    await alice.client.send({ marker: 1 });
    await laptop.inbox.waitFor(isMessage((d) => (d as { marker?: number }).marker === 1), 5000, 'the marker');
    assert.equal(alice.inbox.events.filter(isJoinOf('bob')).length, 1);
    assert.equal(alice.inbox.events.some(isLeaveOf('bob')), false);
    await laptop.client.leave();
    await alice.inbox.waitFor(isLeaveOf('bob'), 5000, 'bob leaving');
  });

  it('keeps the same room id of two projects apart', async () => {
    const mine = await join(customer, 'shared', 'alice');
    const mine2 = await join(customer, 'shared', 'bob');
    const theirs = await join(other, 'shared', 'alice');
    const theirs2 = await join(other, 'shared', 'mallory');

    await mine.client.send({ secret: 'project one' });
    await theirs.client.send({ secret: 'project two' });
    await mine2.inbox.waitFor(isMessage((d) => (d as { secret?: string }).secret === 'project one'), 5000, 'the message of project one');
    await theirs2.inbox.waitFor(isMessage((d) => (d as { secret?: string }).secret === 'project two'), 5000, 'the message of project two');
    assert.deepEqual(mine2.inbox.messages().map((m) => m.data), [{ secret: 'project one' }]);
    assert.deepEqual(theirs2.inbox.messages().map((m) => m.data), [{ secret: 'project two' }]);
    assert.equal(mine.inbox.events.some(isJoinOf('mallory')), false);
    assert.deepEqual((await mine.client.participants()).map((p) => p.user_id), ['alice', 'bob']);
    assert.deepEqual((await theirs.client.participants()).map((p) => p.user_id), ['alice', 'mallory']);
    // a user id present in the other project only is not a recipient here
    await expectError(mine.client.send({ x: 1 }, { to: 'mallory' }), 404, 'not_found');
  });

  it('starts a stream opened without Last-Event-ID with a snapshot of the room', async () => {
    const alice = await join(customer, 'r-snapshot', 'alice');
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-snapshot', user_id: 'bob' });
    const joined = await request(`${t.signaling.url}/v1/signaling/join`, { body: { token: t.signaling.token } });
    assert.equal(joined.status, 200, joined.text);
    const res = await fetch(`${t.signaling.url}/v1/signaling/events`, { headers: { authorization: `Bearer ${t.signaling.token}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const snapshot = /id: (\S+)\nevent: snapshot\ndata: (.*)\n\n/.exec(text);
    assert.ok(snapshot, text);
    assert.equal(snapshot[1], joined.json<{ last_event_id: string }>().last_event_id);
    const data = JSON.parse(snapshot[2]!) as { room_id: string; participants: { user_id: string }[]; reset: boolean };
    assert.equal(data.room_id, 'r-snapshot');
    assert.equal(data.reset, false);
    assert.deepEqual(data.participants.map((p) => p.user_id), ['alice', 'bob']);
    await alice.inbox.waitFor(isJoinOf('bob'), 5000, 'bob joining');
  });

  it('lets a client that has not joined list the room, but not stream it', async () => {
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-lurk', user_id: 'lurker' });
    const c = new SignalingClient({ url: t.signaling.url, token: t.signaling.token });
    assert.deepEqual(await c.participants(), []);
    const res = await request(`${t.signaling.url}/v1/signaling/events`, { headers: { authorization: `Bearer ${t.signaling.token}` } });
    assert.equal(res.status, 409);
    assert.equal(res.json()['error'], 'conflict');
    // the SDK joins first on its own, and opens the iteration with the join's view of the room
    const inbox = collect(c);
    await inbox.waitFor((e) => e.type === 'ready', 5000, 'the stream to open');
    const first = inbox.events[0]!;
    assert.equal(first.type, 'snapshot');
    assert.deepEqual(first.type === 'snapshot' && first.participants.map((p) => p.user_id), ['lurker']);
    assert.equal(c.lastEventId, (first as { id: string }).id);
    assert.deepEqual((await c.participants()).map((p) => p.user_id), ['lurker']);
    c.close();
    assert.equal(await inbox.ended, undefined);
  });
});
