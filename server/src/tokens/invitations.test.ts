import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_STREAM_ID } from '@rtc/protocol';
import { pickGuestStreams } from './invitations.ts';

describe('pickGuestStreams', () => {
  const drawing = (values: readonly number[]): (() => number) => {
    let next = 0;
    return () => {
      const value = values[next++];
      if (value === undefined) throw new Error('drew more than the test gave');
      return value;
    };
  };

  it('skips the ids the room\'s participants may publish, and never gives one id twice', () => {
    assert.deepEqual(pickGuestStreams(new Set([1, 2, 7]), drawing([1, 2, 5, 5, 7, 6])), [5, 6]);
  });

  it('draws ids from 1 to 2^32 - 1 by default, two of them', () => {
    for (let i = 0; i < 200; i++) {
      const [a, b, ...rest] = pickGuestStreams(new Set());
      assert.deepEqual(rest, []);
      assert.notEqual(a, b);
      for (const id of [a!, b!]) assert.ok(Number.isInteger(id) && id >= 1 && id <= MAX_STREAM_ID, `${id}`);
    }
  });
});
