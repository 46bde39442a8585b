import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import type { RtcTrack } from '@rtc/protocol';
import { answerOf, FakeMediaServer, type FakeMediaConnection, type FakeStream } from '../../../test/helpers/fake-media-server.ts';
import { FakeTrack, FakeWebRtc, HOST_TCP, HOST_UDP, RELAY_UDP, type FakeCandidate } from '../../../test/helpers/fake-webrtc.ts';
import { connect } from './connect.ts';
import type { MediaSession } from './session.ts';
import type { ConnectOptions, MediaToken } from './types.ts';
import type { RemoteTrack } from './webrtc/remote-track.ts';

const key = randomBytes(32).toString('base64url');
const token: MediaToken = { media: { grant: 'a.b.c', key, sfu_host: '127.0.0.1', sfu_port: 9 }, expires_at: Math.floor(Date.now() / 1000) + 3600 };
const CAMERA: FakeStream = { streamId: 2, kind: 'video', userId: 'alice' };
const MIC: FakeStream = { streamId: 1, kind: 'audio', userId: 'alice' };

const open: MediaSession[] = [];
let webrtc: FakeWebRtc | undefined;
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  webrtc?.uninstall();
  webrtc = undefined;
});

async function join(server: FakeMediaServer, options: Partial<ConnectOptions> = {}): Promise<MediaSession> {
  const session = await connect({ token, WebSocket: server.WebSocket, secure: false, reconnect: false, ...options });
  open.push(session);
  return session;
}

function fakeWebRtc(candidates?: readonly FakeCandidate[], completeAfterMs?: number, extra?: Record<string, unknown>): FakeWebRtc {
  webrtc = new FakeWebRtc({ ...(candidates ? { candidates } : {}), ...(completeAfterMs !== undefined ? { completeAfterMs } : {}) }).install(extra);
  return webrtc;
}

const offers = (c: FakeMediaConnection) => c.received.filter((m) => m.type === 'rtc_offer');
const videoBounds = (c: FakeMediaConnection) => c.received.filter((m) => m.type === 'rtc_video');

function next<T>(session: MediaSession, type: 'trackSubscribed', pick: (t: RemoteTrack) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const off = session.on(type, (t) => {
      const v = pick(t);
      if (v !== undefined) {
        off();
        resolve(v);
      }
    });
  });
}

describe('the server\'s reports on received video', () => {
  it('become streamPaused, streamResumed and streamLayer events and the remote track\'s state; unknown types are ignored', async () => {
    fakeWebRtc();
    const server = new FakeMediaServer({ key, streams: [MIC, CAMERA] });
    const session = await join(server);
    const events: string[] = [];
    session.on('streamPaused', (e) => events.push(`paused ${e.streamId} ${e.reason}`));
    session.on('streamResumed', (e) => events.push(`resumed ${e.streamId}`));
    session.on('streamLayer', (e) => events.push(`layer ${e.streamId} ${e.layer} ${e.width}x${e.height}`));
    const camera = await next(session, 'trackSubscribed', (t) => (t.streamId === CAMERA.streamId ? t : undefined));
    assert.equal(camera.paused, false);
    assert.equal(camera.layer, undefined);

    const c = server.current;
    c.send({ type: 'stream_layer', stream_id: 2, layer: 2, width: 1280, height: 720 });
    c.send({ type: 'stream_from_a_later_revision', stream_id: 2 });
    c.send({ type: 'stream_paused', stream_id: 2, reason: 'bandwidth' });
    c.send({ type: 'stream_resumed', stream_id: 2 });
    c.send({ type: 'stream_layer', stream_id: 2, layer: 0, width: 0, height: 0 });
    c.send({ type: 'stream_paused', stream_id: 2, reason: 'bandwidth' });
    c.send({ type: 'ping_me_back', id: 1 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(events, ['layer 2 2 1280x720', 'paused 2 bandwidth', 'resumed 2', 'layer 2 0 0x0', 'paused 2 bandwidth']);
    assert.equal(camera.paused, true);
    assert.deepEqual(camera.layer, { layer: 0, width: 0, height: 0 });
    assert.equal(session.state, 'connected', 'unknown message types leave the connection open');
    // the track's own fields survive a spread, as when it was a plain object
    const { streamId, kind, userId, track } = { ...camera };
    assert.deepEqual([streamId, kind, userId, track === camera.track], [2, 'video', 'alice', true]);
  });

  it('surface as events without WebRTC too', async () => {
    const server = new FakeMediaServer({ key, streams: [CAMERA] });
    const session = await join(server, { webrtc: false });
    const seen = new Promise((resolve) => session.on('streamLayer', resolve));
    server.current.send({ type: 'stream_layer', stream_id: 2, layer: 1, width: 640, height: 360 });
    assert.deepEqual(await seen, { streamId: 2, layer: 1, width: 640, height: 360 });
  });
});

describe('remoteTracks()', () => {
  it('lists the tracks received now, already when the application hears of one, and none once the session ends', async () => {
    fakeWebRtc();
    const server = new FakeMediaServer({ key, streams: [MIC, CAMERA] });
    const session = await join(server);
    const listed: number[][] = [];
    session.on('trackSubscribed', () => listed.push(session.remoteTracks().map((t) => t.streamId).sort()));
    const both = new Promise<void>((resolve) => session.on('trackSubscribed', () => {
      if (session.remoteTracks().length === 2) resolve();
    }));
    await both;
    assert.deepEqual(listed.at(-1), [1, 2]);
    assert.ok(listed.every((ids) => ids.length > 0), 'the track is listed when trackSubscribed is heard');
    const [first] = session.remoteTracks();
    assert.equal(first?.participantId.length !== 0, true);
    await session.close();
    assert.deepEqual(session.remoteTracks(), []);
  });
});

describe('video bounds (rtc_video)', () => {
  it('are sent for setVideoBounds, on the session or the track, once per change, and again after a reconnection', async () => {
    fakeWebRtc();
    const server = new FakeMediaServer({ key, streams: [MIC, CAMERA] });
    const session = await join(server, { getToken: async () => token, reconnect: { initialDelayMs: 10 } });
    session.setVideoBounds(7, { maxWidth: 0 }); // a stream that is not there yet: kept and sent all the same
    const camera = await next(session, 'trackSubscribed', (t) => (t.streamId === 2 ? t : undefined));
    camera.setVideoBounds({ maxWidth: 640, maxHeight: 360 });
    camera.setVideoBounds({ maxWidth: 640, maxHeight: 360 });
    camera.setVideoBounds({ maxWidth: 640, maxHeight: 360, maxLayer: 1 });
    assert.deepEqual(camera.videoBounds, { maxWidth: 640, maxHeight: 360, maxLayer: 1 });
    const first = server.current;
    await first.next((m) => m.type === 'rtc_video' && m['max_layer'] === 1);
    assert.deepEqual(videoBounds(first), [
      { type: 'rtc_video', stream_id: 7, max_width: 0, max_height: null, max_layer: null },
      { type: 'rtc_video', stream_id: 2, max_width: 640, max_height: 360, max_layer: null },
      { type: 'rtc_video', stream_id: 2, max_width: 640, max_height: 360, max_layer: 1 },
    ]);
    assert.throws(() => camera.setVideoBounds({ maxLayer: 3 }), TypeError);

    server.drop();
    const second = await server.joinedConnection(2);
    await second.next((m) => m.type === 'rtc_video' && m['stream_id'] === 2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(videoBounds(second).map((m) => m['stream_id']).sort(), [2, 7], 'every stored bound, once');
    session.setVideoBounds(2, null);
    await second.next((m) => m.type === 'rtc_video' && m['max_width'] === null && m['stream_id'] === 2);
  });

  it('an audio track takes none', async () => {
    fakeWebRtc();
    const server = new FakeMediaServer({ key, streams: [MIC] });
    const session = await join(server);
    const mic = await next(session, 'trackSubscribed', (t) => t);
    assert.throws(() => mic.setVideoBounds({ maxWidth: 100 }), TypeError);
    assert.throws(() => session.setVideoBounds(0, null), TypeError);
  });

  it('with adaptiveStream, follow the element a video is attached to', async () => {
    let resize: ((entries: { target: unknown; contentRect: { width: number; height: number } }[]) => void) | undefined;
    let intersect: ((entries: { target: unknown; isIntersecting: boolean }[]) => void) | undefined;
    const observer = { observe: () => undefined, unobserve: () => undefined, disconnect: () => undefined };
    fakeWebRtc(undefined, undefined, {
      ResizeObserver: function ResizeObserver(cb: typeof resize) {
        resize = cb;
        return observer;
      },
      IntersectionObserver: function IntersectionObserver(cb: typeof intersect) {
        intersect = cb;
        return observer;
      },
      devicePixelRatio: 1.5,
    });
    const server = new FakeMediaServer({ key, streams: [CAMERA] });
    const session = await join(server, { adaptiveStream: true });
    const camera = await next(session, 'trackSubscribed', (t) => t);
    const element = { srcObject: null as unknown };
    camera.attach(element);
    assert.deepEqual((element.srcObject as { getTracks(): unknown[] }).getTracks(), [camera.track]);
    resize!([{ target: element, contentRect: { width: 320, height: 180 } }]);
    intersect!([{ target: element, isIntersecting: true }]);
    const c = server.current;
    await c.next((m) => m.type === 'rtc_video');
    // the application's bound is combined with the element's size: the tighter one wins
    camera.setVideoBounds({ maxLayer: 0 });
    await c.next((m) => m.type === 'rtc_video' && m['max_layer'] === 0);
    camera.detach(element);
    assert.equal(element.srcObject, null);
    await c.next((m) => m.type === 'rtc_video' && m['max_width'] === null);
    assert.deepEqual(videoBounds(c), [
      { type: 'rtc_video', stream_id: 2, max_width: 480, max_height: 270, max_layer: null },
      { type: 'rtc_video', stream_id: 2, max_width: 480, max_height: 270, max_layer: 0 },
      { type: 'rtc_video', stream_id: 2, max_width: null, max_height: null, max_layer: 0 },
    ]);
  });
});

describe('statistics', () => {
  it('settles a getStats() in flight when the session closes, which Firefox itself never does', async () => {
    webrtc = new FakeWebRtc({ statsNeverSettle: true }).install();
    const server = new FakeMediaServer({ key, streams: [CAMERA] });
    const session = await join(server);
    await server.current.next((m) => m.type === 'rtc_offer');
    const stats = session.getStats();
    await session.close();
    assert.deepEqual(await stats, []);
  });
});

describe('joining', () => {
  it('makes the peer connection while the socket joins, and offers every received stream at once, with the UDP candidates only', async () => {
    const fake = fakeWebRtc([{ afterMs: 5, line: HOST_UDP }, { afterMs: 1500, line: HOST_TCP }], 1500);
    const server = new FakeMediaServer({ key, streams: [MIC, CAMERA, { streamId: 3, kind: 'data' }] });
    const started = performance.now();
    const session = await join(server);
    const c = server.current;
    const offer = await c.next((m) => m.type === 'rtc_offer');
    const offeredAt = c.receivedAt[c.received.indexOf(offer)]! - started;
    assert.deepEqual(offer['tracks'] as RtcTrack[], [
      { mid: '0', stream_id: 1, direction: 'recv' }, { mid: '1', stream_id: 2, direction: 'recv' },
    ]);
    assert.ok((offer['sdp'] as string).includes(HOST_UDP), 'the UDP candidate is in the offer');
    assert.ok(offeredAt < 1000, `offered ${offeredAt.toFixed(0)} ms after connect started, without waiting for the TCP candidate`);
    assert.equal(fake.peers.length, 1);
    assert.equal(fake.peer.configuration['iceCandidatePoolSize'], 1);
    // only the server's codecs are offered
    assert.deepEqual(fake.peer.transceivers.map((t) => t.codecPreferences?.map((x) => x.mimeType)), [['audio/opus'], ['video/VP8', 'video/rtx']]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(offers(c).length, 1, 'one offer for both streams');
    void session;
  });

  it('with the relay policy, waits for a relay candidate', async () => {
    fakeWebRtc([{ afterMs: 1, line: HOST_UDP }, { afterMs: 150, line: RELAY_UDP }], 2000);
    const server = new FakeMediaServer({ key, streams: [CAMERA] });
    const started = performance.now();
    await join(server, { webrtc: { iceTransportPolicy: 'relay' } });
    const c = server.current;
    const offer = await c.next((m) => m.type === 'rtc_offer');
    const at = c.receivedAt[c.received.indexOf(offer)]! - started;
    assert.ok((offer['sdp'] as string).includes(RELAY_UDP));
    assert.ok(at >= 140 && at < 1500, `offered at ${at.toFixed(0)} ms`);
  });
});

describe('publishing video', () => {
  it('sends a camera as three layers, smallest first, when the server\'s answers carry the RID extension', async () => {
    const fake = fakeWebRtc();
    const server = new FakeMediaServer({ key, streams: [CAMERA], publishStreams: [5] });
    const session = await join(server);
    await server.current.next((m) => m.type === 'rtc_offer');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const local = await session.publishTrack(new FakeTrack('video', { width: 1280, height: 720 }) as unknown as MediaStreamTrack);
    assert.equal(local.streamId, 5);
    const sender = fake.peer.transceivers.find((t) => t.sender.track !== null)!;
    assert.deepEqual(sender.init.sendEncodings?.map((e) => [e.rid, e.scaleResolutionDownBy]), [['q', 4], ['h', 2], ['f', 1]]);
    const offer = offers(server.current).at(-1)!;
    assert.match(offer['sdp'] as string, /a=simulcast:send q;h;f/);
    assert.deepEqual((offer['tracks'] as RtcTrack[]).find((t) => t.direction === 'send'), { mid: sender.mid, stream_id: 5, direction: 'send' });
  });

  it('rests the layers of a camera that the server says no subscriber needs, and sends them again when it says so', { timeout: 20_000 }, async () => {
    const fake = fakeWebRtc();
    const server = new FakeMediaServer({ key, streams: [CAMERA], publishStreams: [5] });
    const session = await join(server);
    await server.current.next((m) => m.type === 'rtc_offer');
    await session.publishTrack(new FakeTrack('video', { width: 1280, height: 720 }) as unknown as MediaStreamTrack);
    const sender = fake.peer.transceivers.find((t) => t.sender.track !== null)!.sender;
    const active = (): unknown[] => sender.parameters.encodings.map((e) => e.active ?? true);
    const settled = (want: boolean[]): Promise<void> => new Promise((resolve) => {
      const check = (): void => void (JSON.stringify(active()) === JSON.stringify(want) ? resolve() : setTimeout(check, 5));
      check();
    });
    server.current.send({ type: 'publish_layers', stream_id: 5, active: [true, true, false] });
    await settled([true, true, false]);
    assert.deepEqual(sender.parameters.encodings.map((e) => e.rid), ['q', 'h', 'f'], 'the same layers, the top one resting');
    server.current.send({ type: 'publish_layers', stream_id: 5, active: [true, true, true] });
    await settled([true, true, true]);
    // one for a stream it does not send changes nothing
    server.current.send({ type: 'publish_layers', stream_id: 9, active: [true, false, false] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(active(), [true, true, true]);
  });

  it('asks first with an m-line of its own when no answer told, and sends one layer on it to a server without the RID extension', async () => {
    const fake = fakeWebRtc();
    const server = new FakeMediaServer({ key, publishStreams: [5, 6], answer: (o) => ({ sdp: answerOf(o.sdp, { rid: false }) }) });
    const session = await join(server);
    await session.publishTrack(new FakeTrack('video') as unknown as MediaStreamTrack);
    const c = server.current;
    const [question, camera] = offers(c);
    assert.deepEqual(question!['tracks'], [], 'the question names no stream');
    assert.doesNotMatch(question!['sdp'] as string, /a=simulcast/);
    assert.deepEqual(camera!['tracks'], [{ mid: '0', stream_id: 5, direction: 'send' }], 'the camera takes the question\'s m-line');
    const [t] = fake.peer.transceivers;
    assert.equal(fake.peer.transceivers.length, 1);
    assert.ok(t!.sender.track !== null);
    assert.deepEqual(t!.sender.parameters.encodings, [{ scaleResolutionDownBy: 1, maxBitrate: 1_700_000 }], 'the largest layer\'s caps');
    // known now: a second camera is one layer on an m-line of its own, without asking again
    await session.publishTrack(new FakeTrack('video') as unknown as MediaStreamTrack);
    assert.equal(offers(c).length, 3);
    assert.deepEqual(fake.peer.transceivers[1]!.init.sendEncodings, [{ scaleResolutionDownBy: 1, maxBitrate: 1_700_000 }]);
  });

  it('where the browser offers the RID extension only with rids (Firefox), lets the layers ask after the question: a server with it takes them', async () => {
    webrtc = new FakeWebRtc({ ridExtensionWithRidsOnly: true }).install();
    const server = new FakeMediaServer({ key, publishStreams: [5, 6] });
    const session = await join(server);
    await session.publishTrack(new FakeTrack('video', { width: 640, height: 480 }) as unknown as MediaStreamTrack);
    const c = server.current;
    const [question, camera] = offers(c);
    assert.deepEqual(question!['tracks'], [], 'the question names no stream');
    assert.doesNotMatch(question!['sdp'] as string, /rtp-stream-id/, 'and cannot ask: the browser left the RID extension off');
    assert.match(camera!['sdp'] as string, /a=simulcast:send h;f/);
    const sender = webrtc.peer.transceivers.find((t) => t.sender.track !== null)!;
    assert.deepEqual(sender.init.sendEncodings?.map((e) => e.rid), ['h', 'f']);
    assert.deepEqual(sender.sender.parameters.encodings.map((e) => e.scaleResolutionDownBy), [2, 1], 'both layers kept');
    // known now: a second camera goes out as layers at once
    await session.publishTrack(new FakeTrack('video', { width: 640, height: 480 }) as unknown as MediaStreamTrack);
    assert.equal(offers(c).length, 3);
    assert.deepEqual(webrtc.peer.transceivers.at(-1)!.init.sendEncodings?.map((e) => e.rid), ['h', 'f']);
  });

  it('where the browser offers the RID extension only with rids (Firefox), sends the largest layer alone to a server without it', async () => {
    webrtc = new FakeWebRtc({ ridExtensionWithRidsOnly: true }).install();
    const server = new FakeMediaServer({ key, publishStreams: [5, 6], answer: (o) => ({ sdp: answerOf(o.sdp, { rid: false }) }) });
    const session = await join(server);
    await session.publishTrack(new FakeTrack('video', { width: 640, height: 480 }) as unknown as MediaStreamTrack);
    const sender = webrtc.peer.transceivers.find((t) => t.sender.track !== null)!;
    // the answer declined simulcast: the browser sends the first encoding, which becomes the largest layer
    assert.deepEqual(sender.sender.parameters.encodings[0], { rid: 'h', scaleResolutionDownBy: 1, maxBitrate: 740_000 });
    // known now: a second camera is one layer, on the m-line of the question
    const second = new FakeTrack('video', { width: 640, height: 480 });
    await session.publishTrack(second as unknown as MediaStreamTrack);
    const [question] = webrtc.peer.transceivers;
    assert.equal(question!.sender.track, second);
    assert.deepEqual(question!.sender.parameters.encodings, [{ scaleResolutionDownBy: 1, maxBitrate: 740_000 }]);
    assert.equal(offers(server.current).length, 3);
  });

  it('sends a screen as one layer for detail', async () => {
    const fake = fakeWebRtc();
    const server = new FakeMediaServer({ key, streams: [CAMERA], publishStreams: [5] });
    const session = await join(server);
    await server.current.next((m) => m.type === 'rtc_offer');
    const screen = new FakeTrack('video', { displaySurface: 'monitor' });
    await session.publishTrack(screen as unknown as MediaStreamTrack);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const sender = fake.peer.transceivers.find((t) => t.sender.track === screen)!;
    assert.equal(sender.init.sendEncodings, undefined);
    assert.equal(screen.contentHint, 'detail');
    assert.equal(sender.sender.parameters.degradationPreference, 'maintain-resolution');
  });
});
