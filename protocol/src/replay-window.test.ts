import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ReplayWindow } from './replay-window.ts';

function accept(window: ReplayWindow, seq: number): boolean {
  if (!window.check(seq)) return false;
  window.commit(seq);
  return true;
}

describe('ReplayWindow', () => {
  it('accepts each sequence number once, in order or reordered within the window', () => {
    const w = new ReplayWindow(64);
    assert.deepEqual([1, 2, 3, 2, 5, 4, 4, 1].map((s) => accept(w, s)), [true, true, true, false, true, true, false, false]);
  });

  it('drops numbers that fell out of the window and zero', () => {
    const w = new ReplayWindow(64);
    assert.equal(accept(w, 100), true);
    assert.equal(accept(w, 36), false);
    assert.equal(accept(w, 37), true);
    assert.equal(accept(w, 0), false);
  });

  it('check alone records nothing (only authenticated frames are committed)', () => {
    const w = new ReplayWindow(32);
    assert.equal(w.check(5), true);
    assert.equal(w.check(5), true);
    w.commit(5);
    assert.equal(w.check(5), false);
  });

  it('forgets old bits after a jump larger than the window', () => {
    const w = new ReplayWindow(32);
    accept(w, 3);
    accept(w, 1000);
    assert.equal(accept(w, 990), true);
    assert.equal(accept(w, 968), false);
  });

  it('never accepts a number twice and always accepts a new highest (property)', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 3000 }), { maxLength: 400 }), (seqs) => {
      const w = new ReplayWindow(128);
      const seen = new Set<number>();
      let highest = 0;
      for (const s of seqs) {
        const ok = accept(w, s);
        if (s > highest) assert.equal(ok, true);
        if (seen.has(s) || s <= highest - 128) assert.equal(ok, false);
        if (ok) seen.add(s);
        highest = Math.max(highest, ok ? s : highest);
      }
    }));
  });
});
