import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PADDING_BYTES, ProbeSchedule, probeTargetBps, probeTrainPackets } from './probe-schedule.ts';
import { OVERHEAD_BYTES } from './layers.ts';

describe('probe schedule', () => {
  it('runs one train at a time and reads it 600 ms after it left', () => {
    const schedule = new ProbeSchedule();
    assert.equal(schedule.mayStart(0), true);
    const id = schedule.start(0, 1_000_000);
    assert.equal(schedule.mayStart(100), false, 'one pending');
    assert.equal(schedule.due(599), undefined);
    const due = schedule.due(600);
    assert.deepEqual(due, { id, readAtMs: 600, before: 1_000_000 });
    assert.equal(schedule.due(600), undefined, 'taken off the schedule');
  });

  it('probes again 2 s after a train that grew the estimate, and backs off to 16 s after those that did not', () => {
    const schedule = new ProbeSchedule();
    let now = 0;
    const gaps: number[] = [];
    for (const grows of [false, false, false, false, false, true]) {
      const before = 1_000_000;
      schedule.start(now, before);
      now += 600;
      schedule.settle(schedule.due(now)!, grows ? before * 1.06 : before * 1.04, now);
      const settledAt = now;
      while (!schedule.mayStart(now)) now += 100;
      gaps.push(now - settledAt);
    }
    assert.deepEqual(gaps, [4_000, 8_000, 16_000, 16_000, 16_000, 2_000]);
  });

  it('sizes a train by the step it tests, at most twice the estimate and 80 packets', () => {
    const packet = PADDING_BYTES + OVERHEAD_BYTES;
    // (300 + 100) kbit/s x 1.25 for 120 ms
    assert.equal(probeTrainPackets(probeTargetBps(300_000, 100_000)), Math.ceil((500_000 / 8) * 0.12 / packet));
    // capped at twice the estimate
    assert.equal(probeTrainPackets(probeTargetBps(300_000, 1_000_000)), Math.ceil((600_000 / 8) * 0.12 / packet));
    assert.equal(probeTrainPackets(probeTargetBps(20_000_000, 20_000_000)), 80);
  });

  it('reads a train as soon as it came back, and sizes the first one at three to six times the estimate', () => {
    const schedule = new ProbeSchedule();
    assert.equal(schedule.first, true);
    const id = schedule.start(0, 300_000);
    assert.equal(schedule.first, false);
    assert.equal(schedule.pendingId, id);
    assert.equal(schedule.due(50), undefined, 'not settled, not back');
    assert.equal(schedule.due(50, true)?.id, id, 'back: read at once');
    assert.equal(schedule.pendingId, undefined);
    const packet = PADDING_BYTES + OVERHEAD_BYTES;
    // nothing needed yet: three times the estimate; a need above that: up to six times
    assert.equal(probeTrainPackets(probeTargetBps(300_000, 0, { first: true })), Math.ceil((900_000 / 8) * 0.12 / packet));
    assert.equal(probeTrainPackets(probeTargetBps(300_000, 660_000, { first: true })), Math.ceil((1_200_000 / 8) * 0.12 / packet));
    assert.equal(probeTrainPackets(probeTargetBps(100_000, 2_000_000, { first: true })), Math.ceil((600_000 / 8) * 0.12 / packet));
  });

  it('probes within 2 s of a video pausing for bandwidth, whatever the backoff', () => {
    const schedule = new ProbeSchedule();
    let now = 0;
    // a larger layer waits on a link that cannot carry it: four trains find nothing, the next is 16 s off
    for (let i = 0; i < 4; i++) {
      schedule.start(now, 1_000_000);
      now += 600;
      schedule.settle(schedule.due(now)!, 1_000_000, now);
      while (!schedule.mayStart(now)) now += 100;
    }
    schedule.start(now, 1_000_000);
    now += 600;
    schedule.settle(schedule.due(now)!, 1_000_000, now);
    assert.equal(schedule.mayStart(now + 15_000), false);
    // the smallest layer then pauses: the next train leaves within 2 s, not 16
    schedule.paused(now + 1_000);
    assert.equal(schedule.mayStart(now + 2_999), false);
    assert.equal(schedule.mayStart(now + 3_000), true);
  });

  it('sizes a train and caps its result at one rate: the first at 3x to 6x, one back after a drop at least where it probes back to', () => {
    assert.equal(probeTargetBps(300_000, 100_000), 500_000);
    assert.equal(probeTargetBps(300_000, 0, { first: true }), 900_000);
    assert.equal(probeTargetBps(300_000, 660_000, { first: true }), 1_200_000);
    assert.equal(probeTargetBps(300_000, 100_000, { recoveryBps: 850_000 }), 850_000);
    assert.equal(probeTargetBps(300_000, 100_000, { recoveryBps: 400_000 }), 500_000, 'the step asks for more');
    assert.equal(probeTargetBps(300_000, 0, { first: true, recoveryBps: 1_000_000 }), 1_000_000);
  });
});
