import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allocate, ceiling } from './allocation.ts';
import { RtcpTransportLayerFeedback } from 'werift';
import { runChunk, twccFeedback } from '../../../../test/helpers/hostile-rtcp.ts';
import { parseCheckedRtcp } from '../webrtc/input-guard.ts';
import { DownlinkEstimator, feedbackResults } from './downlink-estimator.ts';
import { StreamLayers } from './layers.ts';
import { StreamRewriter } from './rewriter.ts';
import { CompactTwcc } from './twcc-compact.ts';

const noBounds = { maxWidth: null, maxHeight: null, maxLayer: null };
const sizes = [{ width: 160, height: 90 }, { width: 320, height: 180 }, { width: 640, height: 360 }];

describe('allocation', () => {
  it('gives every video its largest layer that fits, smallest first', () => {
    const layers = [150_000, 500_000, 1_500_000];
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 2 }], 2_000_000), [2]);
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 2 }], 800_000), [1]);
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 0 }], 200_000), [0]);
  });

  it('pauses a video whose smallest layer does not fit, and resumes it only with room to spare', () => {
    const layers = [150_000, 500_000];
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 0 }], 100_000), [-1]);
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: -1 }], 160_000), [-1]);
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: -1 }], 200_000), [0]);
  });

  it('keeps a forwarded video on its smallest layer through a dip of up to a quarter, where a paused one stays paused', () => {
    const layers = [200_000, 800_000];
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 0 }], 170_000), [0]);
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: -1 }], 170_000), [-1]);
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 0 }], 150_000), [-1]);
  });

  it('keeps to the client bounds: a layer, a size, or no video for a hidden tile', () => {
    const layers = [150_000, 500_000, 1_500_000];
    assert.equal(ceiling({ layers, sizes, bounds: { maxWidth: null, maxHeight: null, maxLayer: 1 }, current: 0 }), 1);
    assert.equal(ceiling({ layers, sizes, bounds: { maxWidth: 200, maxHeight: null, maxLayer: null }, current: 0 }), 0);
    assert.deepEqual(allocate([{ layers, sizes, bounds: { maxWidth: 0, maxHeight: 0, maxLayer: null }, current: 0 }], 9_000_000), [-1]);
  });

  it('needs 10 % to spare to go above the current layer, and none to stay', () => {
    const layers = [100_000, 1_000_000];
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 0 }], 1_050_000), [0]);
    assert.deepEqual(allocate([{ layers, sizes, bounds: noBounds, current: 1 }], 1_050_000), [1]);
  });

  it('raises a video only to a layer whose rate has settled, and keeps one it is on', () => {
    const layers = [150_000, 300_000, 1_000_000];
    const settled = [true, false, true];
    assert.deepEqual(allocate([{ layers, settled, sizes, bounds: noBounds, current: 0 }], 500_000), [0]);
    assert.deepEqual(allocate([{ layers, settled, sizes, bounds: noBounds, current: 0 }], 2_000_000), [2], 'past it to a settled one that fits');
    assert.deepEqual(allocate([{ layers, settled, sizes, bounds: noBounds, current: 1 }], 500_000), [1]);
  });
});

describe('downlink estimator', () => {
  /** Sends `bps` for `ms` through a link of `capacityBps` (a queue that drains at that rate), feeding back every 50 ms. */
  function run(estimator: DownlinkEstimator, bps: () => number, capacityBps: number, ms: number, start: { t: number; seq: number }): void {
    let queueFreeAt = 0;
    let pending: { seq: number; at: number }[] = [];
    for (let t = start.t; t < start.t + ms; t += 5) {
      const bytes = Math.round((bps() / 8) * 0.005);
      for (let sent = 0; sent < bytes; sent += 1000) {
        const seq = start.seq++ & 0xffff;
        estimator.onSent(seq, 1000, t);
        queueFreeAt = Math.max(queueFreeAt, t) + (1000 * 8 * 1000) / capacityBps;
        pending.push({ seq, at: queueFreeAt + 20 });
      }
      if (t % 50 === 0) {
        const due = pending.filter((p) => p.at <= t);
        pending = pending.filter((p) => p.at > t);
        if (due.length > 0) estimator.onFeedback(due.map((p) => ({ seq: p.seq, receivedAtMs: p.at })), t);
      }
    }
    start.t += ms;
  }

  it('falls to what a capped link carries when sent more than it', () => {
    const estimator = new DownlinkEstimator({ initialBps: 2_000_000, minBps: 50_000, maxBps: 10_000_000 });
    run(estimator, () => estimator.bps, 500_000, 5_000, { t: 1000, seq: 0 });
    assert.ok(estimator.bps < 700_000, `estimate ${estimator.bps}`);
    assert.ok(estimator.bps > 200_000, `estimate ${estimator.bps}`);
  });

  it('grows while the path shows no queue, and cuts on heavy loss', () => {
    const estimator = new DownlinkEstimator({ initialBps: 300_000, minBps: 50_000, maxBps: 10_000_000 });
    run(estimator, () => estimator.bps, 50_000_000, 5_000, { t: 1000, seq: 0 });
    assert.ok(estimator.bps > 400_000, `estimate ${estimator.bps}`);
    const before = estimator.bps;
    const results = Array.from({ length: 100 }, (_, i) => ({ seq: 60_000 + i, receivedAtMs: i % 3 === 0 ? undefined : 7000 + i }));
    for (const r of results) estimator.onSent(r.seq, 1000, 6900);
    estimator.onFeedback(results, 7100);
    assert.ok(estimator.bps < before, `${estimator.bps} after ${before}`);
  });

  it('leaves the loss of probe padding out of the loss that cuts the estimate', () => {
    const estimator = new DownlinkEstimator({ initialBps: 500_000, minBps: 50_000, maxBps: 10_000_000 });
    const results = Array.from({ length: 60 }, (_, i) => ({ seq: i, receivedAtMs: i % 2 === 0 ? undefined : 1000 + i }));
    for (const r of results) estimator.onSent(r.seq, 300, 990, 1);
    estimator.onFeedback(results, 1100);
    assert.equal(estimator.loss, 0);
    assert.ok(estimator.bps >= 500_000, `estimate ${estimator.bps}`);
  });

  it('cuts on overuse to what the last 200 ms delivered, not to a half second that was mostly quiet', () => {
    const estimator = new DownlinkEstimator({ initialBps: 300_000, minBps: 50_000, maxBps: 10_000_000 });
    // 60 kbit/s for a while, then a step to 300 kbit/s into a link of 250 kbit/s: the queue grows
    const start = { t: 1000, seq: 0 };
    run(estimator, () => 60_000, 250_000, 2_000, start);
    run(estimator, () => 300_000, 250_000, 1_500, start);
    assert.ok(estimator.bps > 150_000, `estimate ${estimator.bps}`);
    assert.ok(estimator.bps < 300_000, `estimate ${estimator.bps}`);
  });

  it('reads run-length and status vector chunks with their deltas', () => {
    // run of 2 small deltas, then a two-bit vector: lost, large, small (the rest unused)
    const bytes = twccFeedback(5, [runChunk(1, 2), 0xc000 | (2 << 10) | (1 << 8)], Buffer.from([4, 1, 0xff, 0xfe, 3]));
    bytes.writeUInt16BE(65_534, 12);
    bytes.writeUIntBE(10, 16, 3);
    const [packet] = parseCheckedRtcp(bytes);
    assert.ok(packet?.type === RtcpTransportLayerFeedback.type && packet.feedback instanceof CompactTwcc);
    assert.deepEqual(feedbackResults(packet.feedback), [
      { seq: 65_534, receivedAtMs: 641 }, { seq: 65_535, receivedAtMs: 641.25 }, { seq: 0, receivedAtMs: undefined, lost: 1 },
      { seq: 1, receivedAtMs: 640.75 }, { seq: 2, receivedAtMs: 641.5 },
    ]);
  });

  it('counts a run of lost packets by the media packets sent in it, not by its length, probes and unsent numbers aside', () => {
    const estimator = new DownlinkEstimator({ initialBps: 300_000, minBps: 50_000, maxBps: 10_000_000 });
    // 200 media packets across the wrap (65,436 to 99), 10 probes (100 to 109), 110 to 199 skipped, 10 media (200 to 209)
    for (let seq = 65_436; seq < 65_636; seq++) estimator.onSent(seq & 0xffff, 1000, 1);
    for (let seq = 100; seq < 110; seq++) estimator.onSent(seq, 1000, 1, 7);
    for (let seq = 200; seq < 210; seq++) estimator.onSent(seq, 1000, 2);
    const received = Array.from({ length: 190 }, (_, i) => ({ seq: (65_436 + i) & 0xffff, receivedAtMs: 5 + i }));
    // from 90 on, as far as libwebrtc reports: 10 media, the probes, the skipped numbers and 10 media again
    estimator.onFeedback([...received, { seq: 90, receivedAtMs: undefined, lost: 0x7ffe },
      // numbers after the last sent, and a run ending before the first: nothing sent there
      { seq: 300, receivedAtMs: undefined, lost: 50 }, { seq: 65_000, receivedAtMs: undefined, lost: 400 }], 3);
    assert.equal(estimator.loss, 20 / 210);
  });
});

describe('stream rewriter', () => {
  it('continues sequence numbers, timestamps and picture ids across a switch of source', () => {
    const r = new StreamRewriter(90_000);
    assert.deepEqual(r.map(1, 100, 9000, 10, 3, true, 0), { seq: 100, timestamp: 9000, pictureId: 10, tl0PicIdx: 3 });
    assert.deepEqual(r.map(1, 101, 12_000, 11, 3, false, 33), { seq: 101, timestamp: 12_000, pictureId: 11, tl0PicIdx: 3 });
    // another layer: only from a switchable packet (a key frame), then numbering goes on
    assert.equal(r.map(2, 5000, 777, 500, 9, false, 66), undefined);
    const switched = r.map(2, 5000, 777, 500, 9, true, 66);
    assert.deepEqual(switched, { seq: 102, timestamp: 12_000 + 33 * 90, pictureId: 12, tl0PicIdx: 4 });
    assert.deepEqual(r.map(2, 5001, 3777, 501, 9, false, 99), { seq: 103, timestamp: 12_000 + 33 * 90 + 3000, pictureId: 13, tl0PicIdx: 4 });
    // a late packet of the old layer, or of the new one from before the switch, is not forwarded
    assert.equal(r.map(1, 102, 15_000, 12, 3, false, 100), undefined);
    assert.equal(r.map(2, 4999, 0, 499, 9, false, 100), undefined);
  });

  it('moves later packets up by the padding placed between frames', () => {
    const r = new StreamRewriter(90_000);
    r.map(1, 10, 0, undefined, undefined, true, 0);
    assert.deepEqual(r.takePadding(3), [11, 12, 13]);
    assert.equal(r.map(1, 11, 3000, undefined, undefined, false, 33)?.seq, 14);
    assert.equal(r.map(1, 65_535 & 0xffff, 0, undefined, undefined, false, 40), undefined);
  });
});

describe('stream layers', () => {
  /** Feeds `seconds` of a layer at `fps` frames of `bytes` each (one packet a frame). */
  function feed(layers: StreamLayers, layer: number, fps: number, from: number, seconds: number): void {
    for (let t = from; t < from + seconds * 1000; t += 1000 / fps) layers.onPacket(layer, 10 + layer, 1000, true, undefined, t);
  }

  it('counts a layer encoded at under half the frame rate of a smaller one as unavailable, and again from 80 % after a hold that doubles', () => {
    const layers = new StreamLayers(2);
    feed(layers, 0, 30, 0, 3);
    feed(layers, 1, 10, 0, 3);
    assert.equal(layers.rates(3000)[1], 0);
    assert.ok(layers.rates(3000)[0]! > 0);
    // 20 frames/s is above half but under 80 %: still starved
    feed(layers, 0, 30, 3000, 3);
    feed(layers, 1, 20, 3000, 3);
    assert.equal(layers.rates(6000)[1], 0);
    // back at full rate, but within the 5 s hold: still starved; after it, available
    feed(layers, 0, 30, 6000, 1);
    feed(layers, 1, 30, 6000, 1);
    assert.equal(layers.rates(7000)[1], 0);
    feed(layers, 0, 30, 7000, 2);
    feed(layers, 1, 30, 7000, 2);
    assert.ok(layers.rates(9000)[1]! > 0);
    // starved again within a minute: held twice as long
    feed(layers, 0, 30, 9000, 3);
    feed(layers, 1, 5, 9000, 3);
    assert.equal(layers.rates(12_000)[1], 0);
    feed(layers, 0, 30, 12_000, 8);
    feed(layers, 1, 30, 12_000, 8);
    assert.equal(layers.rates(20_000)[1], 0);
    feed(layers, 0, 30, 20_000, 3);
    feed(layers, 1, 30, 20_000, 3);
    assert.ok(layers.rates(23_000)[1]! > 0);
  });

  it('holds out a layer that stopped while a smaller one flowed, when it comes back', () => {
    const layers = new StreamLayers(2);
    feed(layers, 0, 30, 0, 2);
    feed(layers, 1, 30, 0, 2);
    assert.ok(layers.rates(2000)[1]! > 0);
    // the larger layer stops for 2 s, then comes back at full rate
    feed(layers, 0, 30, 2000, 2);
    assert.equal(layers.rates(4000)[1], 0);
    feed(layers, 0, 30, 4000, 2);
    feed(layers, 1, 30, 4000, 2);
    assert.equal(layers.rates(6000)[1], 0, 'held for 5 s from its stop');
    feed(layers, 0, 30, 6000, 4);
    feed(layers, 1, 30, 6000, 4);
    assert.ok(layers.rates(10_000)[1]! > 0);
    // a layer never seen is not held: it counts from its first measure
    const fresh = new StreamLayers(2);
    feed(fresh, 0, 30, 0, 2);
    assert.equal(fresh.rates(2000)[1], 0);
    feed(fresh, 0, 30, 2000, 1);
    feed(fresh, 1, 30, 2000, 1);
    assert.ok(fresh.rates(3000)[1]! > 0);
  });

  it('holds out a layer that stopped while a smaller one flows within half a second, but not when both went quiet', () => {
    const layers = new StreamLayers(2);
    feed(layers, 0, 30, 0, 2);
    feed(layers, 1, 30, 0, 2);
    // the uplink went quiet for 0.5 s (both layers): nothing is held out
    const quiet = layers.rates(2500);
    assert.ok(quiet[0]! > 0 && quiet[1]! > 0, JSON.stringify(quiet));
    feed(layers, 0, 30, 2500, 0.5);
    feed(layers, 1, 30, 2500, 0.5);
    // then the larger layer stops while the smaller one goes on: out after 400 ms, not after 1.5 s
    feed(layers, 0, 30, 3000, 0.3);
    assert.ok(layers.rates(3300)[1]! > 0, 'silent 300 ms: still there');
    feed(layers, 0, 30, 3300, 0.2);
    assert.equal(layers.rates(3500)[1], 0, 'silent 500 ms while the smaller layer flows: stopped');
    assert.ok(layers.rates(3500)[0]! > 0);
    // its encoder turns it on for 4 s and off for 1 s, over and over: it never comes back
    for (let t = 3500; t < 18_500; t += 5000) {
      feed(layers, 0, 30, t, 5);
      feed(layers, 1, 30, t + 1000, 4);
      assert.equal(layers.rates(t + 5000)[1], 0, `held out at ${t + 5000} ms`);
    }
    // once it has flowed without a stop for the 5 s hold (9 s here), it is back
    feed(layers, 0, 30, 18_500, 5);
    feed(layers, 1, 30, 18_500, 5);
    assert.ok(layers.rates(23_500)[1]! > 0);
  });

  it('does not take a layer the publisher was told to rest for a starved one: asked back, it counts once measured', () => {
    const layers = new StreamLayers(2);
    feed(layers, 0, 30, 0, 2);
    feed(layers, 1, 30, 0, 2);
    layers.setRested([false, true]);
    feed(layers, 0, 30, 2000, 10);
    assert.equal(layers.rates(12_000)[1], 0, 'rested: not there');
    layers.setRested([false, false]);
    feed(layers, 0, 30, 12_000, 1);
    feed(layers, 1, 30, 12_000, 1);
    assert.ok(layers.rates(13_000)[1]! > 0, 'back within a second of being asked back, with no hold');
  });

  it('tells a layer\'s rate settled once it was measured over two windows since it started, and again after a stop', () => {
    const layers = new StreamLayers(2);
    feed(layers, 0, 30, 0, 2);
    feed(layers, 1, 30, 1000, 0.6);
    assert.ok(layers.rates(1600)[1]! > 0, 'measured over one window: available');
    assert.deepEqual(layers.settled(), [true, false], 'but not settled');
    feed(layers, 0, 30, 2000, 1);
    feed(layers, 1, 30, 1600, 1.4);
    assert.deepEqual(layers.settled(), [true, true]);
    // silent for 2 s, then back: measured again from its first window
    feed(layers, 0, 30, 3000, 2);
    feed(layers, 1, 30, 5000, 0.6);
    assert.deepEqual(layers.settled(), [true, false]);
  });

  it('tells how late packets asked for again come, the larger recent ones weighing most, and forgets it after 10 s', () => {
    const layers = new StreamLayers(1);
    assert.equal(layers.recoveryMs(0), 0);
    layers.onRecovered(120, 1000);
    assert.equal(layers.recoveryMs(1000), 120);
    layers.onRecovered(60, 1500);
    assert.equal(layers.recoveryMs(1500), 114);
    layers.onRecovered(300, 2000);
    assert.equal(layers.recoveryMs(2000), 300);
    assert.equal(layers.recoveryMs(12_001), 0);
  });
});
