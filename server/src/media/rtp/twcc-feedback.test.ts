import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RtcpPacketConverter, RtcpTransportLayerFeedback, TransportWideCC } from 'werift';
import { TwccRecorder } from './twcc-feedback.ts';

interface Parsed {
  readonly senderSsrc: number;
  readonly mediaSourceSsrc: number;
  readonly base: number;
  readonly count: number;
  readonly referenceTime: number;
  readonly fbPktCount: number;
  /** Chunk kinds in order: 'R' run length, '1' one-bit vector, '2' two-bit vector. */
  readonly chunkKinds: string;
  /** Per sequence number from base: arrival in µs rebuilt from the reference time and deltas, or undefined. */
  readonly packets: readonly { readonly seq: number; readonly arrivalUs: number | undefined }[];
  /** Receive deltas in µs, in order. */
  readonly deltasUs: readonly number[];
}

/**
 * Reads a feedback packet byte by byte as draft-holmer-rmcat-transport-wide-cc-extensions-01
 * section 3.1 lays it out. werift's TransportWideCC.packetResults cannot serve here: it skips status
 * vector chunks, lists runLength + 1 packets per run-length chunk, restarts every chunk at the base
 * sequence number, never wraps at 65536 and truncates each delta to whole milliseconds.
 */
function parse(buf: Buffer): Parsed {
  assert.equal(buf[0]! >>> 6, 2, 'version');
  assert.equal(buf[0]! & 0x1f, 15, 'FMT');
  assert.equal(buf[1], 205, 'PT');
  assert.equal((buf.readUInt16BE(2) + 1) * 4, buf.length, 'length field');
  const padded = (buf[0]! & 0x20) !== 0;
  const end = padded ? buf.length - buf[buf.length - 1]! : buf.length;
  if (padded) assert.ok(buf[buf.length - 1]! > 0 && buf[buf.length - 1]! < 4, 'padding 1..3');
  const base = buf.readUInt16BE(12);
  const count = buf.readUInt16BE(14);
  const referenceTime = buf.readUIntBE(16, 3);
  const statuses: number[] = [];
  let kinds = '';
  let at = 20;
  while (statuses.length < count) {
    const v = buf.readUInt16BE(at);
    at += 2;
    if ((v & 0x8000) === 0) {
      const status = (v >>> 13) & 3;
      assert.notEqual(status, 3, 'no "received without delta" in a run');
      const run = v & 0x1fff;
      assert.ok(run > 0, 'run length > 0');
      for (let i = 0; i < run; i++) statuses.push(status);
      kinds += 'R';
    } else if ((v & 0x4000) === 0) {
      for (let i = 13; i >= 0; i--) statuses.push((v >>> i) & 1);
      kinds += '1';
    } else {
      for (let i = 12; i >= 0; i -= 2) statuses.push((v >>> i) & 3);
      kinds += '2';
    }
  }
  // Symbols of the last chunk past the count: a run never overshoots, a vector pads with "not received".
  for (const extra of statuses.splice(count)) assert.equal(extra, 0);
  let ticks = referenceTime * 256;
  const packets: { seq: number; arrivalUs: number | undefined }[] = [];
  const deltasUs: number[] = [];
  statuses.forEach((status, i) => {
    let arrivalUs: number | undefined;
    if (status === 1 || status === 2) {
      const delta = status === 1 ? buf.readUInt8(at) : buf.readInt16BE(at);
      at += status;
      ticks += delta;
      deltasUs.push(delta * 250);
      arrivalUs = ticks * 250;
    }
    packets.push({ seq: (base + i) & 0xffff, arrivalUs });
  });
  assert.equal(at, end, 'deltas end where the padding starts');
  return {
    senderSsrc: buf.readUInt32BE(4), mediaSourceSsrc: buf.readUInt32BE(8), base, count, referenceTime, fbPktCount: buf[19]!,
    chunkKinds: kinds, packets, deltasUs,
  };
}

/** Serializes, checks werift's own parser agrees on every field, and parses. */
function roundTrip(fb: RtcpTransportLayerFeedback): Parsed & { readonly bytes: number } {
  const buf = fb.serialize();
  const parsed = parse(buf);
  const [back] = RtcpPacketConverter.deSerialize(buf);
  assert.ok(back instanceof RtcpTransportLayerFeedback && back.feedback instanceof TransportWideCC);
  const w = back.feedback;
  assert.equal(w.baseSequenceNumber, parsed.base);
  assert.equal(w.packetStatusCount, parsed.count);
  assert.equal(w.referenceTime, parsed.referenceTime);
  assert.equal(w.fbPktCount, parsed.fbPktCount);
  assert.equal(w.senderSsrc, parsed.senderSsrc);
  assert.equal(w.mediaSourceSsrc, parsed.mediaSourceSsrc);
  assert.deepEqual(w.recvDeltas.map((d) => d.delta), parsed.deltasUs);
  return { ...parsed, bytes: buf.length };
}

/** Arrival times per sequence number over all messages, checking they follow on from each other. */
function reported(messages: readonly Parsed[]): Map<number, number | undefined> {
  const all = new Map<number, number | undefined>();
  for (const [i, m] of messages.entries()) {
    if (i > 0) {
      const prev = messages[i - 1]!;
      assert.equal(m.base, (prev.base + prev.count) & 0xffff, 'messages follow on');
      assert.equal(m.fbPktCount, (prev.fbPktCount + 1) & 0xff, 'feedback count increments');
    }
    for (const p of m.packets) {
      assert.ok(!all.has(p.seq), `seq ${p.seq} reported once`);
      all.set(p.seq, p.arrivalUs);
    }
  }
  return all;
}

const T0 = 5_000_000_000; // a multiple of 64 ms, in µs

function buildAll(r: TwccRecorder, media = 0x2222): (Parsed & { bytes: number })[] {
  return r.build(media).map(roundTrip);
}

describe('TwccRecorder', () => {
  it('reports packets in order with their arrival times and SSRCs', () => {
    const r = new TwccRecorder(0x11111111);
    for (let i = 0; i < 10; i++) r.record(100 + i, T0 + i * 5000);
    const [m, ...rest] = buildAll(r, 0xfeedbeef);
    assert.equal(rest.length, 0);
    assert.ok(m);
    assert.equal(m.senderSsrc, 0x11111111);
    assert.equal(m.mediaSourceSsrc, 0xfeedbeef);
    assert.equal(m.base, 100);
    assert.equal(m.count, 10);
    assert.equal(m.fbPktCount, 0);
    assert.equal(m.referenceTime, T0 / 64000);
    assert.deepEqual(m.packets.map((p) => p.arrivalUs), Array.from({ length: 10 }, (_, i) => T0 + i * 5000));
  });

  it('returns [] when nothing new was recorded', () => {
    const r = new TwccRecorder(1);
    assert.deepEqual(r.build(2), []);
    r.record(1, T0);
    assert.equal(r.build(2).length, 1);
    assert.deepEqual(r.build(2), []);
  });

  it('reports lost packets between received ones as not received', () => {
    const r = new TwccRecorder(1);
    for (const s of [1, 2, 5, 6, 9]) r.record(s, T0 + s * 1000);
    const [m] = buildAll(r);
    assert.deepEqual(m?.packets, [1, 2, 3, 4, 5, 6, 7, 8, 9].map((s) => ({ seq: s, arrivalUs: [3, 4, 7, 8].includes(s) ? undefined : T0 + s * 1000 })));
  });

  it('reports a hole before the first packet of a build as lost (it never arrived since the last build)', () => {
    const r = new TwccRecorder(1);
    r.record(1, T0);
    buildAll(r);
    r.record(4, T0 + 10_000);
    const [m] = buildAll(r);
    assert.equal(m?.base, 2);
    assert.deepEqual(m?.packets.map((p) => p.arrivalUs), [undefined, undefined, T0 + 10_000]);
  });

  it('a reordered packet fills its hole with its own (later) arrival, as a negative large delta after it', () => {
    const r = new TwccRecorder(1);
    r.record(1, T0);
    r.record(3, T0 + 1000);
    r.record(2, T0 + 2000);
    const [m] = buildAll(r);
    assert.deepEqual(m?.packets.map((p) => p.arrivalUs), [T0, T0 + 2000, T0 + 1000]);
    assert.deepEqual(m?.deltasUs, [0, 2000, -1000]);
    assert.equal(m?.chunkKinds, '2');
  });

  it('accepts a packet older than the first one recorded, before anything was reported', () => {
    const r = new TwccRecorder(1);
    r.record(10, T0);
    r.record(8, T0 + 500);
    const [m] = buildAll(r);
    assert.equal(m?.base, 8);
    assert.deepEqual(m?.packets.map((p) => p.arrivalUs), [T0 + 500, undefined, T0]);
  });

  it('keeps one reference time when the packets older than the first one recorded reach across the wrap', () => {
    const r = new TwccRecorder(1);
    r.record(0, T0 + 64_000);
    r.record(1, T0 + 57_500);
    for (const s of [65531, 65533, 65534]) r.record(s, T0);
    const [m, ...rest] = buildAll(r);
    assert.equal(rest.length, 0);
    assert.equal(m?.referenceTime, T0 / 64_000);
    assert.deepEqual(m?.packets, [
      { seq: 65531, arrivalUs: T0 }, { seq: 65532, arrivalUs: undefined }, { seq: 65533, arrivalUs: T0 }, { seq: 65534, arrivalUs: T0 },
      { seq: 65535, arrivalUs: undefined }, { seq: 0, arrivalUs: T0 + 64_000 }, { seq: 1, arrivalUs: T0 + 57_500 },
    ]);
  });

  it('ignores a late packet whose number was already reported (lost), and duplicates', () => {
    const r = new TwccRecorder(1);
    r.record(1, T0);
    r.record(3, T0 + 1000);
    r.record(3, T0 + 9000);
    buildAll(r);
    r.record(2, T0 + 2000);
    r.record(1, T0 + 2000);
    assert.deepEqual(r.build(1), []);
    r.record(4, T0 + 3000);
    const [m] = buildAll(r);
    assert.equal(m?.base, 4);
    assert.equal(m?.count, 1);
  });

  it('keeps the first arrival of a duplicate', () => {
    const r = new TwccRecorder(1);
    r.record(7, T0);
    r.record(7, T0 + 3000);
    assert.deepEqual(buildAll(r)[0]?.packets, [{ seq: 7, arrivalUs: T0 }]);
  });

  it('unwraps 65535 → 0 within a message and across builds', () => {
    const r = new TwccRecorder(1);
    for (const [i, s] of [65533, 65534, 65535, 0, 1].entries()) r.record(s, T0 + i * 1000);
    const [m] = buildAll(r);
    assert.equal(m?.base, 65533);
    assert.equal(m?.count, 5);
    assert.deepEqual(m?.packets.map((p) => p.seq), [65533, 65534, 65535, 0, 1]);
    assert.ok(m?.packets.every((p) => p.arrivalUs !== undefined));

    const w = new TwccRecorder(1);
    w.record(65534, T0);
    buildAll(w);
    w.record(1, T0 + 1000);
    w.record(65535, T0 + 2000); // reordered across the wrap, still pending
    const [n] = buildAll(w);
    assert.equal(n?.base, 65535);
    assert.deepEqual(n?.packets, [{ seq: 65535, arrivalUs: T0 + 2000 }, { seq: 0, arrivalUs: undefined }, { seq: 1, arrivalUs: T0 + 1000 }]);
  });

  it('keeps counting over many wraps', () => {
    const r = new TwccRecorder(1);
    let t = T0;
    let messages = 0;
    for (let n = 0; n < 200_000; n++) {
      r.record(n & 0xffff, (t += 800));
      if (n % 100 === 99) {
        const ms = buildAll(r);
        messages += ms.length;
        assert.equal(ms[0]?.base, (n - 99) & 0xffff);
        assert.equal(ms.reduce((a, m) => a + m.count, 0), 100);
      }
    }
    assert.equal(messages, 2000);
  });

  it('starts a new message when a delta does not fit 16 signed bits (a long silence or a late reorder)', () => {
    const r = new TwccRecorder(1);
    r.record(1, T0);
    r.record(2, T0 + 8_191_750); // 32767 ticks: the largest delta
    r.record(3, T0 + 8_191_750 + 8_192_000); // 32768 ticks: one too many
    r.record(5, T0 + 100_000); // -32768 ticks and more from 3, with 4 lost before it
    const ms = buildAll(r);
    assert.equal(ms.length, 3);
    assert.deepEqual(ms.map((m) => [m.base, m.count]), [[1, 2], [3, 1], [4, 2]]);
    const all = reported(ms);
    assert.deepEqual([...all], [[1, T0], [2, T0 + 8_191_750], [3, T0 + 16_383_750], [4, undefined], [5, T0 + 100_000]]);
    assert.deepEqual(ms[0]?.deltasUs, [0, 8_191_750]);
  });

  it('sets the 24-bit reference time in 64 ms from the first received packet, wrapping', () => {
    const r = new TwccRecorder(1);
    const wrapUs = 2 ** 24 * 64_000;
    r.record(1, wrapUs + 64_000 * 3 + 1000);
    const [m] = buildAll(r);
    assert.equal(m?.referenceTime, 3);
    assert.deepEqual(m?.deltasUs, [1000]);
  });

  it('rounds each arrival to 250 µs without letting the error grow along a message', () => {
    const r = new TwccRecorder(1);
    const times = Array.from({ length: 500 }, (_, i) => T0 + 37 + i * 1101);
    times.forEach((t, i) => r.record(i, t));
    const all = reported(buildAll(r));
    times.forEach((t, i) => {
      const got = all.get(i);
      assert.ok(got !== undefined && Math.abs(got - t) <= 125, `seq ${i}: ${got} vs ${t}`);
    });
  });

  it('encodes long runs as run-length chunks and mixes as status vectors', () => {
    const r = new TwccRecorder(1);
    for (let s = 0; s < 30; s++) r.record(s, T0 + s * 1000); // 30 small deltas: one run
    r.record(3030, T0 + 40_000); // 3000 lost: one run, then this one
    const [m] = buildAll(r);
    assert.equal(m?.count, 3031);
    assert.equal(m?.chunkKinds, 'RRR');
    assert.ok((m?.bytes ?? 0) < 80);
  });

  it('splits many packets into messages under 1200 bytes, and reports each exactly', () => {
    let seed = 12345;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const r = new TwccRecorder(1);
    const expected = new Map<number, number>();
    let t = T0;
    const first = 64000;
    for (let i = 0; i < 4000; i++) {
      t += random() < 0.1 ? Math.floor(random() * 200_000) : Math.floor(random() * 3000);
      const seq = (first + i) & 0xffff;
      if (random() < 0.15) continue; // lost
      const arrival = Math.round(t / 250) * 250 + (random() < 0.05 ? -250 * Math.floor(random() * 40) : 0);
      expected.set(seq, arrival);
    }
    // Arrive with some reordering: swap neighbours now and then.
    const order = [...expected.keys()];
    for (let i = 1; i < order.length; i++) if (random() < 0.1) [order[i - 1], order[i]] = [order[i]!, order[i - 1]!];
    for (const s of order) r.record(s, expected.get(s)!);
    const ms = buildAll(r);
    assert.ok(ms.length >= 4, `${ms.length} messages`);
    for (const m of ms) assert.ok(m.bytes <= 1200, `${m.bytes} bytes`);
    assert.ok(ms.some((m) => m.chunkKinds.includes('1')) && ms.some((m) => m.chunkKinds.includes('2')));
    const all = reported(ms);
    const lastSeq = Math.max(...[...expected.keys()].map((s) => (s - first + 65536) & 0xffff));
    assert.equal(all.size, lastSeq + 1);
    for (const [s, arrival] of all) assert.equal(arrival, expected.get(s), `seq ${s}`);
  });

  it('bounds what it holds: without builds only the last 4096 sequence numbers are reported', () => {
    const r = new TwccRecorder(1);
    for (let s = 0; s < 10_000; s++) r.record(s & 0xffff, T0 + s * 100);
    const ms = buildAll(r);
    const all = reported(ms);
    assert.equal(all.size, 4096);
    assert.equal(ms[0]?.base, 10_000 - 4096);
    r.record(10_000 - 4097, T0); // dropped unreported earlier: stays ignored
    r.record(10_000, T0 + 1_000_000);
    assert.equal(buildAll(r)[0]?.base, 10_000);
  });

  it('a jump far ahead reports at most 4096 sequence numbers, mostly lost', () => {
    const r = new TwccRecorder(1);
    r.record(0, T0);
    r.record(30_000, T0 + 1000);
    const all = reported(buildAll(r));
    assert.equal(all.size, 4096);
    assert.equal(all.get(30_000), T0 + 1000);
  });

  it('increments the feedback packet count per message, wrapping at 256', () => {
    const r = new TwccRecorder(1);
    const counts: number[] = [];
    for (let i = 0; i < 300; i++) {
      r.record(i, T0 + i * 1000);
      counts.push(...buildAll(r).map((m) => m.fbPktCount));
    }
    assert.deepEqual(counts, Array.from({ length: 300 }, (_, i) => i & 0xff));
  });

  it('pads to 32 bits only when the body needs it', () => {
    const r = new TwccRecorder(1);
    r.record(1, T0); // 16 + 2 (one chunk) + 1 delta: padded
    const padded = r.build(1)[0]!.serialize();
    assert.equal(padded[0]! & 0x20, 0x20);
    assert.equal(padded.length, 24);
    for (let s = 2; s <= 3; s++) r.record(s, T0 + s * 1000); // 16 + 2 + 2 deltas: aligned
    const aligned = r.build(1)[0]!.serialize();
    assert.equal(aligned[0]! & 0x20, 0);
    assert.equal(aligned.length, 24);
    parse(padded);
    parse(aligned);
  });

  it('ignores non-finite arrival times', () => {
    const r = new TwccRecorder(1);
    r.record(1, Number.NaN);
    assert.deepEqual(r.build(1), []);
  });

  it('reports every pending packet exactly, whatever the losses, reorders and delays (property)', () => {
    const arrival = fc.record({
      lost: fc.boolean(),
      /** Gap from the previous packet's send time, in 250 µs ticks: small, large or beyond 16 bits. */
      gap: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 40_000 })),
      /** Extra queueing in ticks, which reorders arrival times against sequence numbers. */
      jitter: fc.integer({ min: 0, max: 2000 }),
      late: fc.boolean(),
    });
    fc.assert(fc.property(fc.integer({ min: 0, max: 65535 }), fc.array(arrival, { minLength: 1, maxLength: 1500 }), (first, packets) => {
      const r = new TwccRecorder(7);
      const expected = new Map<number, number>();
      const late: [number, number][] = [];
      let ticks = T0 / 250;
      packets.forEach((p, i) => {
        ticks += p.gap;
        if (p.lost) return;
        const seq = (first + i) & 0xffff;
        const at = (ticks + p.jitter) * 250;
        expected.set(seq, at);
        if (p.late) late.push([seq, at]);
        else r.record(seq, at);
      });
      for (const [seq, at] of late) r.record(seq, at);
      const all = reported(r.build(9).map(roundTrip));
      if (expected.size === 0) return assert.equal(all.size, 0);
      for (const [seq, at] of expected) assert.equal(all.get(seq), at, `seq ${seq}`);
      for (const [seq, at] of all) if (at === undefined) assert.ok(!expected.has(seq));
    }), { numRuns: 300 });
  });
});
