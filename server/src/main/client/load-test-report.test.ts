import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  SequenceTracker, formatBitrate, newCounters, parseBitrate, parseDurationMs, percentile, snapshot, summarize, summaryLines,
  type ParticipantResult,
} from './load-test-report.ts';
import { DelayHistogram, OPUS_STAMP_OFFSET, VP8_FRAME_STAMP_OFFSET, readSendTime, stampSendTime } from './load-test-delay.ts';
import { Vp8FrameSource, opusPayload } from './media/synthetic-media.ts';
import { parseVp8 } from '../../media/rtp/vp8.ts';

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
    const joined = { participantId: 'pa_x', node: '127.0.0.1:7880', failure: undefined, dropped: undefined } as const;
    const pub = { name: 'pub-0', role: 'publisher', joinMs: 400, ...joined, counters: newCounters() } as const;
    const sub = { name: 'sub-0', role: 'subscriber', joinMs: 600, ...joined, counters: newCounters() } as const;
    const bad: ParticipantResult = {
      name: 'sub-1', role: 'subscriber', participantId: undefined, node: undefined, joinMs: undefined, failure: 'timed out', dropped: undefined, counters: newCounters(),
    };
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
      cpu: { user: 500_000, system: 500_000 }, runSeconds: 4, layers: [],
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

describe('what each subscriber received', () => {
  const layers = [
    { rid: 'q', bitrateBps: 0, width: 320, height: 180 },
    { rid: 'h', bitrateBps: 0, width: 640, height: 360 },
    { rid: 'f', bitrateBps: 0, width: 1280, height: 720 },
  ];
  const participant = (name: string, role: 'publisher' | 'subscriber'): ParticipantResult => ({
    name, role, participantId: `pa_${name}`, node: '127.0.0.1:7880', joinMs: 100, failure: undefined, dropped: undefined, counters: newCounters(),
  });

  it('gives video frames/s per stream, not summed over the streams a subscriber receives', () => {
    const pubs = [participant('pub-0', 'publisher'), participant('pub-1', 'publisher')];
    const sub = participant('sub-0', 'subscriber');
    const before = snapshot([...pubs, sub]);
    for (const p of pubs) p.counters.videoFrames = 60;
    // two streams of 30 frames/s over 2 s
    sub.counters.videoFrames = 120;
    const s = summarize({
      room: 'r', url: 'http://x', results: [...pubs, sub], before, windowSeconds: 2, interrupted: false,
      cpu: { user: 0, system: 0 }, runSeconds: 2, layers,
    });
    assert.equal(s.publishers.frames_per_second, 30);
    assert.equal(s.subscribers.frames_per_second, 30);
    assert.equal(s.subscribers.video_streams, 2);
    assert.match(summaryLines(s).join('\n'), /^ {2}video frames\/s \(per stream\) +30 +30$/m);
  });

  it('names the layer (rid and size) each subscriber received of each stream, in JSON and in the table', () => {
    const pub = participant('pub-0', 'publisher');
    const subs = [participant('sub-0', 'subscriber'), participant('sub-1', 'subscriber')];
    pub.counters.videoFrames = 10;
    subs[0]!.counters.keyFrames.set(1, [{ width: 320, height: 180 }, { width: 1280, height: 720 }]);
    subs[1]!.counters.keyFrames.set(1, [{ width: 640, height: 360 }]);
    const s = summarize({
      room: 'r', url: 'http://x', results: [pub, ...subs], before: snapshot([]), windowSeconds: 1, interrupted: false,
      cpu: { user: 0, system: 0 }, runSeconds: 1, layers,
    });
    assert.deepEqual(s.subscribers.received_layers, [
      { participant: 'sub-0', streams: [{ stream_id: 1, layers: [{ rid: 'q', width: 320, height: 180 }, { rid: 'f', width: 1280, height: 720 }] }] },
      { participant: 'sub-1', streams: [{ stream_id: 1, layers: [{ rid: 'h', width: 640, height: 360 }] }] },
    ]);
    const text = summaryLines(s).join('\n');
    // the row counts each subscriber's stream by the layer it receives now (the last key frame's)
    assert.match(text, /^ {2}video layer received +- +f 1280x720 ×1, h 640x360 ×1$/m);
    assert.match(text, /^layers received \(rid and size, in the order they came\):$/m);
    assert.match(text, /^ {2}sub-0: stream 1 q 320x180 → f 1280x720$/m);
    assert.match(text, /^ {2}sub-1: stream 1 h 640x360$/m);
    // without simulcast a layer has no rid
    const single = summarize({
      room: 'r', url: 'http://x', results: [pub, subs[1]!], before: snapshot([]), windowSeconds: 1, interrupted: false,
      cpu: { user: 0, system: 0 }, runSeconds: 1, layers: [{ rid: undefined, width: 640, height: 360 }],
    });
    assert.deepEqual(single.subscribers.received_layers[0]?.streams[0]?.layers, [{ rid: null, width: 640, height: 360 }]);
    assert.match(summaryLines(single).join('\n'), /^ {2}sub-1: stream 1 640x360$/m);
  });
});

describe('where each participant is, and the delay of what it received', () => {
  it('reads back the send time a payload carries, and none from a payload too short for it', () => {
    const payload = Buffer.alloc(40);
    assert.equal(stampSendTime(payload, OPUS_STAMP_OFFSET, 1234.5), true);
    assert.equal(readSendTime(payload, OPUS_STAMP_OFFSET), 1234.5);
    assert.equal(readSendTime(new Uint8Array(payload.buffer, payload.byteOffset, 40).subarray(0, 8), OPUS_STAMP_OFFSET), undefined);
    assert.equal(stampSendTime(Buffer.alloc(8), OPUS_STAMP_OFFSET, 1), false);
    // a payload that never had one (zeros, or noise that is not a time)
    assert.equal(readSendTime(Buffer.alloc(40), OPUS_STAMP_OFFSET), undefined);
    assert.equal(readSendTime(Buffer.from('ffffffffffffffffff', 'hex'), OPUS_STAMP_OFFSET), undefined);
  });

  it('takes a synthetic frame\'s and audio packet\'s send time past what the server reads of them', () => {
    const [first, second] = new Vp8FrameSource({ rid: undefined, bitrateBps: 1_000_000, width: 1280, height: 720 }).next(true, 777.25);
    const vp8 = parseVp8(first!)!;
    assert.deepEqual([vp8.keyFrame, vp8.width, vp8.height], [true, 1280, 720], 'the key frame header is intact');
    assert.equal(readSendTime(first!, vp8.headerBytes + VP8_FRAME_STAMP_OFFSET), 777.25);
    assert.equal(parseVp8(second!)!.startOfPartition, false, 'only the first packet of a frame starts it');
    const audio = opusPayload(42);
    assert.deepEqual([audio[0], readSendTime(audio, OPUS_STAMP_OFFSET)], [0xf8, 42]);
  });

  it('keeps delays in buckets whose percentiles are within a bucket of the samples\'', () => {
    const h = new DelayHistogram();
    assert.equal(h.percentile(50), null);
    for (let i = 1; i <= 100; i++) h.record(i / 10); // 0.1 .. 10 ms
    h.record(700.4);
    h.record(45_000);
    assert.equal(h.count, 102);
    assert.equal(h.percentile(50), 5.1);
    assert.equal(h.percentile(99), 700.5);
    assert.equal(h.percentile(100), 29_950, 'a delay past the last bucket counts in it');
    const other = new DelayHistogram();
    other.record(3.04);
    h.add(other);
    assert.equal(h.count, 103);
    h.clear();
    assert.equal(h.percentile(50), null);
  });

  it('lists each participant with its id, node, and a subscriber\'s delay and loss; the table names the nodes', () => {
    const participant = (name: string, role: 'publisher' | 'subscriber', node: string): ParticipantResult => ({
      name, role, participantId: `pa_${name}`, node, joinMs: 100, failure: undefined, dropped: undefined, counters: newCounters(),
    });
    const pub = participant('pub-0', 'publisher', '127.0.0.1:7880');
    const near = participant('sub-0', 'subscriber', '127.0.0.1:7880');
    const far = participant('sub-1', 'subscriber', '127.0.0.1:7881');
    for (let i = 0; i < 100; i++) {
      near.counters.delays.record(1 + i / 100);
      far.counters.delays.record(3 + i / 100);
    }
    const tracker = new SequenceTracker();
    for (const seq of [1, 2, 4]) tracker.record(seq);
    far.counters.sequences.set('2:9', tracker);
    const never: ParticipantResult = { ...participant('sub-2', 'subscriber', ''), participantId: undefined, node: undefined, joinMs: undefined, failure: 'refused' };
    const s = summarize({
      room: 'r', url: 'http://x', results: [pub, near, far, never], before: snapshot([]), windowSeconds: 1, interrupted: false,
      cpu: { user: 0, system: 0 }, runSeconds: 1, layers: [],
    });
    assert.deepEqual(s.participants, [
      { participant: 'pub-0', participant_id: 'pa_pub-0', role: 'publisher', node: '127.0.0.1:7880', one_way_delay_ms: null, packets_expected: null, packets_lost: null },
      { participant: 'sub-0', participant_id: 'pa_sub-0', role: 'subscriber', node: '127.0.0.1:7880', one_way_delay_ms: { p50: 1.5, p99: 2 }, packets_expected: 0, packets_lost: 0 },
      { participant: 'sub-1', participant_id: 'pa_sub-1', role: 'subscriber', node: '127.0.0.1:7881', one_way_delay_ms: { p50: 3.5, p99: 4 }, packets_expected: 4, packets_lost: 1 },
      { participant: 'sub-2', participant_id: null, role: 'subscriber', node: null, one_way_delay_ms: { p50: null, p99: null }, packets_expected: 0, packets_lost: 0 },
    ]);
    // the 100th of 200 samples together is sub-0's largest
    assert.deepEqual(s.subscribers.one_way_delay_ms, { p50: 2, p99: 4 });
    const text = summaryLines(s).join('\n');
    assert.match(text, /^one-way delay to subscribers: p50 2 ms, p99 4 ms$/m);
    assert.match(text, /^media nodes: 127\.0\.0\.1:7880 \(2\), 127\.0\.0\.1:7881 \(1\)$/m);
  });
});
