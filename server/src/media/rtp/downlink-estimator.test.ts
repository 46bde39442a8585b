/**
 * The downlink estimate over the kinds of links the impaired-network bench makes
 * (docs/operations/benchmarks.md, "webrtc-network"): jitter, probes on a path without a bottleneck,
 * and the way back after a drop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allocate } from './allocation.ts';
import { DownlinkEstimator } from './downlink-estimator.ts';

const options = { minBps: 50_000, maxBps: 20_000_000 };

/** A seeded uniform draw in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('downlink estimate on impaired links', () => {
  it('is not cut by jitter alone: 40 ± 10 ms each packet, order kept, no queue', () => {
    // 1100-byte packets every 5 ms (1.76 Mbit/s) for a minute, fed back every 50 ms
    const cutsPerRun: number[] = [];
    for (let seed = 1; seed <= 10; seed++) {
      const random = seeded(seed);
      const estimator = new DownlinkEstimator({ initialBps: 1_000_000, ...options });
      let seq = 0;
      let lastArrival = Number.NEGATIVE_INFINITY;
      let pending: { seq: number; receivedAtMs: number }[] = [];
      let cuts = 0;
      let before = estimator.bps;
      for (let t = 1_000; t < 61_000; t += 5) {
        estimator.onSent(seq, 1_100, t);
        // a packet held behind a later one comes out right after it, as the bench's link does
        lastArrival = Math.max(t + 40 + (random() * 2 - 1) * 10, lastArrival);
        pending.push({ seq, receivedAtMs: lastArrival });
        seq = (seq + 1) & 0xffff;
        if (t % 50 !== 0) continue;
        const due = pending.filter((p) => p.receivedAtMs <= t);
        pending = pending.filter((p) => p.receivedAtMs > t);
        if (due.length > 0) estimator.onFeedback(due, t);
        if (estimator.bps < before * 0.9) cuts += 1;
        before = estimator.bps;
      }
      cutsPerRun.push(cuts);
    }
    // libwebrtc's rules (a burst that arrives together is one group; overuse over two groups, the trend
    // still rising) leave about one false cut a minute; a single group over the threshold cut 2 to 7 times
    assert.ok(cutsPerRun.reduce((a, b) => a + b, 0) <= 15 && Math.max(...cutsPerRun) <= 3, `cuts per minute: ${cutsPerRun.join(', ')}`);
  });

  it('takes from a probe train no more than the rate it stood for, on a path with no bottleneck to spread it', () => {
    const estimator = new DownlinkEstimator({ initialBps: 300_000, ...options });
    // 30 padding packets leave within a millisecond and arrive within two
    const train = Array.from({ length: 30 }, (_, i) => i);
    for (const seq of train) estimator.onSent(seq, 313, 1_000 + (seq < 15 ? 0 : 1), 1);
    estimator.onFeedback(train.map((seq) => ({ seq, receivedAtMs: 1_040 + (seq < 15 ? 0 : 2) })), 1_100);
    const result = estimator.probeResult(1, 600_000);
    assert.ok(result !== undefined && result <= 600_000, `probe result ${result}`);
    estimator.applyProbe(result);
    assert.ok(estimator.bps <= 600_000, `estimate ${estimator.bps}`);
  });

  it('asks to probe back towards the estimate once after a large delay-based drop, within 5 s', () => {
    const estimator = new DownlinkEstimator({ initialBps: 1_000_000, ...options });
    // 200 kbit/s sent (the estimate holds far more), then a queue builds for a moment: 400-byte packets
    // every 16 ms, each arriving 4 ms later than the one before, until the cut
    let seq = 0;
    let t = 1_000;
    const feed = (ms: number, extraDelayPerPacket: number): void => {
      let delayMs = 20;
      const batch: { seq: number; receivedAtMs: number }[] = [];
      for (const end = t + ms; t < end; t += 16) {
        estimator.onSent(seq, 400, t);
        delayMs += extraDelayPerPacket;
        batch.push({ seq, receivedAtMs: t + delayMs });
        seq += 1;
        if (batch.length === 4) estimator.onFeedback(batch.splice(0), t + delayMs);
      }
    };
    feed(2_000, 0);
    assert.equal(estimator.recoveryProbeBps(t), undefined, 'no drop, no probe back');
    const before = estimator.bps;
    feed(1_000, 4);
    assert.ok(estimator.bps < before * 0.66, `cut from ${before} to ${estimator.bps}`);
    const recovery = estimator.recoveryProbeBps(t);
    assert.ok(recovery !== undefined && Math.abs(recovery - before * 0.85) < 1, `probe back to ${recovery} after ${before}`);
    assert.equal(estimator.recoveryProbeBps(t + 5_001), undefined, 'too old to tell');
    // asking whether a train sent after the drop came back, to read it early, does not end it
    estimator.onSent(seq, 300, t + 100, 7);
    assert.equal(estimator.probeCameBack(7), false);
    assert.equal(estimator.recoveryProbeBps(t + 150), recovery, 'still probing back while the train is out');
    // once a probe sent after the drop has been read, whatever it showed, no more
    estimator.probeResult(7, recovery);
    assert.equal(estimator.recoveryProbeBps(t + 200), undefined);
  });

  it('cuts for loss by half the loss once, however long the feedback took to come', () => {
    const estimator = new DownlinkEstimator({ initialBps: 250_000, ...options });
    // a queue overflowed by a key frame: 40 % of a window lost, fed back a second after the last feedback
    const window = (from: number, at: number): void => {
      const results = Array.from({ length: 25 }, (_, i) => ({ seq: from + i, receivedAtMs: i % 5 < 2 ? undefined : at - 25 + i }));
      for (const r of results) estimator.onSent(r.seq, 1_000, at - 100);
      estimator.onFeedback(results, at);
    };
    window(0, 1_000);
    const before = estimator.bps;
    window(100, 2_000);
    assert.ok(estimator.bps >= before * 0.8 * 0.99, `cut from ${before} to ${estimator.bps}`);
  });

  it('resumes the smallest layer on a link that carries it and the audio with 10 % to spare', () => {
    // 300 kbit/s: a probe shows about 285 of it; audio takes 68 (with its margin), the layer 175
    const layers = [175_000, 600_000];
    const demand = { layers, sizes: [{ width: 320, height: 240 }, { width: 640, height: 480 }], bounds: { maxWidth: null, maxHeight: null, maxLayer: null } };
    assert.deepEqual(allocate([{ ...demand, current: -1 }], 285_000 - 68_000), [0]);
    assert.deepEqual(allocate([{ ...demand, current: -1 }], 180_000), [-1], 'not without room to spare');
  });
});
