/**
 * One room over two media nodes: two media roles served in this process on one data directory, as
 * two workers of `rtc serve` on the embedded default (RTC_MEDIA_WORKER_INDEX 0 and 1: the store's file
 * holds placement, and carries the bus between them), each taking two sessions
 * (RTC_MEDIA_MAX_SESSIONS=2), so that a room of four spans both by placement alone. Its participants
 * see each other, the room service API acts on and shows every node, and webhooks tell of it once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../../../sdk/app/src/index.ts';
import { bearer } from '../../../../test/helpers/customer.ts';
import { request } from '../../../../test/helpers/http.ts';
import { collectFrames, join, nextEvent, text, TokenIssuer, until } from '../../../../test/helpers/media-session.ts';
import { MEDIA_TEST_ENV, serveMedia } from '../../../../test/helpers/media-platform.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { makeCertificate } from '../../../../test/helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../test/helpers/webhook-receiver.ts';

interface RoomView {
  media_node: string | null;
  media_nodes: string[];
  participants: { participant_id: string; user_id: string; media_node: string }[];
}

describe('a room across two media nodes, placed by load', () => {
  const dir = mkdtempSync(joinPath(tmpdir(), 'rtc-span-'));
  let a: ServedPlatform;
  let b: ServedPlatform;
  let issuer: TokenIssuer;
  let receiver: WebhookReceiver;
  const sessions: MediaSession[] = [];
  const nodeOf = (token: TokenResponse): string => `${token.media.sfu_host}:${token.media.sfu_port}`;
  const roomApi = (path: string, method = 'GET', body?: unknown) => request(`${a.api}/v1/rtc/rooms/${path}`, {
    method, headers: { authorization: issuer.customer.auth }, ...(body !== undefined && { body }),
  });
  const enter = async (room: string, user: string): Promise<{ token: TokenResponse; session: MediaSession }> => {
    const token = await issuer.issue({ room_id: room, user_id: user, role: 'speaker', subscribe_room: true, publish_streams: [1, 2, 3] });
    const session = await join(token);
    sessions.push(session);
    return { token, session };
  };
  const others = (session: MediaSession): string[] => session.participants().map((p) => p.userId).sort();
  const listed = async (room: string, count: number): Promise<void> => {
    while ((await roomApi(room)).json<RoomView>().participants.length !== count) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  before(async () => {
    const tls = makeCertificate(dir);
    receiver = await startWebhookReceiver(tls);
    const env = {
      ...MEDIA_TEST_ENV, RTC_MEDIA_MAX_SESSIONS: '2', RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: tls.certFile,
      RTC_WEBHOOK_RETRY_BASE_MS: '100',
    };
    a = await serveMedia({ env: { ...env, RTC_MEDIA_WORKER_INDEX: '0' } });
    b = await serveInProcess({ roles: ['media'], dataDir: a.dataDir, env: { ...env, RTC_MEDIA_WORKER_INDEX: '1' } });
    issuer = await TokenIssuer.create(() => a.api);
    const { customer } = issuer;
    const created = await request(`${a.api}/v1/projects/${customer.projectId}/webhooks`, {
      headers: bearer(customer.accessToken),
      body: { url: receiver.url, event_types: ['room.started', 'room.finished', 'participant.joined', 'participant.left'] },
    });
    assert.equal(created.status, 201, created.text);
    receiver.secrets = [created.json<{ secret: string }>().secret];
    // both nodes announced in the data directory's placement tables
    for (;;) {
      const { regions } = (await request(`${a.api}/v1/public/platform/catalog`)).json<{ regions: { media_hosts: unknown[] }[] }>();
      if (regions.flatMap((r) => r.media_hosts).length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await b?.stop();
    await a?.stop();
    await receiver?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('places four participants two by two, and each sees the three others, its `joined` included, with their changes', { timeout: 60_000 }, async () => {
    const room = 'span';
    const joined: { token: TokenResponse; session: MediaSession }[] = [];
    for (const user of ['u1', 'u2']) joined.push(await enter(room, user));
    // the store lists the first node's two: the second node shows them from its first `joined` on
    await listed(room, 2);
    joined.push(await enter(room, 'u3'));
    const [first, second, third] = joined.map((j) => nodeOf(j.token));
    assert.equal(first, second, 'a node takes two sessions');
    assert.notEqual(third, first, 'the room opens on the other node when its first is full');
    assert.deepEqual(others(joined[2]!.session), ['u1', 'u2'], 'the `joined` of the first member on the second node lists the first node\'s');
    joined.push(await enter(room, 'u4'));
    assert.equal(nodeOf(joined[3]!.token), third);
    assert.deepEqual(others(joined[3]!.session), ['u1', 'u2', 'u3']);
    for (const [i, { session }] of joined.entries()) {
      await until(() => others(session).length === 3, 5000, `u${i + 1} sees the three others`);
      assert.deepEqual(others(session), ['u1', 'u2', 'u3', 'u4'].filter((u) => u !== `u${i + 1}`));
    }

    // metadata set on one node's participant reaches the other node's members
    const u1 = joined[0]!.session;
    const changed = nextEvent(joined[3]!.session, 'participantMetadataChanged', 5000, (c) => c.participantId === u1.participantId);
    const patched = await roomApi(`${room}/participants/${u1.participantId}`, 'PATCH', { metadata: 'presenter', attributes: { hand: 'up' } });
    assert.equal(patched.status, 200, patched.text);
    const change = await changed;
    assert.deepEqual([change.userId, change.metadata, change.attributes], ['u1', 'presenter', { hand: 'up' }]);

    // a data message of the customer's server reaches every participant, on both nodes
    const data = joined.map(({ session }) => nextEvent(session, 'serverData'));
    assert.equal((await roomApi(`${room}/data`, 'POST', { data: Buffer.from('hello').toString('base64') })).status, 200);
    for (const got of await Promise.all(data)) assert.equal(Buffer.from(got.data).toString(), 'hello');

    // a data stream of a participant on one node reaches the subscribers of both, in order
    const received = [joined[1]!.session, joined[2]!.session].map((session) => collectFrames(session));
    const published = await u1.publish(1, 'data');
    await until(() => joined[2]!.session.streams().some((st) => st.streamId === 1 && st.participantId === u1.participantId), 5000,
      'the stream shown on the other node, with its publisher');
    for (let i = 0; i < 3; i++) await published.send(text(`m${i}`));
    for (const r of received) {
      await until(() => r.texts().length === 3, 5000, 'three frames');
      assert.deepEqual(r.texts(), ['1:m0', '1:m1', '1:m2']);
    }
    assert.deepEqual(received[1]!.frames.map((f) => f.userId), ['u1', 'u1', 'u1']);
    // a mute of the customer's server is told on both nodes
    const muted = [joined[1]!.session, joined[2]!.session].map((session) => nextEvent(session, 'streamMuted', 5000, (m) => m.streamId === 1));
    const mute = await roomApi(`${room}/participants/${u1.participantId}/streams/1/mute`, 'POST', { muted: true });
    assert.equal(mute.status, 200, mute.text);
    for (const m of await Promise.all(muted)) assert.deepEqual(m, { streamId: 1, participantId: u1.participantId, muted: true });
    await published.close();

    // so does an audio stream sent as WebSocket frames (a client without WebRTC)
    const heard = [joined[1]!.session, joined[2]!.session].map((session) => collectFrames(session));
    const audio = await u1.publish(2, 'audio');
    await until(() => joined[2]!.session.streams().some((st) => st.streamId === 2 && st.participantId === u1.participantId), 5000,
      'the audio stream shown on the other node');
    for (let i = 0; i < 3; i++) await audio.send(text(`a${i}`));
    for (const r of heard) {
      await until(() => r.texts().length === 3, 5000, 'three audio frames');
      assert.deepEqual(r.texts(), ['2:a0', '2:a1', '2:a2']);
    }
    await audio.close();
    // and a video sent as WebSocket frames, to subscribers that have no WebRTC down track for it
    const seen = [joined[1]!.session, joined[2]!.session].map((session) => collectFrames(session));
    const video = await u1.publish(3, 'video');
    await until(() => joined[2]!.session.streams().some((st) => st.streamId === 3 && st.participantId === u1.participantId), 5000,
      'the video stream shown on the other node');
    for (let i = 0; i < 3; i++) await video.send(text(`v${i}`));
    for (const r of seen) {
      await until(() => r.texts().length === 3, 5000, 'three video frames');
      assert.deepEqual(r.texts(), ['3:v0', '3:v1', '3:v2']);
    }
    await video.close();

    // a leave on one node is a participant_left on the other
    const u4 = joined[3]!.session;
    const left = nextEvent(u1, 'participantLeft', 5000, (p) => p.participantId === u4.participantId);
    await u4.close();
    await left;
    await until(() => others(joined[1]!.session).length === 2, 5000, 'u2 sees u4 gone');
  });

  it('shows the room\'s nodes and each participant\'s node in the room service API', async () => {
    const view = (await roomApi('span')).json<RoomView>();
    const byUser = new Map(view.participants.map((p) => [p.user_id, p.media_node]));
    assert.equal(view.media_node, byUser.get('u1'), 'the node the room started on');
    assert.deepEqual(view.media_nodes, [byUser.get('u1'), byUser.get('u3')]);
    assert.equal(byUser.get('u1'), byUser.get('u2'));
    assert.notEqual(byUser.get('u1'), byUser.get('u3'));
  });

  it('counts max_participants over the whole room', { timeout: 30_000 }, async () => {
    // the change reaches both nodes on the bus: seen once its metadata reaches a member of each
    const [u2, u3] = [sessions[1]!, sessions[2]!];
    const applied = [u2, u3].map((s) => nextEvent(s, 'roomMetadataChanged'));
    assert.equal((await roomApi('span', 'PATCH', { max_participants: 3, metadata: 'three at most' })).status, 200);
    await Promise.all(applied);
    const token = await issuer.issue({ room_id: 'span', user_id: 'u5', role: 'speaker', subscribe_room: true });
    await assert.rejects(join(token), (err: { code?: string }) => err.code === 'room_full');
  });

  it('closes sessions on both nodes at a removal, a revocation and the room\'s end, each within a second', { timeout: 60_000 }, async () => {
    const room = 'span-end';
    const joined: { token: TokenResponse; session: MediaSession }[] = [];
    for (const user of ['e1', 'e2', 'e3', 'e4']) joined.push(await enter(room, user));
    assert.equal(new Set(joined.map((j) => nodeOf(j.token))).size, 2);
    for (const { session } of joined) await until(() => others(session).length === 3, 5000, 'everyone sees everyone');
    const within = async (what: string, session: MediaSession, act: () => Promise<void>): Promise<void> => {
      const closed = nextEvent(session, 'revoked', 5000);
      await act();
      const start = performance.now();
      await closed;
      assert.ok(performance.now() - start < 1000, `${what}: closed ${Math.round(performance.now() - start)} ms after the answer`);
    };
    // removal of a participant of the node that did not answer the request
    const e3 = joined[2]!.session;
    const seen = nextEvent(joined[0]!.session, 'participantLeft', 5000, (p) => p.participantId === e3.participantId);
    await within('a removal', e3, async () => {
      assert.equal((await roomApi(`${room}/participants/${e3.participantId}/remove`, 'POST')).status, 200);
    });
    await seen;
    await within('a revocation', joined[3]!.session, () => issuer.revoke(joined[3]!.token));
    const ended = [joined[0]!.session, joined[1]!.session].map((s) => nextEvent(s, 'revoked', 5000));
    assert.equal((await roomApi(`${room}/end`, 'POST')).status, 200);
    await Promise.all(ended);
  });

  it('tells webhooks of each room\'s start and finish once, and of each participant once with its own node', { timeout: 60_000 }, async () => {
    for (const s of sessions) await s.close();
    type Event = { readonly type: string; readonly data: Readonly<Record<string, unknown>> };
    const finished = (events: readonly Event[], room: string): boolean => events.some((e) => e.type === 'room.finished' && e.data['room_id'] === room);
    await receiver.waitFor((events) => finished(events, 'span') && finished(events, 'span-end'), 'both rooms finished', 20_000);
    const events: Event[] = receiver.deliveries.map((d) => d.event);
    for (const room of ['span', 'span-end']) {
      const of = (type: string) => events.filter((e) => e.type === type && e.data['room_id'] === room);
      assert.equal(of('room.started').length, 1, `${room} started once`);
      assert.equal(of('room.finished').length, 1, `${room} finished once`);
      assert.equal(of('participant.joined').length, 4, `${room}: each participant joined once`);
      assert.equal(of('participant.left').length, 4, `${room}: each participant left once`);
      assert.equal(new Set(of('participant.joined').map((e) => e.data['media_node'])).size, 2, 'each with its own node');
    }
    const counts = events.filter((e) => e.type === 'participant.joined' && e.data['room_id'] === 'span').map((e) => e.data['num_participants']);
    assert.deepEqual([...counts].sort(), [1, 2, 3, 4], 'num_participants counts the whole room');
  });

  it('tells the members of one node that those of another left when that node stops', { timeout: 60_000 }, async () => {
    const joined: { token: TokenResponse; session: MediaSession }[] = [];
    for (const user of ['s1', 's2', 's3', 's4']) joined.push(await enter('span-stop', user));
    for (const { session } of joined) await until(() => others(session).length === 3, 5000, 'everyone sees everyone');
    const onB = joined.filter((j) => nodeOf(j.token) === new URL(b.urls['media']!).host).map((j) => j.session);
    const onA = joined.map((j) => j.session).filter((s) => !onB.includes(s));
    assert.equal(onB.length, 2);
    const gone = onA.flatMap((s) => onB.map((moved) => nextEvent(s, 'participantLeft', 5000, (p) => p.participantId === moved.participantId)));
    await b.stop();
    await Promise.all(gone);
    for (const s of onA) assert.equal(others(s).length, 1);
  });
});
