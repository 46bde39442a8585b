import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RELAYED_LOSS, relayedLoss } from './downstream-loss.ts';

describe('relayedLoss', () => {
  it('is the lower median of the subscribers\' losses: one subscriber reporting 100 % among others moves nothing', () => {
    assert.equal(relayedLoss([0.01, 1]), 0.01);
    assert.equal(relayedLoss([0.02, 1, 0.01]), 0.02);
    assert.equal(relayedLoss([0, 0, 1, 1]), 0);
    assert.equal(relayedLoss([0.05, 0.1, 0.08]), 0.08);
  });

  it('is capped at 20 % (what Opus\'s FEC uses at most), for one subscriber alone too', () => {
    assert.equal(relayedLoss([1]), MAX_RELAYED_LOSS);
    assert.equal(relayedLoss([0.5, 0.9, 1]), MAX_RELAYED_LOSS);
    assert.equal(relayedLoss([0.12]), 0.12);
  });

  it('is 0 without subscribers', () => {
    assert.equal(relayedLoss([]), 0);
  });
});
