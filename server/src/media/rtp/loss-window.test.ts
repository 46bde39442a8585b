import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LossWindow, MIN_LOSS_PACKETS } from './loss-window.ts';

describe('loss window', () => {
  it('has no figure from the first reports of a stream, which cover a handful of packets', () => {
    const loss = new LossWindow();
    // the first report: two packets expected, one lost (a report's fraction would say 50 %)
    loss.report(1001, 1);
    assert.equal(loss.fraction, undefined);
    loss.report(1001 + 10, 6);
    assert.equal(loss.fraction, undefined, 'ten packets are not enough');
  });

  it('measures the loss over windows of at least MIN_LOSS_PACKETS packets, each from where the last ended', () => {
    const loss = new LossWindow();
    loss.report(1000, 0);
    loss.report(1000 + 30, 3);
    loss.report(1000 + 100, 5);
    assert.equal(loss.fraction, 0.05);
    loss.report(1100 + MIN_LOSS_PACKETS, 5);
    assert.equal(loss.fraction, 0);
    // late packets counted lost before can make the cumulative count fall: never below 0
    loss.report(1150 + MIN_LOSS_PACKETS, 3);
    assert.equal(loss.fraction, 0);
  });

  it('follows the extended sequence number across a wrap, and starts again on a reset', () => {
    const loss = new LossWindow();
    loss.report(0xffffffe0, 0);
    loss.report(0x00000040, 24);
    assert.equal(loss.fraction, 0.25);
    loss.report(0x00000010, 24);
    loss.report(0x00000010 + 100, 34);
    assert.equal(loss.fraction, 0.1);
  });
});
