import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import type { RtcTrack } from '@rtc/protocol';
import { FakeMediaServer, type FakeMediaConnection, type FakeStream } from '../../../test/helpers/fake-media-server.ts';
import { FakeWebRtc, HOST_TCP, HOST_UDP, RELAY_UDP, type FakeCandidate } from '../../../test/helpers/fake-webrtc.ts';
import { connect } from './connect.ts';
import type { MediaSession } from './session.ts';
import type { ConnectOptions, MediaToken } from './types.ts';

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

function fakeWebRtc(candidates?: readonly FakeCandidate[], completeAfterMs?: number): FakeWebRtc {
  webrtc = new FakeWebRtc({ ...(candidates ? { candidates } : {}), ...(completeAfterMs !== undefined ? { completeAfterMs } : {}) }).install();
  return webrtc;
}

const offers = (c: FakeMediaConnection) => c.received.filter((m) => m.type === 'rtc_offer');

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

