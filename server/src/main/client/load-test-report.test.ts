import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  SequenceTracker, formatBitrate, newCounters, parseBitrate, parseDurationMs, percentile, snapshot, summarize, summaryLines,
  type ParticipantResult,
} from './load-test-report.ts';

describe('load test figures', () => {
  it('parses durations and bitrates as the flags take them', () => {
    assert.deepEqual(['30s', '2m', '500ms', '1h', '45', '1.5s'].map(parseDurationMs), [30_000, 120_000, 500, 3_600_000, 45_000, 1500]);
    assert.deepEqual(['', 's', '-1s', '3d', '1e3'].map(parseDurationMs), [undefined, undefined, undefined, undefined, undefined]);
    assert.deepEqual(['800k', '1.5M', '2500000', '0', '1m'].map(parseBitrate), [800_000, 1_500_000, 2_500_000, 0, 1_000_000]);
    assert.deepEqual(['', 'fast', '1G', '-5k'].map(parseBitrate), [undefined, undefined, undefined, undefined]);
  });

  it('counts lost packets across the 16-bit wrap, late packets included', () => {
    const t = new SequenceTracker();
    for (const seq of [65533, 65534, 65535, 1, 2, 0, 5]) t.record(seq);
    assert.deepEqual(t.counts(), { expected: 9, lost: 2 });
    assert.deepEqual(new SequenceTracker().counts(), { expected: 0, lost: 0 });
  });

  it('takes nearest-rank percentiles', () => {
    assert.equal(percentile([], 50), null);
    assert.equal(percentile([7], 95), 7);
    assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50), 5);
    assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95), 10);
  });

  it('summarizes the window per role, failures with their reasons', () => {
    const pub = { name: 'pub-0', role: 'publisher', joinMs: 400, failure: undefined, dropped: undefined, counters: newCounters() } as const;
    const sub = { name: 'sub-0', role: 'subscriber', joinMs: 600, failure: undefined, dropped: undefined, counters: newCounters() } as const;
    const bad: ParticipantResult = { name: 'sub-1', role: 'subscriber', joinMs: undefined, failure: 'timed out', dropped: undefined, counters: newCounters() };
    pub.counters.bytes = 1000;
    const before = snapshot([pub, sub, bad]);
    pub.counters.bytes += 250_000;
    pub.counters.videoFrames = 60;
    sub.counters.bytes = 125_000;
    sub.counters.videoFrames = 58;
    const tracker = new SequenceTracker();
    for (const seq of [10, 11, 13, 14]) tracker.record(seq);
    sub.counters.sequences.set('1:5', tracker);
    const s = summarize({
      room: 'r', url: 'http://x', results: [pub, sub, bad], before, windowSeconds: 2, interrupted: false,
      cpu: { user: 500_000, system: 500_000 }, runSeconds: 4,
    });
    assert.equal(s.publishers.bitrate_bps, 1_000_000);
    assert.equal(s.publishers.frames_per_second, 30);
    assert.deepEqual([s.subscribers.requested, s.subscribers.joined, s.subscribers.failed], [2, 1, 1]);
    assert.equal(s.subscribers.bitrate_per_participant_bps, 500_000);
    assert.equal(s.subscribers.packet_loss_percent, 20);
    assert.deepEqual(s.join_ms, { p50: 400, p95: 600, max: 600 });
    assert.deepEqual(s.failed_joins, [{ participant: 'sub-1', role: 'subscriber', reason: 'timed out' }]);
    assert.equal(s.cpu.percent, 25);
    const lines = summaryLines(s);
    assert.ok(lines.includes('failed joins: 1') && lines.includes('  1 × timed out (sub-1)'), lines.join('\n'));
    assert.equal(formatBitrate(1_500_000), '1.50 Mbit/s');
  });
});
