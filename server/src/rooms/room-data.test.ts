import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MediaError, type MediaSession } from '../../../sdk/app/src/index.ts';
import { TokenApiError, TokenClient } from '../../../sdk/server/src/index.ts';
import { bearer, createCustomer } from '../../../test/helpers/customer.ts';
import { request, type HttpResult } from '../../../test/helpers/http.ts';
import { join, nextEvent, sleep } from '../../../test/helpers/media-session.ts';
import { useMediaPlatform } from '../../../test/helpers/media-platform.ts';

interface Participant { participant_id: string; user_id: string; metadata: string; attributes: Record<string, string> }
interface Room {
  room_id: string; media_node: string | null; metadata: string; max_participants: number; empty_timeout: number; participants: Participant[];
}
interface RoomList { rooms: Room[]; next_cursor: string | null }

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const utf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

async function refusal(promise: Promise<MediaSession>): Promise<MediaError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MediaError, `expected a MediaError, got ${String(err)}`);
  return err;
}

function expectError(res: HttpResult, status: number, error: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json<{ error: string }>().error, error);
}

describe('room metadata, participant attributes, data messages and room settings (room service API)', () => {
  const media = useMediaPlatform('roomdata');
  const { sessions, token } = media;
  const call = (method: string, path: string, body?: unknown, auth = media.issuer.customer.auth): Promise<HttpResult> =>
    request(`${media.server.api}/v1/rtc/rooms${path}`, { method, headers: { authorization: auth }, ...(body !== undefined && { body }) });
  const whenListed = async (room: string, count: number): Promise<Room> => {
    for (;; await sleep(20)) {
      const res = await call('GET', `/${room}`);
      if (res.status === 200 && res.json<Room>().participants.length === count) return res.json<Room>();
    }
  };

  it('creates a room ahead of time (idempotent), hands its metadata to joiners and its changes to everyone, and bounds its participants', async () => {
    const created = await call('POST', '', { room_id: 'rd-meta', metadata: 'v1', max_participants: 2, empty_timeout: 60 });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json<Room>(), {
      room_id: 'rd-meta', media_node: null, media_nodes: [], started_at: created.json<{ started_at: number }>().started_at, metadata: 'v1',
      max_participants: 2, empty_timeout: 60, participants: [],
    });
    const again = await call('POST', '', { room_id: 'rd-meta', metadata: 'other' });
    assert.equal(again.status, 200);
    assert.equal(again.json<Room>().metadata, 'v1');
    assert.equal((await call('GET', '/rd-meta')).json<Room>().participants.length, 0);

    const alice = await join(await token('alice', {}, 'rd-meta'));
    sessions.push(alice);
    assert.equal(alice.roomMetadata, 'v1');
    const changed = nextEvent(alice, 'roomMetadataChanged');
    const patched = await call('PATCH', '/rd-meta', { metadata: '{"title":"v2"}' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json<Room>().metadata, '{"title":"v2"}');
    assert.deepEqual(await changed, { metadata: '{"title":"v2"}' });
    assert.equal(alice.roomMetadata, '{"title":"v2"}');
    // a late joiner reads the current value in joined
    const bob = await join(await token('bob', {}, 'rd-meta'));
    sessions.push(bob);
    assert.equal(bob.roomMetadata, '{"title":"v2"}');
    // the third join of a room of two is refused with room_full
    const carol = await refusal(join(await token('carol', {}, 'rd-meta')));
    assert.equal(carol.closeCode, 4009);
    assert.equal(carol.code, 'room_full');
    const listed = await whenListed('rd-meta', 2);
    assert.equal(listed.max_participants, 2);
    // raised: the next join is admitted
    assert.equal((await call('PATCH', '/rd-meta', { max_participants: 3 })).status, 200);
    sessions.push(await join(await token('carol', {}, 'rd-meta')));
  });

  it('sets a participant\'s metadata and merges its attributes; every app and late joiners see them', async () => {
    const alice = await join(await token('alice', {}, 'rd-attrs'));
    const bob = await join(await token('bob', {}, 'rd-attrs'));
    sessions.push(alice, bob);
    await whenListed('rd-attrs', 2);
    const bobSees = nextEvent(bob, 'participantMetadataChanged');
    const aliceSees = nextEvent(alice, 'participantMetadataChanged');
    const first = await call('PATCH', `/rd-attrs/participants/${alice.participantId}`, { metadata: 'm1', attributes: { hand: 'up', mood: 'ok' } });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual([first.json<Participant>().metadata, first.json<Participant>().attributes], ['m1', { hand: 'up', mood: 'ok' }]);
    const seen = await bobSees;
    assert.deepEqual(seen, {
      participantId: alice.participantId, userId: 'alice', local: false, metadata: 'm1', attributes: { hand: 'up', mood: 'ok' },
      changedAttributes: ['hand', 'mood'], metadataChanged: true,
    });
    assert.equal((await aliceSees).local, true);
    assert.deepEqual(alice.attributes, { hand: 'up', mood: 'ok' });

    const merged = nextEvent(bob, 'participantMetadataChanged');
    const second = await call('PATCH', `/rd-attrs/participants/${alice.participantId}`, { attributes: { hand: null, mood: '', lang: 'fr' } });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.json<Participant>().attributes, { lang: 'fr' });
    assert.equal(second.json<Participant>().metadata, 'm1');
    const m = await merged;
    assert.deepEqual([m.attributes, [...m.changedAttributes].sort(), m.metadataChanged], [{ lang: 'fr' }, ['hand', 'lang', 'mood'], false]);
    assert.deepEqual(bob.participants().find((p) => p.userId === 'alice')?.attributes, { lang: 'fr' });
    const carol = await join(await token('carol', {}, 'rd-attrs'));
    sessions.push(carol);
    const aliceForCarol = carol.participants().find((p) => p.userId === 'alice');
    assert.deepEqual([aliceForCarol?.metadata, aliceForCarol?.attributes], ['m1', { lang: 'fr' }]);
    const room = await whenListed('rd-attrs', 3);
    assert.deepEqual(room.participants.find((p) => p.user_id === 'alice')?.attributes, { lang: 'fr' });
    // permissions alone leave the metadata as it is
    const perms = await call('PATCH', `/rd-attrs/participants/${alice.participantId}`, { subscribe_room: true });
    assert.equal(perms.json<Participant>().metadata, 'm1');
  });

  it('sends data to the whole room, to one participant only, to users, with a topic', async () => {
    const alice = await join(await token('alice', {}, 'rd-data'));
    const bob = await join(await token('bob', {}, 'rd-data'));
    const carol = await join(await token('carol', {}, 'rd-data'));
    sessions.push(alice, bob, carol);
    await whenListed('rd-data', 3);
    const everyone = [alice, bob, carol].map((s) => nextEvent(s, 'serverData'));
    const all = await call('POST', '/rd-data/data', { data: b64('hello room') });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.json<object>(), { sent: true, recipients: 3 });
    for (const got of await Promise.all(everyone)) assert.deepEqual([utf8(got.data), got.topic], ['hello room', null]);

    // to bob alone: the next message alice and carol receive is the broadcast that follows it
    const next = [alice, bob, carol].map((s) => nextEvent(s, 'serverData'));
    const one = await call('POST', '/rd-data/data', { data: b64('for bob'), destination_participant_ids: [bob.participantId], reliable: true });
    assert.deepEqual(one.json<object>(), { sent: true, recipients: 1 });
    assert.equal(utf8((await next[1]!).data), 'for bob');
    const byUser = nextEvent(carol, 'serverData', 5000, (d) => d.topic === 'poll');
    const topic = await call('POST', '/rd-data/data', { data: b64('lunch?'), topic: 'poll', destination_user_ids: ['carol', 'nobody'] });
    assert.deepEqual(topic.json<object>(), { sent: true, recipients: 1 });
    await call('POST', '/rd-data/data', { data: b64('after') });
    assert.equal(utf8((await next[0]!).data), 'after');
    assert.deepEqual([utf8((await next[2]!).data), (await next[2]!).topic], ['lunch?', 'poll']);
    assert.equal(utf8((await byUser).data), 'lunch?');
  });

  it('keeps an emptied room listed for its empty_timeout, then finishes it', async () => {
    assert.equal((await call('POST', '', { room_id: 'rd-empty', metadata: 'kept', empty_timeout: 2 })).status, 201);
    const alice = await join(await token('alice', {}, 'rd-empty'));
    await whenListed('rd-empty', 1);
    await alice.close();
    const kept = await whenListed('rd-empty', 0);
    assert.deepEqual([kept.media_node, kept.metadata, kept.empty_timeout], [null, 'kept', 2]);
    for (let res = await call('GET', '/rd-empty'); res.status !== 404; res = await call('GET', '/rd-empty')) {
      assert.equal(res.status, 200);
      await sleep(100);
    }
    // finished: a new join starts a room without the old settings
    const bob = await join(await token('bob', {}, 'rd-empty'));
    sessions.push(bob);
    assert.equal(bob.roomMetadata, '');
    // a room that arose from joins gets settings from a PATCH, and loses them when it empties (empty_timeout 0)
    const patched = await call('PATCH', '/rd-empty', { metadata: 'live' });
    assert.deepEqual([patched.json<Room>().metadata, patched.json<Room>().empty_timeout], ['live', 0]);
  });

  it('pages the room list by room id with a stable cursor, and filters by room id', async () => {
    const ids = ['rd-page-a', 'rd-page-b', 'rd-page-c', 'rd-page-d', 'rd-page-e'];
    for (const id of ids) assert.equal((await call('POST', '', { room_id: id })).status, 201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      assert.equal(res.status, 200, res.text);
      const page = res.json<RoomList>();
      assert.ok(page.rooms.length <= 2);
      seen.push(...page.rooms.map((r) => r.room_id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    assert.deepEqual(seen.filter((id) => ids.includes(id)), ids);
    assert.equal(new Set(seen).size, seen.length);
    assert.deepEqual([...seen].sort(), seen);
    const filtered = await call('GET', '?room_ids=rd-page-d,rd-page-b,rd-nothing');
    assert.deepEqual(filtered.json<RoomList>(), {
      rooms: filtered.json<RoomList>().rooms, next_cursor: null,
    });
    assert.deepEqual(filtered.json<RoomList>().rooms.map((r) => r.room_id), ['rd-page-b', 'rd-page-d']);
    const first = (await call('GET', '?room_ids=rd-page-a,rd-page-b,rd-page-c&limit=1')).json<RoomList>();
    assert.deepEqual(first.rooms.map((r) => r.room_id), ['rd-page-a']);
    const second = (await call('GET', `?room_ids=rd-page-a,rd-page-b,rd-page-c&limit=1&cursor=${first.next_cursor!}`)).json<RoomList>();
    assert.deepEqual(second.rooms.map((r) => r.room_id), ['rd-page-b']);
    // a cursor of other filters, a bad limit or an unknown parameter is 400
    expectError(await call('GET', `?limit=1&cursor=${first.next_cursor!}`), 400, 'invalid_request');
    expectError(await call('GET', '?limit=0'), 400, 'invalid_request');
    expectError(await call('GET', '?names=a'), 400, 'invalid_request');
  });

  it('refuses bad bodies, unknown rooms, other projects and missing scopes in the documented format', async () => {
    const alice = await join(await token('alice', {}, 'rd-errors'));
    sessions.push(alice);
    await whenListed('rd-errors', 1);
    expectError(await call('PATCH', '/rd-errors', { metadata: 'x'.repeat(16_385) }), 400, 'invalid_request');
    expectError(await call('POST', '', { room_id: 'rd-x', max_participants: 257 }), 400, 'invalid_request');
    expectError(await call('POST', '', { room_id: 'rd-x', unknown: 1 }), 400, 'invalid_request');
    expectError(await call('PATCH', `/rd-errors/participants/${alice.participantId}`, { metadata: 'x'.repeat(4097) }), 400, 'invalid_request');
    const tooMany = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']));
    expectError(await call('PATCH', `/rd-errors/participants/${alice.participantId}`, { attributes: tooMany }), 400, 'invalid_request');
    expectError(await call('PATCH', `/rd-errors/participants/${alice.participantId}`, { attributes: { k: 1 } }), 400, 'invalid_request');
    expectError(await call('POST', '/rd-errors/data', { data: 'not base64!' }), 400, 'invalid_request');
    expectError(await call('POST', '/rd-errors/data', { data: 'QQ=' }), 400, 'invalid_request');
    expectError(await call('POST', '/rd-errors/data', { data: b64('x'.repeat(16_385)) }), 400, 'invalid_request');
    expectError(await call('PATCH', `/rd-no-such-room/participants/${alice.participantId}`, { metadata: 'x' }), 404, 'not_found');
    expectError(await call('PATCH', '/rd-no-such-room', { metadata: 'x' }), 404, 'not_found');
    expectError(await call('POST', '/rd-no-such-room/data', { data: b64('x') }), 404, 'not_found');
    const other = await createCustomer({ api: media.server.api, token: media.server.api, request });
    expectError(await call('PATCH', `/rd-errors/participants/${alice.participantId}`, { metadata: 'x' }, other.auth), 404, 'not_found');
    expectError(await call('PATCH', '/rd-errors', { metadata: 'x' }, other.auth), 404, 'not_found');
    expectError(await call('POST', '/rd-errors/data', { data: b64('x') }, other.auth), 404, 'not_found');
    const { customer } = media.issuer;
    const created = await request(`${media.server.api}/v1/projects/${customer.projectId}/credentials`, {
      headers: bearer(customer.accessToken), body: { scopes: ['subscriber'] },
    });
    const sub = created.json<{ app_id: string; app_secret: string }>();
    const subscriberOnly = `Basic ${Buffer.from(`${sub.app_id}:${sub.app_secret}`).toString('base64')}`;
    expectError(await call('POST', '/rd-errors/data', { data: b64('x') }, subscriberOnly), 403, 'scope_denied');
    expectError(await call('POST', '/rd-errors/data', { data: b64('x') }, 'Basic eDp5'), 401, 'invalid_credentials');
  });

  it('offers every operation in the server SDK', async () => {
    const { customer } = media.issuer;
    const tokens = new TokenClient({ baseUrl: media.server.api, appId: customer.appId, appSecret: customer.appSecret });
    const room = await tokens.createRoom({ room_id: 'rd-sdk', metadata: 'a', empty_timeout: 30 });
    assert.deepEqual([room.metadata, room.empty_timeout], ['a', 30]);
    const alice = await join(await token('alice', {}, 'rd-sdk'));
    sessions.push(alice);
    await whenListed('rd-sdk', 1);
    const meta = nextEvent(alice, 'roomMetadataChanged');
    assert.equal((await tokens.updateRoomMetadata('rd-sdk', 'b')).metadata, 'b');
    await meta;
    const attrs = nextEvent(alice, 'participantMetadataChanged');
    const p = await tokens.updateParticipant('rd-sdk', alice.participantId, { attributes: { seat: '4' } });
    assert.deepEqual(p.attributes, { seat: '4' });
    assert.deepEqual((await attrs).attributes, { seat: '4' });
    const data = nextEvent(alice, 'serverData');
    assert.deepEqual(await tokens.sendData('rd-sdk', new Uint8Array([0, 1, 255]), { topic: 'bin' }), { sent: true, recipients: 1 });
    const got = await data;
    assert.deepEqual([[...got.data], got.topic], [[0, 1, 255], 'bin']);
    const page = await tokens.listRooms({ roomIds: ['rd-sdk'], limit: 1 });
    assert.deepEqual([page.rooms.map((r) => r.room_id), page.next_cursor], [['rd-sdk'], null]);
    const missing = await tokens.updateRoom('rd-sdk-none', { metadata: 'x' }).then(() => undefined, (e: unknown) => e);
    assert.ok(missing instanceof TokenApiError && missing.code === 'not_found');
  });
});
