import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RETRY, backoffDelayMs, decideRetry, parseRetryAfter, resolveRetryPolicy } from './retry.ts';

const policy = resolveRetryPolicy({ maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxElapsedMs: 60_000, maxRetryAfterSec: 10 });
const half = (): number => 0.5;

describe('resolveRetryPolicy', () => {
  it('fills in the defaults and freezes the result', () => {
    const resolved = resolveRetryPolicy(undefined);
    assert.deepEqual(resolved, DEFAULT_RETRY);
    assert.ok(Object.isFrozen(resolved));
    assert.equal(resolveRetryPolicy({ maxAttempts: 1, baseDelayMs: undefined }).baseDelayMs, DEFAULT_RETRY.baseDelayMs);
  });

  for (const [field, value] of [
    ['maxAttempts', 0], ['maxAttempts', 1.5], ['baseDelayMs', -1], ['maxDelayMs', Number.NaN],
    ['maxElapsedMs', 0], ['maxRetryAfterSec', Number.POSITIVE_INFINITY],
  ] as const) {
    it(`refuses ${field} = ${value} with a TypeError naming the field`, () => {
      assert.throws(() => resolveRetryPolicy({ [field]: value }), (err: unknown) =>
        err instanceof TypeError && err.message.includes(`retry.${field}`));
    });
  }
});

describe('backoffDelayMs: exponential backoff with full jitter', () => {
  it('draws uniformly below a ceiling that doubles at each retry and stops at maxDelayMs', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(policy, n, half)), [50, 100, 200, 400, 500, 500]);
  });

  it('stays within [0, ceiling) for any draw', () => {
    for (let n = 1; n <= 8; n += 1) {
      const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
      for (const r of [0, 0.25, 0.999999]) {
        const d = backoffDelayMs(policy, n, () => r);
        assert.ok(d >= 0 && d < ceiling, `retry ${n}, draw ${r}: ${d}`);
      }
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  const cases: ReadonlyArray<readonly [string | null, number | undefined]> = [
    [null, undefined],
    ['0', 0],
    ['42', 42],
    [' 7 ', 7],
    ['Tue, 01 Jan 2030 00:00:30 GMT', 30],
    ['Tue, 01 Jan 2030 00:00:00 GMT', 0],
    ['Mon, 31 Dec 2029 23:00:00 GMT', 0],
    ['-5', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    ['2030-01-01T00:00:30Z', undefined],
  ];
  for (const [value, expected] of cases) {
    it(`${JSON.stringify(value)} -> ${expected}`, () => {
      assert.equal(parseRetryAfter(value, now), expected);
    });
  }
});

describe('decideRetry', () => {
  it('retries 502, 503 and 504 with backoff', () => {
    for (const status of [502, 503, 504]) {
      assert.deepEqual(decideRetry({ kind: 'status', status, retryAfterSec: undefined }, 1, 0, policy, half),
        { retry: true, delayMs: 50, basis: 'backoff' });
    }
  });

  it('retries network failures with backoff', () => {
    assert.deepEqual(decideRetry({ kind: 'network' }, 2, 0, policy, half), { retry: true, delayMs: 100, basis: 'backoff' });
  });

  it('never retries 400, 401, 403, 404, 413, 415, 500 or a success status', () => {
    for (const status of [200, 400, 401, 403, 404, 413, 415, 500]) {
      assert.deepEqual(decideRetry({ kind: 'status', status, retryAfterSec: 1 }, 1, 0, policy, half), { retry: false, why: 'final' });
    }
  });

  it('never retries 502 turn_unavailable: a platform without TURN answers the same every time', () => {
    assert.deepEqual(decideRetry({ kind: 'status', status: 502, retryAfterSec: undefined, code: 'turn_unavailable' }, 1, 0, policy, half),
      { retry: false, why: 'final' });
    assert.equal(decideRetry({ kind: 'status', status: 502, retryAfterSec: undefined, code: 'issuer_unavailable' }, 1, 0, policy, half).retry, true);
  });

  it('waits exactly Retry-After on 429 when it is within maxRetryAfterSec', () => {
    assert.deepEqual(decideRetry({ kind: 'status', status: 429, retryAfterSec: 10 }, 1, 0, policy, half),
      { retry: true, delayMs: 10_000, basis: 'retry-after' });
  });

  it('surfaces a 429 whose Retry-After is longer than maxRetryAfterSec', () => {
    assert.deepEqual(decideRetry({ kind: 'status', status: 429, retryAfterSec: 11 }, 1, 0, policy, half),
      { retry: false, why: 'retry-after-too-long' });
  });

  it('falls back to backoff for a 429 without Retry-After', () => {
    assert.deepEqual(decideRetry({ kind: 'status', status: 429, retryAfterSec: undefined }, 3, 0, policy, half),
      { retry: true, delayMs: 200, basis: 'backoff' });
  });

  it('honours a Retry-After on a 503', () => {
    assert.deepEqual(decideRetry({ kind: 'status', status: 503, retryAfterSec: 2 }, 1, 0, policy, half),
      { retry: true, delayMs: 2000, basis: 'retry-after' });
  });

  it('stops after maxAttempts attempts', () => {
    assert.deepEqual(decideRetry({ kind: 'network' }, 4, 0, policy, half), { retry: false, why: 'attempts' });
  });

  it('does not start a wait that would end past maxElapsedMs', () => {
    assert.deepEqual(decideRetry({ kind: 'network' }, 1, 59_950, policy, half), { retry: true, delayMs: 50, basis: 'backoff' });
    assert.deepEqual(decideRetry({ kind: 'network' }, 1, 59_951, policy, half), { retry: false, why: 'time' });
    assert.deepEqual(decideRetry({ kind: 'status', status: 429, retryAfterSec: 5 }, 1, 55_001, policy, half), { retry: false, why: 'time' });
  });
});
