import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { createMemoryLimiter } from './memory.ts';

describe('memory limiter: fixed windows opened by the first hit', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date', 'setTimeout'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('allows max hits in a window, then refuses with the seconds left, and opens a new window after', async () => {
    const limiter = createMemoryLimiter();
    for (let i = 0; i < 3; i++) assert.deepEqual(await limiter.hit('k', 3, 10), { ok: true, retryAfterSec: 0 });
    assert.deepEqual(await limiter.hit('k', 3, 10), { ok: false, retryAfterSec: 10 });
    mock.timers.tick(8_500);
    assert.deepEqual(await limiter.hit('k', 3, 10), { ok: false, retryAfterSec: 2 });
    mock.timers.tick(1_500);
    assert.deepEqual(await limiter.hit('k', 3, 10), { ok: true, retryAfterSec: 0 });
  });

  it('peeks without counting: refused once max hits are in the open window', async () => {
    const limiter = createMemoryLimiter();
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: true, retryAfterSec: 0 });
    await limiter.hit('k', 2, 300);
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: true, retryAfterSec: 0 });
    await limiter.hit('k', 2, 300);
    mock.timers.tick(100_000);
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: false, retryAfterSec: 200 });
    mock.timers.tick(200_000);
    assert.deepEqual(await limiter.peek('k', 2, 300), { ok: true, retryAfterSec: 0 });
  });

  it('counts a key separately under each limit and each key on its own', async () => {
    const limiter = createMemoryLimiter();
    await limiter.hit('k', 1, 60);
    assert.equal((await limiter.hit('k', 1, 60)).ok, false);
    assert.equal((await limiter.hit('k', 2, 60)).ok, true);
    assert.equal((await limiter.hit('k', 1, 30)).ok, true);
    assert.equal((await limiter.hit('other', 1, 60)).ok, true);
  });

  it('opens a fresh window for every key whose window ended', async () => {
    const limiter = createMemoryLimiter();
    for (let i = 0; i < 1000; i++) await limiter.hit(`k${i}`, 1, 60);
    mock.timers.tick(60_000);
    assert.equal((await limiter.hit('new', 1, 60)).ok, true);
    for (let i = 0; i < 1000; i++) assert.equal((await limiter.hit(`k${i}`, 1, 60)).ok, true);
  });
});
