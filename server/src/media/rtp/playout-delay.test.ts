import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PLAYOUT_DELAY_MAX_UNITS, playoutDelay, playoutFloorMs } from './playout-delay.ts';

describe('playout delay', () => {
  it('asks for no floor without repairs, else their time and a margin, under 400 ms', () => {
    assert.equal(playoutFloorMs(0, 0), 0);
    assert.equal(playoutFloorMs(120, 0), 150);
    assert.equal(playoutFloorMs(100, 80), 210);
    assert.equal(playoutFloorMs(500, 100), 400);
  });

  it('writes the extension as two 12-bit bounds in 10 ms units', () => {
    assert.deepEqual([...playoutDelay(15, PLAYOUT_DELAY_MAX_UNITS)], [0x00, 0xff, 0xff]);
    assert.deepEqual([...playoutDelay(0x123, 0x456)], [0x12, 0x34, 0x56]);
    assert.deepEqual([...playoutDelay(0x1000, 0)], [0xff, 0xf0, 0x00], 'the minimum is capped at 12 bits');
  });
});
