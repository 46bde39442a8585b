import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Gate } from './gate.ts';

class Full extends Error {}

/** A task that finishes when told to, recording when it started. */
function controllable(log: string[], name: string): { task: () => Promise<string>; finish: () => void } {
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    task: async () => {
      log.push(`start ${name}`);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

describe('Gate', () => {
  it('runs at most `concurrency` tasks, queues up to the limit in order and refuses the rest at once', async () => {
    const gate = new Gate(2, 2, () => new Full());
    const log: string[] = [];
    const tasks = ['a', 'b', 'c', 'd', 'e'].map((n) => controllable(log, n));
    const results = tasks.map((t) => gate.run(t.task));
    await assert.rejects(results[4]!, Full);
    assert.deepEqual([gate.active, gate.queued], [2, 2]);
    assert.deepEqual(log, ['start a', 'start b']);
    tasks[1]!.finish();
    assert.equal(await results[1], 'b');
    assert.deepEqual(log, ['start a', 'start b', 'start c'], 'the first waiter takes the freed slot');
    // one task (d) waits now, so a newcomer fits in the queue behind it
    const late = controllable(log, 'f');
    const lateResult = gate.run(late.task);
    tasks[0]!.finish();
    tasks[2]!.finish();
    assert.equal(await results[2], 'c');
    tasks[3]!.finish();
    late.finish();
    assert.deepEqual(await Promise.all([results[0], results[3], lateResult]), ['a', 'd', 'f']);
    assert.deepEqual(log, ['start a', 'start b', 'start c', 'start d', 'start f'], 'queued tasks start in arrival order');
    assert.deepEqual([gate.active, gate.queued], [0, 0]);
  });

  it('frees the slot when a task fails', async () => {
    const gate = new Gate(1, 0, () => new Full());
    await assert.rejects(gate.run(async () => { throw new Error('boom'); }), /boom/);
    assert.equal(await gate.run(async () => 'ok'), 'ok');
  });
});
