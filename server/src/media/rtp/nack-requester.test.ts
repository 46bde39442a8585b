import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { NACK_MAX_PENDING, NackRequester } from './nack-requester.ts';

const make = (maxRetries = 10, maxAgeMs = 1000): NackRequester => new NackRequester({ maxAgeMs, maxRetries });

function arrive(n: NackRequester, seqs: readonly number[], nowMs: number): boolean[] {
  return seqs.map((s) => n.onPacket(s, nowMs));
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('NackRequester', () => {
  it('asks for a single lost packet after the reorder delay, then once per round trip', () => {
    const n = make();
    arrive(n, [1, 2, 4], 0);
    assert.equal(n.nextDueMs(50), 5);
    assert.deepEqual(n.due(4.9, 50), []);
    assert.deepEqual(n.due(5, 50), [3]);
    assert.deepEqual(n.due(6, 50), []);
    assert.equal(n.nextDueMs(50), 55);
    assert.deepEqual(n.due(54, 50), []);
    assert.deepEqual(n.due(55, 50), [3]);
    assert.equal(n.onPacket(3, 60), true);
    assert.deepEqual(n.due(500, 50), []);
    assert.equal(n.nextDueMs(50), undefined);
    assert.equal(n.takeGivenUp(), 0);
  });

  it('asks for a burst at once, in order', () => {
    const n = make();
    arrive(n, [1, 10], 0);
    assert.deepEqual(n.due(5, 20), range(2, 9));
    assert.deepEqual(arrive(n, [5, 2], 10), [true, true]);
    assert.deepEqual(n.due(25, 20), [3, 4, 6, 7, 8, 9]);
  });

  it('asks across the 65535 → 0 wrap', () => {
    const n = make();
    arrive(n, [65533, 65534, 1], 0);
    assert.deepEqual(n.due(5, 20), [65535, 0]);
    assert.equal(n.onPacket(0, 6), true);
    assert.deepEqual(n.due(25, 20), [65535]);
    assert.equal(n.onPacket(65535, 26), true);
    assert.equal(n.nextDueMs(20), undefined);
  });

  it('does not ask for a packet reordered within the delay, and does not call it a retransmission', () => {
    const n = make();
    arrive(n, [1, 3], 0);
    assert.equal(n.onPacket(2, 3), false);
    assert.deepEqual(n.due(10, 20), []);
    assert.equal(n.nextDueMs(20), undefined);
  });

  it('takes a configurable reorder delay, 0 asking at once', () => {
    const n = new NackRequester({ maxAgeMs: 1000, maxRetries: 10, reorderDelayMs: 0 });
    arrive(n, [1, 3], 0);
    assert.deepEqual(n.due(0, 20), [2]);
    const m = new NackRequester({ maxAgeMs: 1000, maxRetries: 10, reorderDelayMs: 30 });
    arrive(m, [1, 3], 0);
    assert.deepEqual(m.due(29, 20), []);
    assert.deepEqual(m.due(30, 20), [2]);
  });

  it('spaces retries by the round trip time, at least 10 ms, following its changes', () => {
    const n = make();
    arrive(n, [1, 3], 0);
    const asks: number[] = [];
    for (let t = 0; t <= 400; t++) if (n.due(t, t < 200 ? 100 : 3).length > 0) asks.push(t);
    // at 200 the round trip drops to 3 ms: the ask due since 115 goes at once, then every 10 ms
    assert.deepEqual(asks, [5, 105, 200, 210, 220, 230, 240, 250, 260, 270]);
    assert.equal(n.takeGivenUp(), 1);
  });

  it('gives up after maxRetries asks once one more round trip passed', () => {
    const n = make(3);
    arrive(n, [1, 3], 0);
    assert.deepEqual([n.due(5, 100), n.due(105, 100), n.due(205, 100)], [[2], [2], [2]]);
    assert.equal(n.nextDueMs(100), 305);
    assert.deepEqual(n.due(304, 100), []);
    assert.equal(n.takeGivenUp(), 0);
    assert.deepEqual(n.due(305, 100), []);
    assert.equal(n.takeGivenUp(), 1);
    assert.equal(n.takeGivenUp(), 0);
    assert.equal(n.nextDueMs(100), undefined);
  });

  it('gives up by age even with retries left', () => {
    const n = make(100, 1000);
    arrive(n, [1, 3], 0);
    const asks: number[] = [];
    for (let t = 0; t < 1000; t++) if (n.due(t, 300).length > 0) asks.push(t);
    assert.deepEqual(asks, [5, 305, 605, 905]);
    assert.equal(n.nextDueMs(300), 1000);
    assert.equal(n.takeGivenUp(), 0);
    assert.deepEqual(n.due(1000, 300), []);
    assert.equal(n.takeGivenUp(), 1);
  });

  it('gives up a packet never asked for when due() is called only after its age passed', () => {
    const n = make();
    arrive(n, [1, 3, 4, 6], 0);
    assert.deepEqual(n.due(2000, 50), []);
    assert.equal(n.takeGivenUp(), 2);
  });

  it('with maxRetries 0 gives up at once without asking', () => {
    const n = make(0);
    arrive(n, [1, 3], 0);
    assert.equal(n.nextDueMs(50), 0);
    assert.deepEqual(n.due(0, 50), []);
    assert.equal(n.takeGivenUp(), 1);
  });

  it('calls only the first copy of an asked-for packet a retransmission, and duplicates nothing', () => {
    const n = make();
    arrive(n, [1, 3], 0);
    n.due(5, 20);
    assert.deepEqual(arrive(n, [2, 2, 3, 1], 10), [true, false, false, false]);
  });

  it('still recognises a retransmission that arrives after the packet was given up', () => {
    const n = make(1);
    arrive(n, [1, 3], 0);
    assert.deepEqual(n.due(5, 20), [2]);
    n.due(25, 20);
    assert.equal(n.takeGivenUp(), 1);
    assert.equal(n.onPacket(2, 30), true);
  });

  it('resets on a jump of more than 1000, giving up what was pending and skipped', () => {
    const n = make();
    arrive(n, [1, 3], 0);
    arrive(n, [3 + 1001], 1);
    assert.equal(n.takeGivenUp(), 1 + 1000);
    assert.deepEqual(n.due(100, 20), []);
    assert.equal(n.nextDueMs(20), undefined);
    arrive(n, [1005, 1007], 2);
    assert.deepEqual(n.due(100, 20), [1006]);
  });

  it('repairs a gap of exactly 1000, keeping the newest 500 missing', () => {
    const n = make();
    arrive(n, [1, 1001], 0);
    assert.equal(n.takeGivenUp(), 999 - NACK_MAX_PENDING);
    assert.deepEqual(n.due(5, 20), range(1001 - NACK_MAX_PENDING, 1000));
  });

  it('bounds the pending list to 500, giving up the oldest', () => {
    const n = make();
    n.onPacket(0, 0);
    for (let s = 2; s <= 1400; s += 2) n.onPacket(s, 0); // every odd number lost: 700 missing
    assert.equal(n.takeGivenUp(), 200);
    const asked = n.due(5, 20);
    assert.equal(asked.length, 500);
    assert.equal(asked[0], 401);
    assert.equal(asked.at(-1), 1399);
  });

  it('keeps working through many wraps with steady loss, compacting its list', () => {
    const n = make(2, 200);
    let t = 0;
    let asked = 0;
    let given = 0;
    for (let i = 0; i < 300_000; i++) {
      t += 1;
      if (i % 7 === 3 || i % 13 === 5) continue; // lost
      n.onPacket(i & 0xffff, t);
      if (i % 3 === 0) for (const s of n.due(t, 30)) {
        asked += 1;
        if (s % 2 === 0) n.onPacket(s, t); // half the retransmissions arrive
      }
      given += n.takeGivenUp();
    }
    n.due(t + 1000, 30);
    given += n.takeGivenUp();
    const lost = Array.from({ length: 300_000 }, (_, i) => i).filter((i) => i % 7 === 3 || i % 13 === 5).length;
    assert.ok(asked >= lost, `asked ${asked} times for ${lost} lost packets`);
    assert.ok(given > lost / 3 && given < lost, `gave up ${given} of ${lost}`);
  });

  it('compacts entries of reordered packets while an older one stays missing', () => {
    const n = make(10, 10_000);
    arrive(n, [0, 2], 0);
    for (let s = 4; s < 3000; s += 2) {
      n.onPacket(s, 0);
      assert.equal(n.onPacket(s - 1, 0), false);
    }
    n.onPacket(3000, 0);
    assert.deepEqual(n.due(5, 20), [1, 2999]);
    assert.equal(n.onPacket(2999, 6), true);
    assert.equal(n.onPacket(1, 6), true);
    assert.equal(n.nextDueMs(20), undefined);
    assert.equal(n.takeGivenUp(), 0);
  });

  it('gives up a missing packet once 4096 newer numbers passed, whatever its age', () => {
    const n = make(10, 60_000);
    arrive(n, [0, 2], 0);
    for (let s = 3; s <= 4096; s++) n.onPacket(s, 0);
    assert.equal(n.takeGivenUp(), 0);
    n.onPacket(4097, 0);
    assert.equal(n.takeGivenUp(), 1);
    assert.equal(n.nextDueMs(20), undefined);
  });

  it('treats a packet 4096 or more behind as stray, and a run of them as a restart of the numbering', () => {
    const n = make();
    arrive(n, [50000, 50002], 0);
    assert.equal(n.onPacket(40000, 1), false);
    n.onPacket(50003, 2);
    assert.deepEqual(n.due(10, 20), [50001]);
    assert.deepEqual(arrive(n, [40000, 40001], 20), [false, false]);
    assert.equal(n.takeGivenUp(), 1);
    arrive(n, [40003], 21);
    assert.deepEqual(n.due(30, 20), [40002]);
    // 4095 behind is still within reach: not a restart
    arrive(n, [40003 - 4095, 40004 - 4095], 22);
    arrive(n, [40005], 23);
    assert.deepEqual(n.due(50, 20), [40002, 40004]);
  });

  it('rejects bad options', () => {
    assert.throws(() => new NackRequester({ maxAgeMs: 0, maxRetries: 1 }), TypeError);
    assert.throws(() => new NackRequester({ maxAgeMs: 100, maxRetries: 1.5 }), TypeError);
    assert.throws(() => new NackRequester({ maxAgeMs: 100, maxRetries: -1 }), TypeError);
    assert.throws(() => new NackRequester({ maxAgeMs: 100, maxRetries: 1, reorderDelayMs: -1 }), TypeError);
  });

  it('matches a plain model of its rules on random traffic (property)', () => {
    const step = fc.record({
      gap: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 40 }), fc.integer({ min: -30, max: 0 })),
      dt: fc.integer({ min: 0, max: 40 }),
      due: fc.boolean(),
      rtt: fc.integer({ min: 0, max: 120 }),
    });
    fc.assert(fc.property(fc.integer({ min: 0, max: 65535 }), fc.array(step, { maxLength: 400 }), (first, steps) => {
      const maxRetries = 3;
      const maxAgeMs = 300;
      const n = make(maxRetries, maxAgeMs);
      const model = new Map<number, { since: number; asked: number; tries: number }>();
      const askedEver = new Set<number>();
      let highest = first;
      let t = 0;
      let modelGivenUp = 0;
      n.onPacket(first, t);
      for (const s of steps) {
        t += s.dt;
        const ext = highest + s.gap;
        const seq = ((ext % 65536) + 65536) % 65536;
        const retransmitted = n.onPacket(seq, t);
        if (s.gap > 0) {
          for (let e = highest + 1; e < ext; e++) {
            if (model.size >= NACK_MAX_PENDING) {
              model.delete(Math.min(...model.keys()));
              modelGivenUp += 1;
            }
            model.set(e, { since: t, asked: 0, tries: 0 });
          }
          highest = ext;
          for (const e of model.keys()) {
            if (e > highest - 4096) continue;
            model.delete(e);
            modelGivenUp += 1;
          }
          assert.equal(retransmitted, false);
        } else if (s.gap < 0) {
          model.delete(ext);
          assert.equal(retransmitted, askedEver.has(ext));
          askedEver.delete(ext);
        }
        if (!s.due) continue;
        const interval = Math.max(s.rtt, 10);
        const expected: number[] = [];
        for (const [e, m] of [...model].sort((a, b) => a[0] - b[0])) {
          if (t >= m.since + maxAgeMs || (m.tries >= maxRetries && t >= m.asked + interval)) {
            model.delete(e);
            modelGivenUp += 1;
          } else if (m.tries < maxRetries && t >= (m.tries === 0 ? m.since + 5 : m.asked + interval)) {
            expected.push(e & 0xffff);
            m.tries += 1;
            m.asked = t;
            askedEver.add(e);
          }
        }
        assert.deepEqual(n.due(t, s.rtt), expected);
        assert.equal(n.takeGivenUp(), modelGivenUp);
        modelGivenUp = 0;
        const next = n.nextDueMs(s.rtt);
        if (model.size === 0) assert.equal(next, undefined);
        else assert.ok(next !== undefined && next > t);
      }
    }), { numRuns: 300 });
  });

  it('tells how long after its gap opened a packet asked for again arrived', () => {
    const n = new NackRequester({ maxAgeMs: 1000, maxRetries: 10, reorderDelayMs: 5 });
    n.onPacket(1, 0);
    n.onPacket(3, 10);
    assert.deepEqual(n.due(20, 50), [2]);
    assert.equal(n.onPacket(2, 130), true);
    assert.equal(n.recoveredAfterMs, 120);
  });
});
