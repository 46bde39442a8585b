import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeliveryQueue, IP_UDP_OVERHEAD_BYTES, ImpairedDirection, seededRandom, type Verdict } from './direction.ts';
import { applyPatch, CLEAN_DIRECTION, CLEAN_LINK, type DirectionSettings } from './link-settings.ts';

const direction = (change: Partial<DirectionSettings>, random: () => number = () => 0.5): ImpairedDirection =>
  new ImpairedDirection({ ...CLEAN_DIRECTION, ...change }, random);
const at = (v: Verdict): number => {
  assert.equal(v.kind, 'deliver');
  return v.kind === 'deliver' ? v.at : Number.NaN;
};

describe('ImpairedDirection (a link direction as a model, on a clock the test holds)', () => {
  it('forwards at once when clean', () => {
    assert.deepEqual(direction({}).admit(1000, 42), { kind: 'deliver', at: 42 });
  });

  it('drops the share of packets the loss rate says, counted as lost', () => {
    const d = direction({ lossRate: 0.3 }, seededRandom(7));
    let dropped = 0;
    for (let i = 0; i < 10_000; i++) if (d.admit(100, i).kind === 'drop') dropped++;
    assert.ok(dropped > 2700 && dropped < 3300, `${dropped} of 10000`);
    assert.equal(d.counters().lost, dropped);
    assert.equal(d.counters().packets, 10_000);
  });

  it('adds the delay, and jitter within ± jitterMs', () => {
    assert.equal(at(direction({ delayMs: 40 }).admit(100, 1000)), 1040);
    const d = direction({ delayMs: 40, jitterMs: 10, reorder: true }, seededRandom(1));
    const delays = Array.from({ length: 1000 }, (_, i) => at(d.admit(100, i * 20)) - i * 20);
    assert.ok(Math.min(...delays) >= 30 && Math.max(...delays) <= 50, `${Math.min(...delays)}..${Math.max(...delays)}`);
    assert.ok(Math.max(...delays) - Math.min(...delays) > 15, 'the draws spread over the range');
  });

  it('keeps order under jitter unless reorder is set', () => {
    const times = (reorder: boolean): number[] => {
      const d = direction({ delayMs: 40, jitterMs: 10, reorder }, seededRandom(3));
      return Array.from({ length: 200 }, (_, i) => at(d.admit(100, i)));
    };
    const kept = times(false);
    assert.deepEqual(kept, [...kept].sort((a, b) => a - b));
    const reordered = times(true);
    assert.notDeepEqual(reordered, [...reordered].sort((a, b) => a - b));
  });

  it('sends at the cap\'s rate, headers counted, and drops at the tail once the queue holds queueMs', () => {
    // 1172 + 28 bytes at 960 kbit/s: 10 ms each
    const d = direction({ rateKbps: 960, queueMs: 50 });
    const size = 1200 - IP_UDP_OVERHEAD_BYTES;
    const verdicts = Array.from({ length: 10 }, () => d.admit(size, 0));
    assert.deepEqual(verdicts.slice(0, 5).map(at), [10, 20, 30, 40, 50]);
    assert.deepEqual(verdicts.slice(5), Array(5).fill({ kind: 'drop', reason: 'queue' }));
    assert.equal(d.counters().queueDropped, 5);
    assert.equal(d.backlogMs(0), 50);
    // the queue drains at the rate: 25 ms later there is room again
    assert.equal(at(d.admit(size, 25)), 60);
  });

  it('always takes a packet into an empty queue, even one longer than queueMs to send', () => {
    const d = direction({ rateKbps: 8, queueMs: 10 });
    assert.equal(at(d.admit(1000 - IP_UDP_OVERHEAD_BYTES, 0)), 1000);
  });

  it('applies new settings from the next packet: a lifted cap sends at once, still after what is queued', () => {
    const d = direction({ rateKbps: 960, queueMs: 1000 });
    for (let i = 0; i < 5; i++) d.admit(1172, 0);
    d.update({ ...CLEAN_DIRECTION });
    assert.equal(at(d.admit(1172, 1)), 50);
    assert.equal(at(d.admit(1172, 60)), 60);
  });
});

describe('DeliveryQueue', () => {
  it('gives back what is due, earliest first, equal times in arrival order', () => {
    const q = new DeliveryQueue<string>();
    for (const [t, v] of [[30, 'c'], [10, 'a'], [20, 'b1'], [20, 'b2'], [50, 'e']] as const) q.push(t, v);
    assert.equal(q.nextAt(), 10);
    assert.deepEqual(q.popDue(25), ['a', 'b1', 'b2']);
    assert.deepEqual(q.popDue(40), ['c']);
    assert.equal(q.size, 1);
    q.clear();
    assert.equal(q.nextAt(), undefined);
  });
});

describe('applyPatch', () => {
  it('replaces the fields named and keeps the others', () => {
    const s = applyPatch(applyPatch(CLEAN_LINK, { down: { rateKbps: 500, lossRate: 0.01 } }), { down: { rateKbps: null } });
    assert.deepEqual(s.down, { ...CLEAN_DIRECTION, lossRate: 0.01 });
    assert.deepEqual(s.up, CLEAN_DIRECTION);
  });

  it('refuses what no link can do', () => {
    assert.throws(() => applyPatch(CLEAN_LINK, { up: { lossRate: 1.5 } }), /up\.lossRate must be at most 1/);
    assert.throws(() => applyPatch(CLEAN_LINK, { down: { rateKbps: 0 } }), /null lifts the cap/);
    assert.throws(() => applyPatch(CLEAN_LINK, { up: { delayMs: -1 } }), /up\.delayMs/);
    assert.throws(() => applyPatch(CLEAN_LINK, { up: { rate: 5 } as never }), /unknown setting "rate"/);
  });
});
