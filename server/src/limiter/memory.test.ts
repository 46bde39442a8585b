import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Clock } from '../core/ports.ts';
import { createMemoryLimiter } from './memory.ts';

function manualClock(): Clock & { advance(ms: number): void } {
  let now = 1_000_000;
  return { nowMs: () => now, advance: (ms) => { now += ms; } };
}

describe('memory limiter: fixed windows opened by the first hit', () => {
  it('allows max hits in a window, then refuses with the seconds left, and opens a new window after', async () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter(clock);
    for (let i = 0; i < 3; i++) assert.deepEqual(await limiter.hit('k', 3, 10), { ok: true, retryAfterSec: 0 });
    assert.deepEqual(await limiter.hit('k', 3, 10), { ok: false, retryAfterSec: 10 });
    clock.advance(8_500);
    assert.deepEqual(await limiter.hit('k', 3, 10), { ok: false, retryAfterSec: 2 });
    clock.advance(1_500);
    assert.deepEqual(await limiter.hit('k', 3, 10), { ok: true, retryAfterSec: 0 });
  });

  it('peeks without counting: refused once max hits are in the open window', async () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter(clock);
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: true, retryAfterSec: 0 });
    await limiter.hit('k', 2, 300);
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: true, retryAfterSec: 0 });
    await limiter.hit('k', 2, 300);
    clock.advance(100_000);
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: false, retryAfterSec: 200 });
    clock.advance(200_000);
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: true, retryAfterSec: 0 });
  });

  it('counts a key separately under each limit and each key on its own', async () => {
    const limiter = createMemoryLimiter(manualClock());
    await limiter.hit('k', 1, 60);
    assert.equal((await limiter.hit('k', 1, 60)).ok, false);
    assert.equal((await limiter.hit('k', 2, 60)).ok, true);
    assert.equal((await limiter.hit('k', 1, 30)).ok, true);
    assert.equal((await limiter.hit('other', 1, 60)).ok, true);
  });

  it('opens a fresh window for every key whose window ended', async () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter(clock);
    for (let i = 0; i < 1000; i++) await limiter.hit(`k${i}`, 1, 60);
    clock.advance(60_000);
    assert.equal((await limiter.hit('new', 1, 60)).ok, true);
    for (let i = 0; i < 1000; i++) assert.equal((await limiter.hit(`k${i}`, 1, 60)).ok, true);
  });

  it('keeps counting hits over the limit: a refused hit does not reopen the window', async () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter(clock);
    for (let i = 0; i < 5; i++) await limiter.hit('k', 2, 60);
    clock.advance(59_000);
    assert.deepEqual(await limiter.hit('k', 2, 60), { ok: false, retryAfterSec: 1 });
    clock.advance(1_000);
    assert.deepEqual(await limiter.hit('k', 2, 60), { ok: true, retryAfterSec: 0 });
  });

  it('holds at most maxKeysPerLimit keys a limit: beyond, the window opened first is forgotten', async () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter(clock, { maxKeysPerLimit: 3 });
    assert.equal((await limiter.hit('a', 1, 60)).ok, true);
    assert.equal((await limiter.hit('a', 1, 60)).ok, false);
    await limiter.hit('b', 1, 60);
    await limiter.hit('c', 1, 60);
    assert.equal((await limiter.peek('a', 1, 60)).ok, false, 'three keys: a is still counted');
    assert.equal((await limiter.hit('other limit', 1, 30)).ok, true, 'another limit holds its own keys');
    assert.equal((await limiter.peek('a', 1, 60)).ok, false);
    await limiter.hit('d', 1, 60);
    assert.equal((await limiter.peek('a', 1, 60)).ok, true, 'a fourth key: the first window is forgotten');
    assert.equal((await limiter.hit('b', 1, 60)).ok, false, 'the later ones are not');
    assert.equal((await limiter.hit('d', 1, 60)).ok, false);
  });

  it('moves a window that opens again behind those opened since', async () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter(clock, { maxKeysPerLimit: 2 });
    await limiter.hit('a', 1, 10);
    clock.advance(5_000);
    await limiter.hit('b', 1, 10);
    clock.advance(5_000);
    assert.equal((await limiter.hit('a', 1, 10)).ok, true, 'a new window of a');
    await limiter.hit('c', 1, 10);
    assert.equal((await limiter.hit('a', 1, 10)).ok, false, 'a opened after b: b was forgotten, not a');
    assert.equal((await limiter.hit('b', 1, 10)).ok, true);
  });

  it('reuses the room of windows that ended, whatever the number of keys over time', async () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter(clock, { maxKeysPerLimit: 100 });
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 100; i++) assert.equal((await limiter.hit(`r${round}k${i}`, 1, 1)).ok, true);
      for (let i = 0; i < 100; i++) assert.equal((await limiter.hit(`r${round}k${i}`, 1, 1)).ok, false);
      clock.advance(1_000);
    }
  });
});
