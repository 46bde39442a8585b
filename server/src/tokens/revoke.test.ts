import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryLimiter } from '../limiter/memory.ts';
import { ApiError } from '../core/errors.ts';
import type { Limiter } from '../core/ports.ts';
import { revocationLimiter } from './revoke.ts';

const clock = { nowMs: () => 1_700_000_000_000 };

/** A shared limiter that cannot answer (Redis down), or fails another way. */
const failing = (err: Error): Limiter => ({ hit: () => Promise.reject(err), peek: () => Promise.reject(err) });
const unavailable = failing(new ApiError('unavailable', 'the rate limiter is unreachable; retry shortly'));

describe('the revoke endpoint\'s limits', () => {
  it('are counted by the shared limiter while it answers', async () => {
    const shared = createMemoryLimiter(clock);
    const local = createMemoryLimiter(clock);
    const limiter = revocationLimiter(shared, local);
    for (let i = 0; i < 3; i++) assert.equal((await limiter.hit('k', 3, 60)).ok, true);
    assert.equal((await limiter.hit('k', 3, 60)).ok, false);
    assert.equal((await local.peek('k', 1, 60)).ok, true, 'nothing counted in the process');
  });

  it('are counted by this process alone while the shared limiter is unreachable, never refused for it', async () => {
    const limiter = revocationLimiter(unavailable, createMemoryLimiter(clock));
    for (let i = 0; i < 3; i++) assert.equal((await limiter.hit('k', 3, 60)).ok, true);
    const over = await limiter.hit('k', 3, 60);
    assert.equal(over.ok, false);
    assert.ok(over.retryAfterSec >= 1);
    assert.equal((await limiter.peek('k', 3, 60)).ok, false);
  });

  it('pass any other failure on', async () => {
    const limiter = revocationLimiter(failing(new Error('a bug')), createMemoryLimiter(clock));
    await assert.rejects(limiter.hit('k', 3, 60), /a bug/);
  });
});
