import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RtcpPacketConverter, RtcpRrPacket } from 'werift';
import { cumulativeLost, ReceiveStats } from './receive-stats.ts';

/** Audio at 48 kHz, 20 ms a packet: the timestamp steps 960 per packet. */
const RATE = 48_000;
const STEP = 960;
const PERIOD_MS = 20;

/** Feeds packets `seqs` (16-bit) in the given order, each on time for its own number offset from `first`. */
function feed(stats: ReceiveStats, seqs: readonly number[], opts: { first?: number; retransmitted?: readonly number[] } = {}): boolean[] {
  const first = opts.first ?? seqs[0] ?? 0;
  return seqs.map((s) => {
    const n = (s - first + 65536) & 0xffff;
    return stats.onPacket(s, 1000 + n * STEP, 5000 + n * PERIOD_MS, opts.retransmitted?.includes(s) ?? false);
  });
}

const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => (from + i) & 0xffff);

describe('ReceiveStats', () => {
  it('reports no loss and no jitter for a steady, complete stream', () => {
    const stats = new ReceiveStats(RATE);
    assert.ok(feed(stats, range(100, 100)).every(Boolean));
    const r = stats.report(0xabcdef01, 7000);
    assert.equal(r.ssrc, 0xabcdef01);
    assert.equal(r.fractionLost, 0);
    assert.equal(r.packetsLost, 0);
    assert.equal(r.highestSequence, 199);
    assert.equal(r.jitter, 0);
    assert.equal(r.lsr, 0);
    assert.equal(r.dlsr, 0);
  });

  it('reports zeros before any packet', () => {
    const r = new ReceiveStats(RATE).report(1, 0);
    assert.deepEqual([r.fractionLost, r.packetsLost, r.highestSequence, r.jitter, r.lsr, r.dlsr], [0, 0, 0, 0, 0, 0]);
  });

  it('counts losses cumulatively and the fraction per report interval', () => {
    const stats = new ReceiveStats(RATE);
    const lost = new Set([10, 11, 12, 50, 51, 70, 71, 72, 73, 99]);
    feed(stats, range(0, 101).filter((s) => !lost.has(s)), { first: 0 });
    let r = stats.report(1, 0);
    assert.equal(r.packetsLost, 10);
    assert.equal(r.fractionLost, Math.floor((10 * 256) / 101));
    assert.equal(r.highestSequence, 100);
    feed(stats, range(101, 100), { first: 0 });
    r = stats.report(1, 0);
    assert.equal(r.fractionLost, 0);
    assert.equal(r.packetsLost, 10);
    feed(stats, range(201, 4).filter((s) => s !== 202), { first: 0 });
    r = stats.report(1, 0);
    assert.equal(r.fractionLost, 64);
    assert.equal(r.packetsLost, 11);
  });

  it('reads the cumulative loss back from the 24-bit field, negative values included', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, range(0, 10).filter((s) => s !== 3 && s !== 4), { first: 0 });
    assert.equal(cumulativeLost(stats.report(1, 0).packetsLost), 2);
    assert.deepEqual([5, 0xffffff, 0x7fffff, 0x800000].map(cumulativeLost), [5, -1, 0x7fffff, -0x800000]);
  });

  it('extends the highest sequence number over wraps', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, range(65530, 16));
    let r = stats.report(1, 0);
    assert.equal(r.highestSequence, 65536 + 9);
    assert.equal(r.packetsLost, 0);
    for (let cycle = 0; cycle < 3; cycle++) feed(stats, range(10 + cycle * 65536, 65536).filter((_, i) => i % 1000 !== 0), { first: 65530 });
    r = stats.report(1, 0);
    assert.equal(r.highestSequence, 4 * 65536 + 9);
    assert.equal(r.packetsLost, 3 * 66);
  });

  it('counts a reordered packet once, on time or across a wrap', () => {
    const stats = new ReceiveStats(RATE);
    assert.deepEqual(feed(stats, [65534, 0, 65535, 2, 1, 3]), [true, true, true, true, true, true]);
    const r = stats.report(1, 0);
    assert.equal(r.packetsLost, 0);
    assert.equal(r.fractionLost, 0);
    assert.equal(r.highestSequence, 65536 + 3);
  });

  it('returns false for duplicates and does not count them', () => {
    const stats = new ReceiveStats(RATE);
    assert.deepEqual(feed(stats, [1, 2, 2, 4, 1, 3, 4, 3]), [true, true, false, true, false, true, false, false]);
    const r = stats.report(1, 0);
    assert.equal(r.packetsLost, 0);
    assert.equal(r.highestSequence, 4);
  });

  it('remembers 2048 sequence numbers for duplicates', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, range(0, 3000));
    assert.equal(stats.onPacket(3000 - 2047, 0, 0, false), false);
    // forgotten: not counted again (it is a jump backwards), but it cannot be called a duplicate
    assert.equal(stats.onPacket(3000 - 2049, 0, 0, false), true);
    assert.equal(stats.report(1, 0).packetsLost, 0);
  });

  it('counts a packet that only arrived as a retransmission as lost', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, [1, 2, 4, 5, 6, 7, 8]);
    assert.equal(stats.onPacket(3, 1000 + 2 * STEP, 5300, true), true);
    assert.equal(stats.onPacket(3, 1000 + 2 * STEP, 5310, true), false);
    assert.equal(stats.onPacket(3, 1000 + 2 * STEP, 5320, false), false);
    const r = stats.report(1, 0);
    assert.equal(r.packetsLost, 1);
    assert.equal(r.fractionLost, 32);
    assert.equal(r.jitter, 0);
  });

  it('keeps a retransmission out of the jitter', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, range(0, 10));
    stats.onPacket(10, 1000 + 10 * STEP, 5000 + 10 * PERIOD_MS + 400, true);
    feed(stats, range(11, 10), { first: 0 });
    assert.equal(stats.report(1, 0).jitter, 0);
  });

  it('jitter is about 0 on a steady stream, even when the timestamp wraps', () => {
    const stats = new ReceiveStats(90_000);
    let ts = 2 ** 32 - 3000 * 5;
    for (let i = 0; i < 300; i++) {
      // a 30 fps stream, 3 packets a frame sharing a timestamp and arriving together
      for (let p = 0; p < 3; p++) stats.onPacket(i * 3 + p, ts >>> 0, 10_000 + (i * 100) / 3, false);
      ts += 3000;
    }
    assert.ok(stats.report(1, 0).jitter <= 1);
  });

  it('jitter follows RFC 3550 A.8 on alternating delays', () => {
    const stats = new ReceiveStats(RATE);
    for (let i = 0; i < 400; i++) stats.onPacket(i, i * STEP, i * PERIOD_MS + (i % 2 === 0 ? 0 : 5), false);
    // |D| is 5 ms = 240 units every packet: J converges to 240
    const j = stats.report(1, 0).jitter;
    assert.ok(j >= 238 && j <= 240, `jitter ${j}`);
    const again = new ReceiveStats(RATE);
    again.onPacket(0, 0, 0, false);
    again.onPacket(1, STEP, PERIOD_MS + 1, false); // 48 units late: J = 48 / 16
    assert.equal(again.report(1, 0).jitter, 3);
  });

  it('reports LSR and DLSR from the last sender report', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, range(0, 3));
    stats.onSenderReport(0x11112222, 1000);
    stats.onSenderReport(0x12345678, 2000);
    const r = stats.report(1, 2500);
    assert.equal(r.lsr, 0x12345678);
    assert.equal(r.dlsr, 32768); // 0.5 s in 1/65536 s
    assert.equal(stats.report(1, 2000).dlsr, 0);
    assert.equal(stats.report(1, 1999).dlsr, 0);
    stats.onSenderReport(0xffffffff, 0);
    assert.equal(stats.report(1, 1000).lsr, 0xffffffff);
  });

  it('takes a jump for a new numbering once the next packet follows it, and ignores a stray one', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, range(100, 11));
    assert.equal(stats.onPacket(30_000, 0, 0, false), true);
    feed(stats, range(111, 5), { first: 100 });
    let r = stats.report(1, 0);
    assert.equal(r.highestSequence, 115);
    assert.equal(r.packetsLost, 0);
    assert.equal(stats.onPacket(40_000, 0, 0, false), true);
    assert.equal(stats.onPacket(40_001, 0, 0, false), true);
    assert.equal(stats.onPacket(40_003, 0, 0, false), true);
    r = stats.report(1, 0);
    assert.equal(r.highestSequence, 40_003);
    assert.equal(r.packetsLost, 1);
    assert.equal(r.fractionLost, 64);
  });

  it('counts a step forward under 3000 as loss', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, [1, 1001], { first: 1 });
    assert.equal(stats.report(1, 0).packetsLost, 999);
  });

  it('does not count a packet older than the first one, but still tells its duplicate', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, [10, 11]);
    assert.equal(stats.onPacket(9, 0, 0, false), true);
    assert.equal(stats.onPacket(9, 0, 0, false), false);
    const r = stats.report(1, 0);
    assert.equal(r.packetsLost, 0);
    assert.equal(r.highestSequence, 11);
  });

  it('serializes through werift into a receiver report block', () => {
    const stats = new ReceiveStats(RATE);
    feed(stats, range(65000, 1000).filter((s) => s % 7 !== 0));
    stats.onSenderReport(0xdeadbeef, 0);
    const block = stats.report(0x01020304, 1000);
    const buf = new RtcpRrPacket({ ssrc: 42, reports: [block] }).serialize();
    const [rr] = RtcpPacketConverter.deSerialize(buf);
    assert.ok(rr instanceof RtcpRrPacket);
    assert.deepEqual(rr.reports[0]?.toJSON(), block.toJSON());
    assert.equal(buf.readUInt32BE(8), 0x01020304);
    assert.equal(buf.readUIntBE(13, 3), block.packetsLost);
    assert.equal(buf.readUInt32BE(16), 65536 + 463); // extended highest: one cycle, then 0..463
    assert.equal(buf.readUInt32BE(24), 0xdeadbeef);
    assert.equal(buf.readUInt32BE(28), 65536);
  });

  it('rejects a clock rate that is not positive', () => {
    assert.throws(() => new ReceiveStats(0), TypeError);
  });

  it('counts as received exactly the distinct packets that were not retransmissions (property)', () => {
    const packet = fc.record({
      lost: fc.boolean(),
      retransmitted: fc.boolean(),
      duplicated: fc.boolean(),
      /** How many places later than its turn it arrives. */
      delay: fc.integer({ min: 0, max: 40 }),
    });
    fc.assert(fc.property(fc.integer({ min: 0, max: 65535 }), fc.array(packet, { minLength: 1, maxLength: 600 }), (first, packets) => {
      const arrivals: { seq: number; order: number; retransmitted: boolean }[] = [];
      packets.forEach((p, i) => {
        if (p.lost) return;
        arrivals.push({ seq: i, order: i + p.delay, retransmitted: p.retransmitted });
        if (p.duplicated) arrivals.push({ seq: i, order: i + p.delay + 3, retransmitted: false });
      });
      arrivals.sort((a, b) => a.order - b.order);
      const stats = new ReceiveStats(RATE);
      const seen = new Set<number>();
      let received = 0;
      let base = Number.POSITIVE_INFINITY;
      let highest = Number.NEGATIVE_INFINITY;
      for (const a of arrivals) {
        const fresh = stats.onPacket((first + a.seq) & 0xffff, a.seq * STEP, a.order * PERIOD_MS, a.retransmitted);
        assert.equal(fresh, !seen.has(a.seq));
        if (base === Number.POSITIVE_INFINITY) base = a.seq;
        if (fresh && !a.retransmitted && a.seq >= base) received += 1;
        seen.add(a.seq);
        highest = Math.max(highest, a.seq);
      }
      if (arrivals.length === 0) return;
      const r = stats.report(1, 0);
      assert.equal(r.packetsLost, highest - base + 1 - received);
      // extended numbers count cycles from the first packet's own number
      assert.equal(r.highestSequence, ((first + base) & 0xffff) + highest - base);
    }), { numRuns: 300 });
  });
});
