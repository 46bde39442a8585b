import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../core/errors.ts';
import type { SubscriptionRequestStatus } from './store.ts';
import { checkTransition, type Decision } from './subscriptions.ts';

// docs/billing.md: pending → approved | rejected | cancelled; final states never move; a repeat is a no-op
const TABLE: readonly [SubscriptionRequestStatus, Decision, 'apply' | 'unchanged' | 'conflict'][] = [
  ['pending', 'approved', 'apply'], ['pending', 'rejected', 'apply'], ['pending', 'cancelled', 'apply'],
  ['approved', 'approved', 'unchanged'], ['approved', 'rejected', 'conflict'], ['approved', 'cancelled', 'conflict'],
  ['rejected', 'rejected', 'unchanged'], ['rejected', 'approved', 'conflict'], ['rejected', 'cancelled', 'conflict'],
  ['cancelled', 'cancelled', 'unchanged'], ['cancelled', 'approved', 'conflict'], ['cancelled', 'rejected', 'conflict'],
];

describe('subscription request transitions', () => {
  for (const [from, to, expected] of TABLE) {
    it(`${from} → ${to}: ${expected}`, () => {
      if (expected === 'conflict') {
        assert.throws(() => checkTransition(from, to), (err: unknown) => err instanceof ApiError && err.code === 'conflict'
          && err.message === `the subscription request is ${from}: only a pending request can become ${to}`);
      } else {
        assert.equal(checkTransition(from, to), expected);
      }
    });
  }
});
