import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QualityMeter, roundBitrate, roundLoss, roundRtt } from './quality.ts';

describe('participant quality', () => {
  it('rounds bitrates to two significant digits, loss to 0.1 % and round trips to 10 ms', () => {
    assert.deepEqual([0, 57, 1_234, 98_765, 1_249_999].map(roundBitrate), [0, 57, 1_200, 99_000, 1_200_000]);
    assert.deepEqual([undefined, 0.01234, 1.2].map(roundLoss), [null, 0.012, 1]);
    assert.deepEqual([undefined, 44.9, 45].map(roundRtt), [null, 40, 50]);
  });

  it('turns the bytes of one period into rates, then starts the next period', () => {
    const meter = new QualityMeter(10_000);
    meter.received(125_000);
    meter.sent(12_500);
    const peer = { lossIn: 0.0101, lossOut: undefined, rttMs: 33, layers: new Map([[2, 1], [3, 0]]) };
    const rids = new Map([[2, ['q', 'h', 'f']]]);
    assert.deepEqual(meter.sample(20_000, peer, (id, layer) => rids.get(id)?.[layer]), {
      bitrateIn: 100_000, bitrateOut: 10_000, packetLossIn: 0.01, packetLossOut: null, rttMs: 30, layers: { 2: 'h' }, updatedAt: 20,
    });
    assert.equal(meter.sample(20_000, undefined, () => undefined), undefined, 'no time passed');
    assert.deepEqual(meter.sample(30_000, undefined, () => undefined), {
      bitrateIn: 0, bitrateOut: 0, packetLossIn: null, packetLossOut: null, rttMs: null, layers: {}, updatedAt: 30,
    });
  });
});
