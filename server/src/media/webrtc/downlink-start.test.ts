/**
 * A call's start through a subscriber's downlink (docs/protocol/media.md, "Downlink" and "Pauses"):
 * a single-layer video is forwarded whole or paused whole, never thinned by dropped packets, and on
 * a clean link a 1 Mbit/s camera goes through from its first frame while the estimate still starts
 * at 300 kbit/s. The clock and the timers are the test's; the subscriber is a link of a given rate
 * (a queue that drains at it, drop-tail) that returns transport-wide feedback every 50 ms.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { RtpPacket, type RTCDtlsTransport, type RTCRtpTransceiver } from 'werift';
import { vp8Payload } from '../../main/client/media/loopback-peer.ts';
import { MediaStats } from '../../metrics/media-stats.ts';
import type { StreamLayers } from '../rtp/layers.ts';
import { TwccRecorder } from '../rtp/twcc-feedback.ts';
import { parseVp8 } from '../rtp/vp8.ts';
import type { Stream } from '../room/stream.ts';
import type { DownTrack } from './down-track.ts';
import { Downlink } from './downlink.ts';
import { parseCheckedRtcp } from './input-guard.ts';

const TWCC_ID = 3;
const PACKET_BYTES = 1000;
const FEEDBACK_MS = 50;

interface Sent { readonly ssrc: number; readonly seq: number; readonly padding: boolean; readonly bytes: number; readonly sentMs: number }

/**
 * A subscriber of `videos` videos of `videoBps` each, behind a link of `linkBps` holding at most
 * `queueBytes`. A video is of one layer unless `simulcast` gives its layers' rates as the publisher
 * sends them, by ms since the call's start (what the server has measured of each: 1 for a layer not
 * measured yet, as StreamLayers.rates has it).
 */
function call(options: {
  videos: number; videoBps: number; linkBps: number; queueBytes: number;
  simulcast?: { sent: (ms: number) => number[]; measured: (ms: number) => number[]; settledMs: number };
}) {
  const startMs = 10_000;
  let now = startMs;
  const sent: Sent[] = [];
  const paused: number[] = [];
  const reasons: string[] = [];
  const resumed: number[] = [];
  const keyAsked = new Set<number>();
  const published = new Map<number, Stream>();
  const recorder = new TwccRecorder(1);
  let linkFreeAt = 0;
  let linkLost = 0;
  let mediaLost = 0;
  /** The link's far end: what the server sent, in the clear (the fake SRTP session only joins header and payload). */
  const receive = (data: Buffer): Promise<void> => {
    const { header } = RtpPacket.deSerialize(data);
    const bytes = data.length + 38; // with its padding, the SRTP tag and UDP/IP
    sent.push({ ssrc: header.ssrc, seq: header.sequenceNumber, padding: header.padding, bytes, sentMs: now });
    // the link: a queue drained at linkBps; what does not fit is lost
    const start = Math.max(now, linkFreeAt);
    if ((start - now) * (options.linkBps / 8000) + bytes > options.queueBytes) {
      linkLost += 1;
      if (!header.padding) mediaLost += 1;
      return Promise.resolve();
    }
    linkFreeAt = start + (bytes * 8000) / options.linkBps;
    const twcc = header.extensions.find((e) => e.id === TWCC_ID);
    if (twcc) recorder.record(twcc.payload.readUInt16BE(0), (linkFreeAt + 1) * 1000);
    return Promise.resolve();
  };
  const transport = {
    state: 'connected',
    transportSequenceNumber: 0,
    srtp: { encrypt: (payload: Buffer, header: { serialize(size: number): Buffer; serializeSize: number }) => Buffer.concat([header.serialize(header.serializeSize), payload]) },
    iceTransport: { connection: { nominated: { remoteAddr: ['127.0.0.1', 9], protocol: { sendData: receive } } } },
    sendRtcp: (): Promise<void> => Promise.resolve(),
  } as unknown as RTCDtlsTransport;
  const simulcast = options.simulcast;
  const sizes = simulcast ? [{ width: 320, height: 180 }, { width: 640, height: 360 }, { width: 1280, height: 720 }] : [{ width: 1280, height: 720 }];
  const layers = {
    rates: () => simulcast?.measured(now - startMs) ?? [options.videoBps],
    settled: () => (simulcast?.measured(0) ?? [0]).map(() => now - startMs >= (simulcast?.settledMs ?? 0)),
    sizes: () => sizes.slice(0, simulcast?.measured(0).length ?? 1),
    get: (layer: number) => sizes[layer],
    recoveryMs: () => 0,
    frameRates: () => (simulcast?.measured(0) ?? [0]).map(() => 30),
  } as unknown as StreamLayers;
  const events = {
    paused: (id: number, reason: string) => {
      paused.push(id);
      reasons.push(reason);
    },
    resumed: (id: number) => resumed.push(id), layer: () => undefined, report: () => undefined,
    // the published stream that feeds the track (the same one on a new m-line): its layers, and the
    // key frames asked of its publisher
    attach: (id: number, track: DownTrack) => {
      let stream = published.get(id);
      if (!stream) {
        stream = { layers, askKeyFrame: () => keyAsked.add(id), detach: () => undefined, sourceLost: false } as unknown as Stream;
        published.set(id, stream);
      }
      track.stream = stream;
    },
  };
  const downlink = new Downlink(events, { rtpIn: () => undefined, rtpOut: () => undefined }, () => now, new MediaStats());
  downlink.attach(transport);
  downlink.setConnected(true);
  const streams = Array.from({ length: options.videos }, (_, i) => i + 1);
  const transceiver = (id: number): RTCRtpTransceiver => ({ mid: String(id), sender: { ssrc: 1000 + id, codec: { payloadType: 96 } } }) as unknown as RTCRtpTransceiver;
  const transceivers = new Map(streams.map((id) => [id, transceiver(id)]));
  const negotiate = (): void => downlink.setOutbound(
    streams.map((id) => ({ streamId: id, kind: 'video' as const, transceiver: transceivers.get(id)! })),
    { mid: undefined, twcc: TWCC_ID, playoutDelay: undefined },
  );
  negotiate();
  /** Runs the publishers for `ms`: 30 frames/s each, key frames first and when asked. */
  const seqs = new Map<number, number>();
  const run = (ms: number): void => {
    const needKey = new Set(streams);
    for (const end = now + ms; now < end;) {
      const rates = simulcast?.sent(now - startMs) ?? [options.videoBps];
      for (const id of streams) {
        if (keyAsked.delete(id)) needKey.add(id);
        const key = needKey.delete(id);
        for (const [layer, bps] of rates.entries()) {
          const perFrame = Math.max(1, Math.round(bps / 8 / 30 / PACKET_BYTES));
          const ssrc = 500 + id * 10 + layer;
          for (let k = 0; k < perFrame; k += 1) {
            const payload = vp8Payload(PACKET_BYTES, key && k === 0);
            const seq = ((seqs.get(ssrc) ?? 0) + 1) & 0xffff;
            seqs.set(ssrc, seq);
            downlink.track(id)!.forward({
              layer, ssrc, seq, timestamp: now * 90, marker: k === perFrame - 1, payload, vp8: parseVp8(payload),
            });
          }
        }
      }
      for (let t = 0; t < 33; t += 1) {
        now += 1;
        mock.timers.tick(1);
        if (now % FEEDBACK_MS === 0) for (const fb of recorder.build(1)) for (const p of parseCheckedRtcp(fb.serialize())) downlink.onRtcp(p);
      }
    }
  };
  /** Sequence numbers between an m-line's first and last that never went out (a gap no NACK can fill). */
  const skipped = (): number => {
    let gaps = 0;
    const bySsrc = new Map<number, number[]>();
    for (const s of sent) bySsrc.set(s.ssrc, [...(bySsrc.get(s.ssrc) ?? []), s.seq]);
    for (const seqs of bySsrc.values()) {
      // fewer than 65536 packets from a start near 0: no wrap
      gaps += Math.max(...seqs) - Math.min(...seqs) + 1 - new Set(seqs).size;
    }
    return gaps;
  };
  /** Negotiates again, the streams of `moved` on new m-lines (new transceivers, new SSRCs). */
  const renegotiate = (moved: readonly number[]): void => {
    for (const id of moved) transceivers.set(id, transceiver(id + 1000));
    negotiate();
  };
  return { downlink, sent, paused, reasons, resumed, run, renegotiate, skipped, linkLost: () => linkLost, mediaLost: () => mediaLost };
}

describe('a call\'s start through the downlink', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval'] }));
  afterEach(() => mock.timers.reset());

  it('carries two single-layer 1 Mbit/s cameras whole on a clean link from their first frames', () => {
    const c = call({ videos: 2, videoBps: 1_000_000, linkBps: 100_000_000, queueBytes: 1_000_000 });
    c.run(3_000);
    assert.deepEqual(c.paused, []);
    assert.equal(c.skipped(), 0, 'no media sequence number is skipped');
    // every packet the publishers sent went out (90 frames of 4 packets each, per camera), none dropped
    const media = c.sent.filter((s) => !s.padding).length;
    assert.ok(media >= 2 * 88 * 4, `sent ${media} media packets`);
    assert.ok(c.downlink.estimateBps >= 2_200_000, `estimate ${c.downlink.estimateBps}`);
    c.downlink.close();
  });

  it('pauses single-layer videos whole on a link that cannot carry them, never skipping a sequence number', () => {
    const c = call({ videos: 2, videoBps: 1_000_000, linkBps: 600_000, queueBytes: 30_000 });
    c.run(5_000);
    assert.equal(c.skipped(), 0, 'no media sequence number is skipped');
    assert.ok(c.paused.length >= 1, 'a video that does not fit pauses');
    c.downlink.close();
  });

  it('pauses a relayed video whose link to its origin is down, as under a bandwidth pause, and resumes it with the link', () => {
    const c = call({ videos: 2, videoBps: 500_000, linkBps: 100_000_000, queueBytes: 1_000_000 });
    c.run(1_000);
    const source = c.downlink.track(1)!.stream!;
    source.sourceLost = true;
    c.run(1_000);
    assert.deepEqual(c.paused, [1], 'only the video whose source is out of reach pauses');
    assert.deepEqual(c.reasons, ['relay']);
    const whilePaused = c.sent.length;
    c.run(500);
    assert.equal(c.sent.filter((s, i) => i >= whilePaused && s.ssrc === 1001 && !s.padding).length, 0, 'nothing of it goes out while paused');
    source.sourceLost = false;
    const before = c.sent.length;
    c.run(1_500);
    assert.deepEqual(c.resumed, [1]);
    assert.ok(c.sent.some((s, i) => i >= before && s.ssrc === 1001 && !s.padding), 'it flows again');
    assert.equal(c.skipped(), 0, 'no media sequence number is skipped');
    c.downlink.close();
  });

  it('tells the resume of a paused video that a negotiation moved to a new m-line', () => {
    const c = call({ videos: 2, videoBps: 500_000, linkBps: 100_000_000, queueBytes: 1_000_000 });
    c.run(1_000);
    const source = c.downlink.track(1)!.stream!;
    source.sourceLost = true;
    c.run(1_000);
    assert.deepEqual(c.paused, [1]);
    // the source is back as the negotiation moves the video: it is wanted on its new m-line at once
    const before = c.sent.length;
    source.sourceLost = false;
    c.renegotiate([1]);
    c.run(1_000);
    assert.deepEqual(c.resumed, [1], 'the client that was told of the pause hears of the resume');
    assert.deepEqual(c.paused, [1]);
    assert.ok(c.sent.some((s, i) => i >= before && s.ssrc === 2001 && !s.padding), 'it flows on the new m-line');
    c.downlink.close();
  });

  it('keeps a paused video paused, without telling it again, when a negotiation moves it while its source is still away', () => {
    const c = call({ videos: 2, videoBps: 500_000, linkBps: 100_000_000, queueBytes: 1_000_000 });
    c.run(1_000);
    c.downlink.track(1)!.stream!.sourceLost = true;
    c.run(1_000);
    c.renegotiate([1]);
    const before = c.sent.length;
    c.run(1_000);
    assert.deepEqual(c.paused, [1]);
    assert.deepEqual(c.resumed, []);
    assert.equal(c.sent.filter((s, i) => i >= before && s.ssrc === 2001 && !s.padding).length, 0, 'nothing of it goes out while paused');
    c.downlink.close();
  });

  it('raises a simulcast video to a larger layer only once that layer\'s rate has settled', () => {
    // the larger layers are measured low while the publisher's encoder ramps them up
    const sent = (): number[] => [240_000, 480_000, 960_000];
    const measured = (ms: number): number[] => (ms < 500 ? [254_000, 1, 1] : ms < 1500 ? [254_000, 200_000, 400_000] : [254_000, 510_000, 1_020_000]);
    const clean = call({ videos: 1, videoBps: 0, linkBps: 100_000_000, queueBytes: 1_000_000, simulcast: { sent, measured, settledMs: 1000 } });
    clean.run(200);
    assert.equal(clean.downlink.forwardedLayer(1), 0, 'the smallest layer first');
    clean.run(2_800);
    assert.equal(clean.downlink.forwardedLayer(1), 2, 'the top layer once the probe showed room for it');
    assert.equal(clean.mediaLost(), 0);
    clean.downlink.close();
  });

  it('does not overrun a link capped under the middle layer with a layer measured low in its first second', () => {
    // the larger layer ramps up: unmeasured, then measured at 300 kbit/s over its first window, then 510
    const sent = (ms: number): number[] => [240_000, ms < 500 ? 240_000 : 480_000];
    const measured = (ms: number): number[] => (ms < 500 ? [254_000, 1] : ms < 1000 ? [254_000, 300_000] : [254_000, 510_000]);
    const capped = call({ videos: 1, videoBps: 0, linkBps: 400_000, queueBytes: 20_000, simulcast: { sent, measured, settledMs: 1000 } });
    const layers = new Set<number | undefined>();
    for (let ms = 0; ms < 5_000; ms += 50) {
      capped.run(50);
      layers.add(capped.downlink.forwardedLayer(1));
    }
    assert.deepEqual([...layers], [0], 'the smallest layer all along');
    assert.equal(capped.mediaLost(), 0, 'no media packet is lost on the capped link');
    assert.deepEqual(capped.paused, []);
    assert.equal(capped.skipped(), 0);
    capped.downlink.close();
  });
});
