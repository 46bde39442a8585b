/**
 * What a room publishes, muting one stream from the customer's server, and the track webhooks:
 * a real platform (`rtc serve`), real media sessions of the app SDK, a real HTTPS webhook receiver.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RtcParticipant, RtcRoom } from '@rtc/protocol';
import type { MediaSession } from '../../../../sdk/app/src/index.ts';
import { TokenApiError, TokenClient, type WebhookEvent } from '../../../../sdk/server/src/index.ts';
import { bearer, createCustomer } from '../../../../test/helpers/customer.ts';
import { request, type HttpResult } from '../../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { WireClient } from '../../../../test/helpers/media-wire.ts';
import { makeCertificate } from '../../../../test/helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../test/helpers/webhook-receiver.ts';
import { collectFrames, join, nextEvent, sleep, text, TokenIssuer, until } from '../../../../test/helpers/media-session.ts';
import { serveMedia } from '../../../../test/helpers/media-platform.ts';

/** The room service API of one credential on one host. */
function roomApi(host: () => string, auth: () => string) {
  const call = (method: string, path: string, body?: unknown): Promise<HttpResult> =>
    request(`${host()}/v1/rtc/rooms${path}`, { method, headers: { authorization: auth() }, ...(body !== undefined && { body }) });
  const room = (id: string): string => `/${encodeURIComponent(id)}`;
  return {
    call,
    get: (id: string) => call('GET', room(id)),
    mute: (id: string, participant: string, stream: number | string, body: unknown) =>
      call('POST', `${room(id)}/participants/${participant}/streams/${stream}/mute`, body),
    /** The participant once `check` holds for it (the media node records changes just after they happen). */
    async whenParticipant(id: string, participant: string, check: (p: RtcParticipant) => boolean): Promise<RtcParticipant> {
      const deadline = performance.now() + 10_000;
      for (;; await sleep(20)) {
        const res = await call('GET', room(id));
        const found = res.status === 200 ? res.json<RtcRoom>().participants.find((p) => p.participant_id === participant) : undefined;
        if (found && check(found)) return found;
        if (performance.now() > deadline) throw new Error(`the participant never got there: ${res.text}`);
      }
    },
  };
}

const errorOf = (res: HttpResult): string => res.json<{ error: string }>().error;

describe('published streams, stream mutes and track webhooks on one process (api, token, media)', () => {
  const tempDir = mkdtempSync(joinPath(tmpdir(), 'rtc-room-streams-'));
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  let receiver: WebhookReceiver;
  const sessions: MediaSession[] = [];
  const api = roomApi(() => server.api, () => issuer.customer.auth);
  const token = (user: string, room: string, body: Record<string, unknown> = {}) =>
    issuer.issue({ room_id: room, user_id: user, role: 'speaker', subscribe_room: true, ...body });

  before(async () => {
    const tls = makeCertificate(tempDir);
    receiver = await startWebhookReceiver(tls);
    server = await serveMedia({ env: { RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: tls.certFile, RTC_WEBHOOK_RETRY_BASE_MS: '100' } });
    issuer = await TokenIssuer.create(() => server.api);
    const { customer } = issuer;
    const created = await request(`${server.api}/v1/projects/${customer.projectId}/webhooks`, {
      headers: bearer(customer.accessToken), body: { url: receiver.url },
    });
    assert.equal(created.status, 201, created.text);
    receiver.secrets = [created.json<{ secret: string }>().secret];
  });
  after(async () => {
    for (const s of sessions) await s.close();
    await server?.stop();
    await receiver?.stop();
  });

  it('lists what a participant publishes, mutes one stream (no frame reaches subscribers), unmutes it, and drops it once unpublished', async () => {
    const room = 'streams-mute';
    const alice = await join(await token('alice', room, { publish_streams: [1, 2] }));
    const bob = await join(await token('bob', room));
    sessions.push(alice, bob);
    const got = collectFrames(bob);
    const mic = await alice.publish(1, 'audio', { source: 'microphone' });
    const data = await alice.publish(2, 'data');
    await until(() => bob.streams().filter((s) => s.subscribed).length === 2, 5000, 'bob subscribed to both streams');

    const listed = await api.whenParticipant(room, alice.participantId, (p) => p.streams.length === 2);
    assert.deepEqual(listed.streams, [
      { stream_id: 1, kind: 'audio', source: 'microphone', muted: false, layers: [] },
      { stream_id: 2, kind: 'data', source: 'unknown', muted: false, layers: [] },
    ]);
    assert.deepEqual((await api.whenParticipant(room, bob.participantId, () => true)).streams, []);

    // muted: frames of stream 1 stop at the server; a frame of stream 2 sent after them shows they would have arrived
    const aliceTold = nextEvent(alice, 'streamMuted');
    const bobTold = nextEvent(bob, 'streamMuted');
    const res = await api.mute(room, alice.participantId, 1, { muted: true });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json<RtcParticipant>().streams.map((s) => [s.stream_id, s.muted]), [[1, true], [2, false]]);
    assert.deepEqual(await aliceTold, { streamId: 1, participantId: alice.participantId, muted: true });
    assert.deepEqual(await bobTold, { streamId: 1, participantId: alice.participantId, muted: true });
    await mic.send(text('hidden-1'));
    await mic.send(text('hidden-2'));
    await data.send(text('marker-1'));
    await until(() => got.texts().includes('2:marker-1'), 5000, 'the marker frame');
    assert.deepEqual(got.texts(), ['2:marker-1']);
    assert.equal((await api.get(room)).json<RtcRoom>().participants[0]!.streams[0]!.muted, true);

    const unmuted = nextEvent(bob, 'streamMuted', 5000, (e) => !e.muted);
    const back = await api.mute(room, alice.participantId, 1, { muted: false });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.json<RtcParticipant>().streams[0]!.muted, false);
    await unmuted;
    await mic.send(text('heard'));
    await until(() => got.texts().includes('1:heard'), 5000, 'the frame after the unmute');
    assert.deepEqual(got.texts(), ['2:marker-1', '1:heard']);
    assert.equal(alice.state, 'connected');

    await mic.close();
    const after = await api.whenParticipant(room, alice.participantId, (p) => p.streams.length === 1);
    assert.deepEqual(after.streams.map((s) => s.stream_id), [2]);
  });

  it('tells a participant joining later that a stream is muted, right after its joined', async () => {
    const room = 'streams-late';
    const dave = await join(await token('dave', room, { publish_streams: [5] }));
    sessions.push(dave);
    await dave.publish(5, 'video', { source: 'screen_share' });
    await api.whenParticipant(room, dave.participantId, (p) => p.streams.length === 1);
    assert.equal((await api.mute(room, dave.participantId, 5, { muted: true })).status, 200);
    const erin = await WireClient.join(server.urls['media']!, (await token('erin', room)).media);
    try {
      await until(() => erin.controls.some((c) => c.type === 'stream_muted'), 5000, 'stream_muted at erin');
      assert.deepEqual(erin.controls.slice(0, 2), [erin.joined, { type: 'stream_muted', stream_id: 5, participant_id: dave.participantId, muted: true }]);
      const shown = await api.whenParticipant(room, dave.participantId, () => true);
      assert.deepEqual(shown.streams.map((s) => [s.source, s.muted]), [['screen_share', true]]);
    } finally {
      erin.close();
    }
  });

  it('sends track.published and track.unpublished webhooks, with the stream and who publishes it', async () => {
    const room = 'streams-hooks';
    const frank = await join(await token('frank', room, { publish_streams: [7] }));
    sessions.push(frank);
    const cam = await frank.publish(7, 'video', { source: 'camera' });
    await cam.close();
    const field = (e: WebhookEvent, name: string): unknown => (e.data as Readonly<Record<string, unknown>>)[name];
    const of = (events: readonly WebhookEvent[], type: string) => events.find((e) => e.type === type && field(e, 'room_id') === room);
    await receiver.waitFor((events) => of(events, 'track.unpublished') !== undefined, 'track.unpublished');
    const events = receiver.deliveries.map((d) => d.event);
    const published = of(events, 'track.published')!;
    const unpublished = of(events, 'track.unpublished')!;
    for (const event of [published, unpublished]) {
      assert.equal(event.project_id, issuer.customer.projectId);
      assert.deepEqual(event.data, {
        room_id: room, participant_id: frank.participantId, user_id: 'frank', role: 'speaker', stream_id: 7, kind: 'video',
        source: 'camera', media_node: null,
      });
    }
    assert.ok(published.occurred_at <= unpublished.occurred_at);

    // a participant that leaves ends its streams: track.unpublished comes before participant.left
    const grace = await join(await token('grace', room, { publish_streams: [8] }));
    await grace.publish(8, 'audio');
    await api.whenParticipant(room, grace.participantId, (p) => p.streams.length === 1);
    await grace.close();
    const mine = (events: readonly WebhookEvent[]) => events.filter((e) => field(e, 'participant_id') === grace.participantId).map((e) => e.type);
    await receiver.waitFor((all) => mine(all).includes('participant.left'), 'participant.left of grace');
    const types = mine(receiver.deliveries.map((d) => d.event));
    assert.ok(types.indexOf('track.unpublished') >= 0 && types.indexOf('track.unpublished') < types.indexOf('participant.left'), types.join(','));
  });

  it('refuses an unknown stream (404), another project (404), a credential without the publisher scope (403) and a bad body (400)', async () => {
    const room = 'streams-errors';
    const henry = await join(await token('henry', room, { publish_streams: [3] }));
    sessions.push(henry);
    await henry.publish(3, 'audio');
    await api.whenParticipant(room, henry.participantId, (p) => p.streams.length === 1);

    for (const stream of [4, 0, 'x', '03', 4294967296]) {
      const res = await api.mute(room, henry.participantId, stream, { muted: true });
      assert.equal(res.status, 404, `${stream}: ${res.text}`);
      assert.equal(errorOf(res), 'not_found');
    }
    assert.equal((await api.mute(room, 'pa_unknown', 3, { muted: true })).status, 404);
    assert.equal((await api.mute('streams-nobody', henry.participantId, 3, { muted: true })).status, 404);

    const other = await createCustomer({ api: server.api, token: server.token, request });
    const otherApi = roomApi(() => server.api, () => other.auth);
    const foreign = await otherApi.mute(room, henry.participantId, 3, { muted: true });
    assert.equal(foreign.status, 404);
    assert.equal(errorOf(foreign), 'not_found');

    const { customer } = issuer;
    const created = await request(`${server.api}/v1/projects/${customer.projectId}/credentials`, {
      headers: bearer(customer.accessToken), body: { scopes: ['subscriber'] },
    });
    const sub = created.json<{ app_id: string; app_secret: string }>();
    const subscriberOnly = roomApi(() => server.api, () => `Basic ${Buffer.from(`${sub.app_id}:${sub.app_secret}`).toString('base64')}`);
    const denied = await subscriberOnly.mute(room, henry.participantId, 3, { muted: true });
    assert.equal(denied.status, 403);
    assert.equal(errorOf(denied), 'scope_denied');

    for (const body of [{}, { muted: 'yes' }, { muted: null }, { muted: true, extra: 1 }, [true]]) {
      const res = await api.mute(room, henry.participantId, 3, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(errorOf(res), 'invalid_request');
    }
    // nothing was muted by the refused calls
    assert.equal((await api.get(room)).json<RtcRoom>().participants[0]!.streams[0]!.muted, false);
  });

  it('is served to the server SDK: muteStream, and participants with their streams', async () => {
    const room = 'streams-sdk';
    const { customer } = issuer;
    const tokens = new TokenClient({ baseUrl: server.api, appId: customer.appId, appSecret: customer.appSecret });
    const ivy = await join(await token('ivy', room, { publish_streams: [9] }));
    const jack = await join(await token('jack', room));
    sessions.push(ivy, jack);
    const got = collectFrames(jack);
    const stream = await ivy.publish(9, 'audio', { source: 'microphone' });
    await api.whenParticipant(room, ivy.participantId, (p) => p.streams.length === 1);
    const listed = (await tokens.getRoom(room)).participants.find((p) => p.participant_id === ivy.participantId)!;
    assert.deepEqual(listed.streams, [{ stream_id: 9, kind: 'audio', source: 'microphone', muted: false, layers: [] }]);
    const told = nextEvent(jack, 'streamMuted');
    const muted = await tokens.muteStream(room, ivy.participantId, 9, true);
    assert.equal(muted.streams[0]!.muted, true);
    await told;
    const back = nextEvent(jack, 'streamMuted', 5000, (e) => !e.muted);
    assert.equal((await tokens.muteStream(room, ivy.participantId, 9, false)).streams[0]!.muted, false);
    await back;
    await stream.send(text('after'));
    await until(() => got.texts().includes('9:after'), 5000, 'the frame after the unmute');
    await assert.rejects(tokens.muteStream(room, ivy.participantId, 10, true),
      (err: unknown) => err instanceof TokenApiError && err.code === 'not_found' && err.status === 404);
    await assert.rejects(tokens.muteStream(room, ivy.participantId, 0, true), TypeError);
  });
});

describe('stream mutes with api/token and media in separate processes on one data directory', () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-room-streams-split-'));
  const limits = { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000' };
  let mediaServer: ServedPlatform;
  let apiServer: ServedPlatform;
  let issuer: TokenIssuer;
  const sessions: MediaSession[] = [];

  before(async () => {
    mediaServer = await serveInProcess({ dataDir, roles: ['media'], env: limits });
    apiServer = await serveInProcess({ dataDir, roles: ['api', 'token'], env: { ...limits, RTC_MEDIA_PUBLIC_PORT: new URL(mediaServer.urls['media']!).port } });
    issuer = await TokenIssuer.create(() => apiServer.api);
  });
  after(async () => {
    for (const s of sessions) await s.close();
    await Promise.all([apiServer?.stop(), mediaServer?.stop()]);
  });

  it('lists the streams the media process records, and a mute there stops the stream on the media process', async () => {
    const api = roomApi(() => apiServer.api, () => issuer.customer.auth);
    const kim = await join(await issuer.issue({ room_id: 'split-streams', user_id: 'kim', role: 'speaker', publish_streams: [1, 2] }));
    const lee = await join(await issuer.issue({ room_id: 'split-streams', user_id: 'lee', role: 'speaker', subscribe_room: true }));
    sessions.push(kim, lee);
    const got = collectFrames(lee);
    const audio = await kim.publish(1, 'audio', { source: 'microphone' });
    const data = await kim.publish(2, 'data');
    await api.whenParticipant('split-streams', kim.participantId, (p) => p.streams.length === 2);
    await until(() => lee.streams().filter((s) => s.subscribed).length === 2, 5000, 'lee subscribed');

    const told = nextEvent(lee, 'streamMuted');
    assert.equal((await api.mute('split-streams', kim.participantId, 1, { muted: true })).status, 200);
    await told;
    await audio.send(text('hidden'));
    await data.send(text('marker'));
    await until(() => got.texts().includes('2:marker'), 5000, 'the marker frame');
    assert.deepEqual(got.texts(), ['2:marker']);
    const shown = await api.whenParticipant('split-streams', kim.participantId, () => true);
    assert.deepEqual(shown.streams.map((s) => [s.stream_id, s.muted]), [[1, true], [2, false]]);
  });
});
