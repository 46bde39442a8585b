/**
 * The app SDK in Chromium against a stand-in media server (test/helpers/fake-media-server.ts) whose
 * WebRTC end is werift set up as a simulcast-forwarding server is (docs/protocol/media.md, "A
 * client, step by step"): it negotiates the RID and MID header extensions and transport-wide
 * congestion control, so the page's camera goes out as simulcast layers. What the page sends is
 * checked at the RTP level, and what such a server sends the page (`stream_layer`, `stream_paused`,
 * `stream_resumed`) reaches the application; `rtc_video` bounds, set by hand and by adaptive video,
 * reach the server.
 */
import assert from 'node:assert/strict';
import { createDecipheriv } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { decodeTrailer, e2eeNonce, E2EE_TAG_BYTES, E2EE_TRAILER_BYTES, type RtcTrack } from '@rtc/protocol';
import {
  RTCPeerConnection, RTCRtpCodecParameters, Vp8RtpPayload, useSdesMid, useSdesRTPStreamId, useTransportWideCC, type RtpPacket,
} from 'werift';
import { bundleSdk, launchChromium, servePages, type PageSite } from '../helpers/browser.ts';
import { FakeMediaServer, type FakeMediaConnection } from '../helpers/fake-media-server.ts';
import { WEBRTC_PAGE, type PageJoinOptions, type PageMeasure, type PageRtc } from '../helpers/webrtc-page.ts';
import { clearStun, waitFor } from '../helpers/webrtc-client.ts';
import type { MediaToken } from '../../sdk/app/src/index.ts';

const CAMERA = 5;
const REMOTE_VIDEO = 2;
const key = Buffer.alloc(32, 7).toString('base64url');
const token: MediaToken = { media: { grant: 'a.b.c', key, sfu_host: '127.0.0.1', sfu_port: 9 }, expires_at: Math.floor(Date.now() / 1000) + 3600 };

/** werift as a server that takes simulcast: VP8 with NACK, PLI and transport-cc feedback, the RID, MID and transport-cc extensions. */
function simulcastServerPeer(): RTCPeerConnection {
  return new RTCPeerConnection({
    codecs: {
      video: [new RTCRtpCodecParameters({
        mimeType: 'video/VP8', clockRate: 90000, payloadType: 96,
        rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }, { type: 'transport-cc' }],
      })],
      audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 })],
    },
    headerExtensions: { video: [useSdesMid(), useSdesRTPStreamId(), useTransportWideCC()], audio: [] },
    iceServers: [],
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceUseIpv4: false,
    iceUseIpv6: false,
    bundlePolicy: 'max-bundle',
  });
}

/** Encrypted frames received per rid: the VP8 payloads of each picture joined (docs/protocol/media.md, section 11). */
class LayerFrames {
  readonly frames = new Map<string, Buffer[]>();
  private readonly partial = new Map<string, { timestamp: number; parts: Buffer[]; next: number }>();

  take(rid: string, packet: RtpPacket): void {
    const { timestamp, sequenceNumber, marker } = packet.header;
    const vp8 = Vp8RtpPayload.deSerialize(packet.payload);
    let frame = this.partial.get(rid);
    if (vp8.isPartitionHead && vp8.pid === 0) {
      frame = { timestamp, parts: [], next: sequenceNumber };
      this.partial.set(rid, frame);
    }
    // a lost or reordered packet spoils its picture: it is left out
    if (!frame || frame.timestamp !== timestamp || frame.next !== sequenceNumber) {
      this.partial.delete(rid);
      return;
    }
    frame.parts.push(vp8.payload);
    frame.next = (sequenceNumber + 1) & 0xffff;
    if (!marker) return;
    this.partial.delete(rid);
    const list = this.frames.get(rid) ?? [];
    list.push(Buffer.concat(frame.parts));
    this.frames.set(rid, list);
  }
}

function openFrame(streamKey: Buffer, frame: Buffer): { seq: number; plain: Buffer } | undefined {
  const trailer = decodeTrailer(frame);
  if (!trailer) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', streamKey, e2eeNonce(trailer.seq));
  decipher.setAAD(Buffer.concat([frame.subarray(0, trailer.clear), frame.subarray(frame.length - E2EE_TRAILER_BYTES)]));
  decipher.setAuthTag(frame.subarray(frame.length - E2EE_TRAILER_BYTES - E2EE_TAG_BYTES, frame.length - E2EE_TRAILER_BYTES));
  const body = decipher.update(frame.subarray(trailer.clear, frame.length - E2EE_TRAILER_BYTES - E2EE_TAG_BYTES));
  try {
    decipher.final();
  } catch {
    return undefined;
  }
  return { seq: trailer.seq, plain: Buffer.concat([frame.subarray(0, trailer.clear), body]) };
}

describe('simulcast, video bounds and layer reports in Chromium, against a server that takes simulcast', () => {
  let site: PageSite | undefined;
  let browser: Browser | undefined;
  const servers: FakeMediaServer[] = [];
  const peers: RTCPeerConnection[] = [];

  before(async () => {
    site = await servePages({
      '/': ['text/html; charset=utf-8', WEBRTC_PAGE],
      '/sdk.js': ['text/javascript; charset=utf-8', await bundleSdk()],
    });
    browser = await launchChromium({ fakeMedia: true });
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    for (const pc of peers) await pc.close();
    for (const s of servers) await s.close();
  });

  /** A fake server whose offers werift answers; layers records what arrives per rid on the published camera. */
  async function start(): Promise<{ server: FakeMediaServer; url: string; layers: LayerFrames }> {
    const pc = simulcastServerPeer();
    peers.push(pc);
    const layers = new LayerFrames();
    // werift announces the first layer's track only; the receiver holds one track per rid
    const watched = new WeakSet<object>();
    pc.ontrack = ({ transceiver }) => {
      for (const track of transceiver.receiver.tracks) {
        if (watched.has(track)) continue;
        watched.add(track);
        track.onReceiveRtp.subscribe((packet) => layers.take(track.rid ?? '', packet));
      }
    };
    const server = new FakeMediaServer({
      key, streams: [{ streamId: REMOTE_VIDEO, kind: 'video', userId: 'alice' }], publishStreams: [CAMERA],
      answer: async ({ sdp, tracks }) => {
        await pc.setRemoteDescription({ type: 'offer', sdp });
        clearStun(pc);
        for (const t of tracks as RtcTrack[]) if (t.direction === 'recv') pc.getTransceivers().find((x) => x.mid === t.mid)?.setDirection('sendonly');
        await pc.setLocalDescription(await pc.createAnswer());
        await waitFor(() => pc.iceGatheringState === 'complete', 'werift gathering');
        // werift's transport-cc feedback does not grow Chromium's bandwidth estimate: the answer asks
        // for enough from the start that every layer is sent (2.35 Mbit/s for the three default layers)
        return { sdp: pc.localDescription!.sdp.replace(/a=rtpmap:96 VP8\/90000\r\n/g, '$&a=fmtp:96 x-google-min-bitrate=2500;x-google-start-bitrate=2500\r\n') };
      },
    });
    servers.push(server);
    return { server, url: await server.listen(), layers };
  }

  async function openPage(url: string, options: PageJoinOptions = {}): Promise<Page> {
    const page = await (await browser!.newContext()).newPage();
    await page.goto(site!.url);
    await page.waitForFunction(() => (globalThis as unknown as { rtc?: unknown }).rtc !== undefined);
    await page.evaluate(([t, o]) => (globalThis as unknown as { rtc: PageRtc }).rtc.join(t as never, undefined, o), [token, { ...options, url }] as const);
    return page;
  }
  const rtc = (page: Page) => ({
    measure: (): Promise<PageMeasure> => page.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.measure()),
    sent: () => page.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.sent()),
    e2ee: async () => (await page.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.measure())).e2ee!,
  });
  const remoteVideo = (m: PageMeasure) => m.remote.find((r) => r.streamId === REMOTE_VIDEO);

  it('publishes a 1280x720 camera as three layers, smallest first, every frame of every layer encrypted and numbered once', async () => {
    const { server, url, layers } = await start();
    const page = await openPage(url);
    try {
      const published = await page.evaluate((id) => (globalThis as unknown as { rtc: PageRtc }).rtc.publish(['video'], [id],
        { video: { width: 1280, height: 720, frameRate: 30 } }), CAMERA);
      assert.deepEqual(published, [{ ok: true, streamId: CAMERA, kind: 'video' }]);
      const c = server.current;
      const offer = [...c.received].reverse().find((m) => m.type === 'rtc_offer')!;
      assert.match(offer['sdp'] as string, /a=rid:q send\r\na=rid:h send\r\na=rid:f send\r\na=simulcast:send q;h;f/);
      assert.ok((offer['tracks'] as RtcTrack[]).some((t) => t.stream_id === CAMERA && t.direction === 'send'));

      // each layer on its way, at its own size
      const deadline = Date.now() + 20_000;
      // the layers are the encodings with a rid (the first offer's trackless video m-line, which asked
      // whether the server takes simulcast, may show as an encoding of its own that sends nothing)
      const layersSent = async () => (await rtc(page).sent()).filter((e) => e.rid !== undefined);
      let sent = await layersSent();
      while (!(sent.length === 3 && sent.every((e) => e.framesEncoded > 10) && (layers.frames.get('f')?.length ?? 0) > 10)) {
        assert.ok(Date.now() < deadline, `three layers: ${JSON.stringify(sent)}, received ${[...layers.frames].map(([r, f]) => `${r}:${f.length}`)}`);
        await page.waitForTimeout(200);
        sent = await layersSent();
      }
      const size = Object.fromEntries(sent.map((e) => [e.rid, e.frameWidth]));
      assert.ok(size['q']! < size['h']! && size['h']! < size['f']!, JSON.stringify(sent));
      assert.equal(size['f'], 1280);

      // every frame werift got, of every layer, opens with the stream key; no sequence number twice
      const streamKey = Buffer.from(server.streamKey(CAMERA), 'base64url');
      const seqs = new Map<number, string>();
      for (const rid of ['q', 'h', 'f']) {
        const frames = layers.frames.get(rid) ?? [];
        assert.ok(frames.length > 5, `frames of layer ${rid}`);
        for (const frame of frames) {
          const opened = openFrame(streamKey, frame);
          assert.ok(opened, `a frame of layer ${rid} opens`);
          assert.equal(seqs.get(opened.seq), undefined, `sequence ${opened.seq} of ${rid} also in ${seqs.get(opened.seq)}`);
          seqs.set(opened.seq, rid);
        }
      }
      // the one transform of the sender saw the frames of all layers (Chromium runs one per sender),
      // not those of one layer (a third of them): at least what the stats counted before, and no more
      // than they count once they caught up (on a loaded machine getStats lags the encoder)
      const encoded = sent.reduce((n, e) => n + e.framesEncoded, 0);
      const { encrypted } = await rtc(page).e2ee();
      assert.ok(encrypted >= encoded * 0.9, `encrypted ${encrypted}, encoded ${encoded} before over three layers`);
      let after = encoded;
      for (const caughtUp = Date.now() + 10_000; after * 1.1 + 10 < encrypted && Date.now() < caughtUp; await page.waitForTimeout(200)) {
        after = (await layersSent()).reduce((n, e) => n + e.framesEncoded, 0);
      }
      assert.ok(encrypted <= after * 1.1 + 10, `encrypted ${encrypted}, encoded ${after} over three layers`);
    } finally {
      await page.context().close();
    }
  });

  it('gives the application the server\'s layer and pause reports, and sends the bounds it sets', async () => {
    const { server, url } = await start();
    const page = await openPage(url);
    try {
      await waitFor(() => server.connections[0]?.received.some((m) => m.type === 'rtc_offer') ?? false, 'the first offer');
      const c: FakeMediaConnection = server.current;
      const m0 = await until(page, (m) => remoteVideo(m) !== undefined, 'the remote video track');
      assert.deepEqual([remoteVideo(m0)!.paused, remoteVideo(m0)!.layer], [false, null]);

      c.send({ type: 'stream_layer', stream_id: REMOTE_VIDEO, layer: 1, width: 640, height: 360 });
      c.send({ type: 'stream_paused', stream_id: REMOTE_VIDEO, reason: 'bandwidth' });
      let m = await until(page, (x) => remoteVideo(x)?.paused === true, 'paused');
      assert.deepEqual(remoteVideo(m)!.layer, { layer: 1, width: 640, height: 360 });
      c.send({ type: 'stream_resumed', stream_id: REMOTE_VIDEO });
      c.send({ type: 'stream_layer', stream_id: REMOTE_VIDEO, layer: 0, width: 320, height: 180 });
      m = await until(page, (x) => remoteVideo(x)?.layer?.layer === 0, 'layer 0');
      assert.equal(remoteVideo(m)!.paused, false);
      assert.deepEqual(m.videoReports, [
        { type: 'streamLayer', streamId: REMOTE_VIDEO, layer: 1, width: 640, height: 360 },
        { type: 'streamPaused', streamId: REMOTE_VIDEO, reason: 'bandwidth' },
        { type: 'streamResumed', streamId: REMOTE_VIDEO },
        { type: 'streamLayer', streamId: REMOTE_VIDEO, layer: 0, width: 320, height: 180 },
      ]);

      await page.evaluate((id) => (globalThis as unknown as { rtc: PageRtc }).rtc.setVideoBounds(id, { maxLayer: 1 }), REMOTE_VIDEO);
      await page.evaluate((id) => (globalThis as unknown as { rtc: PageRtc }).rtc.setVideoBounds(id, { maxWidth: 0 }), REMOTE_VIDEO);
      await c.next((x) => x.type === 'rtc_video' && x['max_width'] === 0);
      assert.deepEqual(c.received.filter((x) => x.type === 'rtc_video'), [
        { type: 'rtc_video', stream_id: REMOTE_VIDEO, max_width: null, max_height: null, max_layer: 1 },
        { type: 'rtc_video', stream_id: REMOTE_VIDEO, max_width: 0, max_height: null, max_layer: null },
      ]);
    } finally {
      await page.context().close();
    }
  });

  it('with adaptiveStream, bounds the video by its element: size in device pixels, and none while hidden', async () => {
    const { server, url } = await start();
    const page = await openPage(url, { adaptiveStream: true });
    try {
      const c = await server.joinedConnection(1);
      const rtcVideo = () => c.received.filter((x) => x.type === 'rtc_video').map((x) => [x['max_width'], x['max_height']]);
      // the page shows each remote video in a 320x180 element (headless Chromium: one device pixel per CSS pixel)
      await c.next((x) => x.type === 'rtc_video', 10_000);
      assert.deepEqual(rtcVideo(), [[320, 180]]);
      await page.evaluate((id) => (globalThis as unknown as { rtc: PageRtc }).rtc.resizeVideo(id, 640, 360), REMOTE_VIDEO);
      await c.next((x) => x.type === 'rtc_video' && x['max_width'] === 640);
      await page.evaluate((id) => (globalThis as unknown as { rtc: PageRtc }).rtc.resizeVideo(id, 0, 0), REMOTE_VIDEO);
      await c.next((x) => x.type === 'rtc_video' && x['max_width'] === 0);
      await page.evaluate((id) => (globalThis as unknown as { rtc: PageRtc }).rtc.resizeVideo(id, 480, 270), REMOTE_VIDEO);
      await c.next((x) => x.type === 'rtc_video' && x['max_width'] === 480);
      assert.deepEqual(rtcVideo(), [[320, 180], [640, 360], [0, 0], [480, 270]]);
      // one message per change and none in between; the pace (at most one every 500 ms) is judged on an
      // injected clock in sdk/app/src/webrtc/adaptive-video.test.ts: arrival times here follow the load
    } finally {
      await page.context().close();
    }
  });
});

async function until(page: Page, ok: (m: PageMeasure) => boolean, what: string): Promise<PageMeasure> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const m = await page.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.measure());
    if (ok(m)) return m;
    if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(m)}`);
    await page.waitForTimeout(50);
  }
}
