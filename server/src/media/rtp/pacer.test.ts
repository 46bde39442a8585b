import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Pacer } from './pacer.ts';

/** A pacer on a manual clock and a manual timer: `tick(ms)` moves the clock and runs the timer once. */
function pacerAt(rateBps: number, maxQueueMs = 700) {
  let now = 1000;
  let timer: (() => void) | undefined;
  const sent: { item: number; at: number }[] = [];
  const dropped: number[][] = [];
  const pacer = new Pacer<number>({
    send: (item) => sent.push({ item, at: now }),
    rateBps: () => rateBps,
    onOverflow: (items) => dropped.push([...items]),
    maxQueueMs,
    intervalMs: 5,
    now: () => now,
    every: (_ms, fn) => {
      timer = fn;
      return () => {
        timer = undefined;
      };
    },
  });
  const tick = (ms: number): void => {
    now += ms;
    timer?.();
  };
  return { pacer, sent, dropped, tick, timerRunning: () => timer !== undefined };
}

describe('pacer', () => {
  it('lets one interval\'s worth out at once, then the rest at the rate, in order', () => {
    // 1.6 Mbit/s: 1000 bytes a 5 ms interval; ten packets of 1000 bytes
    const { pacer, sent, tick, timerRunning } = pacerAt(1_600_000);
    for (let i = 0; i < 10; i++) pacer.enqueue(i, 1000);
    assert.deepEqual(sent.map((s) => s.item), [0]);
    assert.equal(pacer.idle, false);
    for (let i = 0; i < 9; i++) tick(5);
    assert.deepEqual(sent.map((s) => s.item), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(sent.at(-1)!.at - sent[0]!.at, 45);
    assert.equal(pacer.idle, true);
    assert.equal(timerRunning(), false, 'an idle pacer stops its timer');
  });

  it('sends what a late timer\'s lateness allowed, not a burst of saved-up budget', () => {
    const { pacer, sent, tick } = pacerAt(1_600_000);
    for (let i = 0; i < 20; i++) pacer.enqueue(i, 1000);
    tick(20); // 20 ms late: 4 packets' worth
    assert.equal(sent.length, 1 + 4);
    tick(5);
    assert.equal(sent.length, 1 + 4 + 1);
  });

  it('gives back everything queued when a packet would wait longer than the bound, and starts empty', () => {
    // 80 kbit/s: 10 000 bytes a second, so 700 ms hold 7000 bytes
    const { pacer, sent, dropped } = pacerAt(80_000);
    for (let i = 0; i < 8; i++) pacer.enqueue(i, 1000);
    // the first left at once; 1..7 wait (7000 bytes): the 9th would make 8000
    pacer.enqueue(8, 1000);
    assert.deepEqual(sent.map((s) => s.item), [0]);
    assert.deepEqual(dropped, [[1, 2, 3, 4, 5, 6, 7]]);
    assert.equal(pacer.idle, false, 'the packet that overflowed is queued');
    pacer.close();
    assert.equal(pacer.idle, true);
  });

  it('admits an item at once only while nothing waits and the budget allows, as enqueue would send it', () => {
    // 1.6 Mbit/s: 1000 bytes a 5 ms interval
    const { pacer, sent, tick } = pacerAt(1_600_000);
    assert.equal(pacer.admit(1000), true, 'an idle pacer lets one interval\'s worth out');
    assert.equal(pacer.admit(1000), false, 'the budget is spent');
    pacer.enqueue(1, 1000);
    assert.equal(sent.length, 0, 'queued behind the admitted one');
    tick(5);
    assert.equal(pacer.admit(1000), false, 'the drain spent what the interval allowed');
    assert.deepEqual(sent.map((s) => s.item), [1]);
    tick(5);
    assert.equal(pacer.admit(1000), true);
  });

  it('tells beforehand whether an item would overflow, and gives everything back on demand', () => {
    const { pacer, sent, dropped } = pacerAt(80_000);
    assert.equal(pacer.fits(50_000), true, 'an empty queue takes anything');
    for (let i = 0; i < 8; i++) pacer.enqueue(i, 1000);
    assert.equal(pacer.fits(1000), false);
    assert.deepEqual(dropped, []);
    pacer.overflow();
    assert.deepEqual(dropped, [[1, 2, 3, 4, 5, 6, 7]]);
    assert.deepEqual(sent.map((s) => s.item), [0]);
    assert.equal(pacer.idle, true);
    assert.equal(pacer.fits(1000), true);
  });
});
