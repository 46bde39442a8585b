import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MediaError, type MediaSession } from '../../../sdk/app/src/index.ts';
import { TokenApiError, TokenClient } from '../../../sdk/server/src/index.ts';
import { bearer, createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request, type HttpResult } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { collectFrames, join, nextEvent, sleep, text, TokenIssuer, until } from '../../../test/helpers/media-session.ts';
import { useMediaPlatform } from '../../../test/helpers/media-platform.ts';

interface Participant {
  participant_id: string; user_id: string; role: string; publish_streams: number[]; subscribe_streams: number[];
  subscribe_room: boolean; joined_at: number;
}
interface Room { room_id: string; media_node: string; started_at: number; participants: Participant[] }

/** The room service API of one credential on one host. */
function roomApi(host: () => string, auth: () => string) {
  const call = (method: string, path: string, body?: unknown): Promise<HttpResult> =>
    request(`${host()}/v1/rtc/rooms${path}`, { method, headers: { authorization: auth() }, ...(body !== undefined && { body }) });
  return {
    call,
    list: () => call('GET', ''),
    get: (room: string) => call('GET', `/${encodeURIComponent(room)}`),
    remove: (room: string, participant: string) => call('POST', `/${encodeURIComponent(room)}/participants/${participant}/remove`),
    end: (room: string) => call('POST', `/${encodeURIComponent(room)}/end`),
    update: (room: string, participant: string, body: unknown) => call('PATCH', `/${encodeURIComponent(room)}/participants/${participant}`, body),
    /** The room once `count` participants are listed (the media node records a join just after it). */
    async whenListed(room: string, count: number): Promise<Room> {
      for (;; await sleep(20)) {
        const res = await call('GET', `/${encodeURIComponent(room)}`);
        if (count === 0 && res.status === 404) return { room_id: room, media_node: '', started_at: 0, participants: [] };
        if (res.status === 200 && res.json<Room>().participants.length === count) return res.json<Room>();
      }
    },
  };
}

async function refusal(promise: Promise<MediaSession>): Promise<MediaError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MediaError, `expected a MediaError, got ${String(err)}`);
  return err;
}

describe('room service API on one process (api, token, media)', () => {
  const media = useMediaPlatform('rooms-main');
  const { sessions, token } = media;
  const api = roomApi(() => media.server.api, () => media.issuer.customer.auth);

  it('lists the live rooms and their participants, by room id, on the api and token hosts alike', async () => {
    const alice = await join(await token('alice', { publish_streams: [1] }, 'rooms-list-1'));
    const bob = await join(await token('bob', { role: 'audience' }, 'rooms-list-1'));
    const carol = await join(await token('carol', {}, 'rooms-list-2'));
    sessions.push(alice, bob, carol);
    const room = await api.whenListed('rooms-list-1', 2);
    await api.whenListed('rooms-list-2', 1);
    const mediaPort = new URL(media.server.urls['media']!).port;
    assert.equal(room.room_id, 'rooms-list-1');
    assert.equal(room.media_node, `127.0.0.1:${mediaPort}`);
    assert.ok(Math.abs(room.started_at - Date.now() / 1000) < 60);
    assert.deepEqual(room.participants.map((p) => [p.participant_id, p.user_id, p.role, p.publish_streams, p.subscribe_streams, p.subscribe_room]), [
      [alice.participantId, 'alice', 'speaker', [1], [], true],
      [bob.participantId, 'bob', 'audience', [], [], true],
    ]);
    for (const host of [media.server.api, media.server.token]) {
      const listed = await request(`${host}/v1/rtc/rooms`, { method: 'GET', headers: { authorization: media.issuer.customer.auth } });
      assert.equal(listed.status, 200);
      const rooms = listed.json<{ rooms: Room[] }>().rooms.filter((r) => r.room_id.startsWith('rooms-list-'));
      assert.deepEqual(rooms.map((r) => r.room_id), ['rooms-list-1', 'rooms-list-2']);
    }
    assert.equal((await api.get('rooms-nobody')).status, 404);
    assert.equal((await api.get('rooms-nobody')).json<{ error: string }>().error, 'not_found');
  });

  it('removes a participant: its session closes within a second (4003), its grant is refused, the others stay', async () => {
    const aliceToken = await token('alice', { publish_streams: [1] }, 'rooms-remove');
    const carolToken = await token('carol', {}, 'rooms-remove');
    const alice = await join(aliceToken);
    const carol = await join(carolToken);
    sessions.push(alice, carol);
    await api.whenListed('rooms-remove', 2);
    const disconnected = nextEvent(carol, 'disconnected');
    const aliceSeesLeave = nextEvent(alice, 'participantLeft', 3000, (p) => p.userId === 'carol');
    const res = await api.remove('rooms-remove', carol.participantId);
    const returnedAt = performance.now();
    assert.equal(res.status, 200, res.text);
    const { cut_off_at: cutOffAt, ...removed } = res.json<{ cut_off_at: number }>();
    assert.deepEqual(removed, { removed: true, user_id: 'carol' });
    assert.ok(Math.abs(cutOffAt - Date.now() / 1000) < 60);
    const info = await disconnected;
    assert.ok(performance.now() - returnedAt < 1000);
    assert.equal(info.code, 4003);
    assert.equal(info.willReconnect, false);
    await aliceSeesLeave;
    assert.equal(alice.state, 'connected');
    assert.equal((await refusal(join(carolToken))).closeCode, 4003);
    const room = await api.whenListed('rooms-remove', 1);
    assert.equal(room.participants[0]!.user_id, 'alice');
    assert.equal((await api.remove('rooms-remove', carol.participantId)).status, 404);
    // a new token issued after the cut-off's second lets the user back in (iat has whole seconds)
    await until(() => Math.floor(Date.now() / 1000) > cutOffAt, 2000, 'the second after the cut-off');
    sessions.push(await join(await token('carol', {}, 'rooms-remove')));
  });

  it('changes a live participant\'s permissions at once: publish taken away stops its frames, given back works', async () => {
    const alice = await join(await token('alice', { publish_streams: [1] }, 'rooms-update'));
    const bob = await join(await token('bob', {}, 'rooms-update'));
    sessions.push(alice, bob);
    await api.whenListed('rooms-update', 2);
    const got = collectFrames(bob);
    const stream = await alice.publish(1, 'audio');
    await until(() => bob.streams().some((s) => s.subscribed), 3000, 'bob subscribed');
    await stream.send(text('before'));
    await until(() => got.frames.length === 1, 3000, 'frame before');

    const permissions = nextEvent(alice, 'permissions');
    const ended = nextEvent(alice, 'localStreamEnded');
    const removed = nextEvent(bob, 'streamRemoved');
    const res = await api.update('rooms-update', alice.participantId, { publish_streams: [] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json<Participant>().publish_streams, []);
    assert.equal(res.json<Participant>().participant_id, alice.participantId);
    assert.deepEqual(await permissions, { publishStreams: [], subscribeStreams: [], subscribeRoom: true });
    assert.equal((await ended).streamId, 1);
    await removed;
    await assert.rejects(alice.publish(1, 'audio'), (err: unknown) => err instanceof MediaError && err.code === 'stream_not_allowed');
    assert.deepEqual((await api.get('rooms-update')).json<Room>().participants[0]!.publish_streams, []);

    const given = nextEvent(alice, 'permissions');
    assert.equal((await api.update('rooms-update', alice.participantId, { publish_streams: [1] })).status, 200);
    assert.deepEqual((await given).publishStreams, [1]);
    const again = await alice.publish(1, 'audio');
    await until(() => bob.streams().some((s) => s.subscribed), 3000, 'bob subscribed again');
    await again.send(text('after'));
    await until(() => got.frames.length === 2, 3000, 'frame after');
    assert.deepEqual(got.texts(), ['1:before', '1:after']);
    assert.equal(alice.state, 'connected');
    assert.equal(bob.state, 'connected');

    // subscriptions change too: bob receives nothing once subscribe_room is off
    const unsubscribed = nextEvent(bob, 'streamUpdated', 3000, (s) => !s.subscribed);
    const bobRes = await api.update('rooms-update', bob.participantId, { subscribe_streams: [] });
    assert.deepEqual([bobRes.json<Participant>().subscribe_room, bobRes.json<Participant>().subscribe_streams], [false, []]);
    await unsubscribed;
  });

  it('refuses permissions beyond the role and the credential\'s scopes', async () => {
    const viewer = await join(await token('viewer', { role: 'audience' }, 'rooms-scopes'));
    const speaker = await join(await token('speaker', {}, 'rooms-scopes'));
    sessions.push(viewer, speaker);
    await api.whenListed('rooms-scopes', 2);
    const audience = await api.update('rooms-scopes', viewer.participantId, { publish_streams: [1] });
    assert.equal(audience.status, 400);
    const bothWays = await api.update('rooms-scopes', speaker.participantId, { subscribe_room: true, subscribe_streams: [1] });
    assert.equal(bothWays.status, 400);
    const { customer } = media.issuer;
    const created = await request(`${media.server.api}/v1/projects/${customer.projectId}/credentials`, {
      headers: bearer(customer.accessToken), body: { scopes: ['subscriber'] },
    });
    const sub = created.json<{ app_id: string; app_secret: string }>();
    const subscriberOnly = roomApi(() => media.server.api, () => `Basic ${Buffer.from(`${sub.app_id}:${sub.app_secret}`).toString('base64')}`);
    const denied = await subscriberOnly.update('rooms-scopes', speaker.participantId, { publish_streams: [1] });
    assert.equal(denied.status, 403);
    assert.equal(denied.json<{ error: string }>().error, 'scope_denied');
    assert.equal((await subscriberOnly.update('rooms-scopes', speaker.participantId, { subscribe_streams: [3] })).status, 200);
  });

  it('ends a room: every session closes (4003) and the room is gone', async () => {
    const dave = await join(await token('dave', {}, 'rooms-end'));
    const erin = await join(await token('erin', {}, 'rooms-end'));
    const bystander = await join(await token('frank', {}, 'rooms-not-ended'));
    sessions.push(dave, erin, bystander);
    await api.whenListed('rooms-end', 2);
    const closed = [nextEvent(dave, 'disconnected'), nextEvent(erin, 'disconnected')];
    const res = await api.end('rooms-end');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual({ ...res.json<object>(), cut_off_at: 0 }, { ended: true, participants: 2, cut_off_at: 0 });
    for (const info of await Promise.all(closed)) assert.equal(info.code, 4003);
    await api.whenListed('rooms-end', 0);
    // ended again, with nobody left: stored all the same (docs/reference/room-api.md)
    const again = await api.end('rooms-end');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json<{ participants: number }>().participants, 0);
    assert.equal(bystander.state, 'connected');
  });

  it('is served to the server SDK: listRooms, getRoom, updateParticipant, removeParticipant, endRoom', async () => {
    const { customer } = media.issuer;
    const tokens = new TokenClient({ baseUrl: media.server.api, appId: customer.appId, appSecret: customer.appSecret });
    const judy = await join(await token('judy', { publish_streams: [4] }, 'rooms-sdk'));
    const kim = await join(await token('kim', {}, 'rooms-sdk'));
    sessions.push(judy, kim);
    await api.whenListed('rooms-sdk', 2);
    assert.ok((await tokens.listRooms()).rooms.some((r) => r.room_id === 'rooms-sdk'));
    assert.deepEqual((await tokens.getRoom('rooms-sdk')).participants.map((p) => p.user_id), ['judy', 'kim']);
    const muted = nextEvent(judy, 'permissions');
    assert.deepEqual((await tokens.updateParticipant('rooms-sdk', judy.participantId, { publish_streams: [] })).publish_streams, []);
    await muted;
    const judyGone = nextEvent(judy, 'disconnected');
    await tokens.removeParticipant('rooms-sdk', judy.participantId);
    assert.equal((await judyGone).code, 4003);
    await api.whenListed('rooms-sdk', 1);
    assert.equal((await tokens.endRoom('rooms-sdk')).participants, 1);
    await api.whenListed('rooms-sdk', 0);
    await assert.rejects(tokens.getRoom('rooms-sdk'), (err: unknown) => err instanceof TokenApiError && err.code === 'not_found' && err.status === 404);
  });

  it('checks callers like the token API: one 401, another project sees nothing, an archived project is 403', async () => {
    const grace = await join(await token('grace', {}, 'rooms-private'));
    sessions.push(grace);
    await api.whenListed('rooms-private', 1);
    const { customer } = media.issuer;
    const wrongSecret = roomApi(() => media.server.api, () => `Basic ${Buffer.from(`${customer.appId}:wrong`).toString('base64')}`);
    const unknownApp = roomApi(() => media.server.api, () => `Basic ${Buffer.from('app_AAAAAAAAAAAAAAAAAAAAAA:wrong').toString('base64')}`);
    const [a, b] = [await wrongSecret.list(), await unknownApp.list()];
    assert.equal(a.status, 401);
    assert.equal(a.text, b.text);
    const browser = await request(`${media.server.api}/v1/rtc/rooms`, { method: 'GET', headers: { authorization: customer.auth, origin: 'https://example.test' } });
    assert.equal(browser.status, 403);

    const other: Customer = await createCustomer({ api: media.server.api, token: media.server.token, request });
    const otherApi = roomApi(() => media.server.api, () => other.auth);
    assert.deepEqual((await otherApi.list()).json(), { rooms: [], next_cursor: null });
    assert.equal((await otherApi.get('rooms-private')).status, 404);
    assert.equal((await otherApi.remove('rooms-private', grace.participantId)).status, 404);
    // another project's room of the same name is another room: ending it ends nobody here
    assert.equal((await otherApi.end('rooms-private')).json<{ participants: number }>().participants, 0);
    assert.equal((await otherApi.update('rooms-private', grace.participantId, { publish_streams: [] })).status, 404);
    assert.equal(grace.state, 'connected');

    const archived = await request(`${media.server.api}/v1/projects/${other.projectId}/archive`, { method: 'POST', headers: bearer(other.accessToken) });
    assert.equal(archived.status, 200);
    const refused = await otherApi.list();
    assert.equal(refused.status, 403);
    assert.equal(refused.json<{ error: string }>().error, 'project_archived');
  });

  it('serves the console the same rooms with its session: list, get, remove; another account\'s project is 404', async () => {
    const henry = await join(await token('henry', {}, 'rooms-console'));
    const ivy = await join(await token('ivy', {}, 'rooms-console'));
    sessions.push(henry, ivy);
    await api.whenListed('rooms-console', 2);
    const { customer } = media.issuer;
    const consoleCall = (who: Customer, method: string, path: string): Promise<HttpResult> =>
      request(`${media.server.api}/v1/projects/${who.projectId}/rooms${path}`, { method, headers: bearer(who.accessToken) });
    const listed = await consoleCall(customer, 'GET', '');
    assert.equal(listed.status, 200);
    // the same answer as the room service API gives the project's credential
    assert.deepEqual(listed.json(), (await api.list()).json());
    const room = (await consoleCall(customer, 'GET', '/rooms-console')).json<Room>();
    assert.deepEqual(room.participants.map((p) => p.user_id), ['henry', 'ivy']);

    // no session, or another account's session: nothing to see, nothing to remove
    assert.equal((await request(`${media.server.api}/v1/projects/${customer.projectId}/rooms`, { method: 'GET' })).status, 401);
    const other: Customer = await createCustomer({ api: media.server.api, token: media.server.token, request });
    const stranger = { ...other, projectId: customer.projectId };
    assert.equal((await consoleCall(stranger, 'GET', '')).status, 404);
    assert.equal((await consoleCall(stranger, 'POST', `/rooms-console/participants/${ivy.participantId}/remove`)).status, 404);
    assert.equal(ivy.state, 'connected');
    // the credential is not a console session
    const withCredential = await request(`${media.server.api}/v1/projects/${customer.projectId}/rooms`, { method: 'GET', headers: { authorization: customer.auth } });
    assert.equal(withCredential.status, 401);

    const disconnected = nextEvent(ivy, 'disconnected');
    const removed = await consoleCall(customer, 'POST', `/rooms-console/participants/${ivy.participantId}/remove`);
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual({ ...removed.json<object>(), cut_off_at: 0 }, { removed: true, user_id: 'ivy', cut_off_at: 0 });
    assert.equal((await disconnected).code, 4003);
    assert.equal(henry.state, 'connected');
  });
});

const GENEROUS_LIMITS = { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000' };

describe('room service API with api/token and media in separate processes on one data directory', () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-rooms-split-'));
  let mediaServer: ServedPlatform;
  let apiServer: ServedPlatform;
  let issuer: TokenIssuer;
  const sessions: MediaSession[] = [];

  before(async () => {
    mediaServer = await serveInProcess({ dataDir, roles: ['media'], env: GENEROUS_LIMITS });
    apiServer = await serveInProcess({
      dataDir, roles: ['api', 'token'], env: { ...GENEROUS_LIMITS, RTC_MEDIA_PUBLIC_PORT: new URL(mediaServer.urls['media']!).port },
    });
    issuer = await TokenIssuer.create(() => apiServer.api);
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await Promise.all([apiServer?.stop(), mediaServer?.stop()]);
  });

  it('lists the participants the media process holds, and a remove there closes the session (4003)', async () => {
    const api = roomApi(() => apiServer.api, () => issuer.customer.auth);
    const hank = await join(await issuer.issue({ room_id: 'split-rooms', user_id: 'hank', role: 'speaker', publish_streams: [1] }));
    const ivy = await join(await issuer.issue({ room_id: 'split-rooms', user_id: 'ivy', role: 'speaker', subscribe_room: true }));
    sessions.push(hank, ivy);
    const room = await api.whenListed('split-rooms', 2);
    assert.deepEqual(room.participants.map((p) => p.participant_id), [hank.participantId, ivy.participantId]);
    assert.equal(room.media_node, `127.0.0.1:${new URL(mediaServer.urls['media']!).port}`);

    const permissions = nextEvent(ivy, 'permissions');
    assert.equal((await api.update('split-rooms', ivy.participantId, { subscribe_streams: [1] })).status, 200);
    assert.deepEqual(await permissions, { publishStreams: [], subscribeStreams: [1], subscribeRoom: false });

    const disconnected = nextEvent(hank, 'disconnected');
    assert.equal((await api.remove('split-rooms', hank.participantId)).status, 200);
    const returnedAt = performance.now();
    assert.equal((await disconnected).code, 4003);
    assert.ok(performance.now() - returnedAt < 1000);
    assert.equal(ivy.state, 'connected');
    await api.whenListed('split-rooms', 1);
  });
});
