import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ReportedLoss } from './reported-loss.ts';

describe('ReportedLoss', () => {
  it('adds the rise of the cumulative loss from report to report', () => {
    const loss = new ReportedLoss();
    assert.deepEqual([loss.onReport(25, 3, 100), loss.onReport(0, 3, 200), loss.onReport(51, 10, 300)], [3, 0, 7]);
    assert.equal(loss.fraction, 51 / 256);
  });

  it('ignores a report claiming more loss than packets sent (8,388,607 after 50), and a rise above what was sent since', () => {
    const loss = new ReportedLoss();
    assert.equal(loss.onReport(255, 0x7fffff, 50), 0);
    assert.equal(loss.fraction, 0, 'nothing of an unbelievable report is kept');
    assert.equal(loss.onReport(0, 40, 50), 40);
    assert.equal(loss.onReport(0, 60, 60), 0, 'a rise of 20 while 10 were sent');
    assert.equal(loss.onReport(0, 65, 70), 5);
  });

  it('adds nothing for a fall (duplicates), and counts the next rise from there', () => {
    const loss = new ReportedLoss();
    assert.equal(loss.onReport(0, 10, 100), 10);
    assert.equal(loss.onReport(0, 0xfffffe, 110), 0, 'a cumulative loss of -2');
    assert.equal(loss.onReport(0, 5, 120), 7);
  });

  it('never adds up to more than the packets sent, whatever the reports say', () => {
    fc.assert(fc.property(fc.array(fc.record({ field: fc.integer({ min: 0, max: 0xffffff }), send: fc.integer({ min: 0, max: 500 }) }), { maxLength: 60 }), (reports) => {
      const loss = new ReportedLoss();
      let sent = 0;
      let added = 0;
      for (const { field, send } of reports) {
        sent += send;
        added += loss.onReport(255, field, sent);
      }
      assert.ok(added <= sent, `${added} lost of ${sent}`);
    }));
  });
});
