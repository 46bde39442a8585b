import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { everyShared } from './shared-interval.ts';

describe('shared intervals', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval'] }));
  afterEach(() => mock.timers.reset());

  it('runs every callback of a period from one timer, in the order added, until each is stopped', () => {
    const ran: string[] = [];
    const stopA = everyShared(10, () => ran.push('a'));
    const stopB = everyShared(10, () => ran.push('b'));
    const stopC = everyShared(25, () => ran.push('c'));
    mock.timers.tick(10);
    assert.deepEqual(ran.splice(0), ['a', 'b']);
    mock.timers.tick(10);
    assert.deepEqual(ran.splice(0), ['a', 'b']);
    mock.timers.tick(5);
    assert.deepEqual(ran.splice(0), ['c']);
    stopA();
    stopA(); // a second stop changes nothing
    mock.timers.tick(5);
    assert.deepEqual(ran.splice(0), ['b']);
    stopB();
    stopC();
    mock.timers.tick(100);
    assert.deepEqual(ran, []);
  });

  it('starts again once the last callback of a period stopped, and keeps the same function added twice as two', () => {
    const ran: number[] = [];
    everyShared(10, () => ran.push(0))();
    const fn = (): void => {
      ran.push(1);
    };
    const stops = [everyShared(10, fn), everyShared(10, fn)];
    mock.timers.tick(10);
    assert.deepEqual(ran.splice(0), [1, 1]);
    stops[0]!();
    mock.timers.tick(10);
    assert.deepEqual(ran.splice(0), [1]);
    stops[1]!();
  });

  it('lets a callback stop itself or another while the period runs', () => {
    const ran: string[] = [];
    let stopB: () => void = () => undefined;
    const stopA = everyShared(10, () => {
      ran.push('a');
      stopA();
      stopB();
    });
    stopB = everyShared(10, () => ran.push('b'));
    mock.timers.tick(10);
    mock.timers.tick(10);
    assert.deepEqual(ran, ['a']);
  });
});
