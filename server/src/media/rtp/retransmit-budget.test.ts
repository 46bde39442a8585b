import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetransmitBudget } from './retransmit-budget.ts';

const TICK_MS = 50;
const PACKET = 1_200;

/** `ms` of ticks at an estimate of `estimateBps`. */
function run(budget: RetransmitBudget, estimateBps: number, ms: number): void {
  for (let t = 0; t < ms; t += TICK_MS) budget.refill(estimateBps, TICK_MS);
}

describe('retransmit budget', () => {
  it('repairs a layer kept through a dip of the estimate, whatever its media took of it', () => {
    // a capped subscriber's smallest layer (about 210 kbit/s with audio) kept while the estimate
    // dipped to 140 kbit/s for 2 s (a video pauses only after 2 s), then back at 250 kbit/s: an
    // unrepaired packet stops the client's video until the next key frame
    const budget = new RetransmitBudget();
    run(budget, 250_000, 2_000);
    run(budget, 140_000, 2_000);
    run(budget, 250_000, 200);
    assert.equal(budget.allow(PACKET), true, 'a retransmission 200 ms after the dip');
  });

  it('keeps retransmissions to half the estimate, a second of it at most at once', () => {
    const budget = new RetransmitBudget();
    run(budget, 500_000, 5_000);
    let burst = 0;
    while (budget.allow(PACKET)) burst += PACKET;
    assert.ok(burst <= (0.5 * 500_000) / 8 && burst > (0.5 * 500_000) / 8 - PACKET, `a burst of ${burst} bytes`);
    let allowed = 0;
    for (let t = 0; t < 10_000; t += TICK_MS) {
      budget.refill(500_000, TICK_MS);
      for (let i = 0; i < 10; i++) if (budget.allow(PACKET)) allowed += PACKET;
    }
    const bps = (allowed * 8) / 10;
    assert.ok(bps > 0.45 * 500_000 && bps <= 0.5 * 500_000, `retransmitted ${bps} bit/s`);
  });
});
