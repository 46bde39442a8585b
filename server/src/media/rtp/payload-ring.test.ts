import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PayloadRing } from './payload-ring.ts';

/** A payload of `bytes` whose bytes all say `n` (mod 256), so that an overwrite shows. */
const payload = (n: number, bytes = 1_200): Buffer => Buffer.alloc(bytes, n & 0xff);

describe('payload ring', () => {
  it('gives back a copy of each payload by its index, once for a payload put by every down track', () => {
    const ring = new PayloadRing();
    const first = payload(1);
    const index = ring.put(first);
    assert.equal(ring.put(first), index, 'the same payload again: the same entry');
    const second = ring.put(payload(2, 100));
    assert.equal(second, index + 1);
    first.fill(9);
    assert.deepEqual(ring.get(index), payload(1), 'a copy: the caller may reuse its buffer');
    assert.deepEqual(ring.get(second), payload(2, 100));
    assert.equal(ring.get(second + 1), undefined);
    assert.equal(ring.get(-1), undefined);
  });

  it('grows until it holds 1,024 packets, then keeps the newest 2 MiB, never a torn payload', () => {
    const ring = new PayloadRing();
    const indexes: number[] = [];
    for (let n = 0; n < 5_000; n += 1) indexes.push(ring.put(payload(n, 1_100 + (n % 50))));
    let kept = 0;
    for (const [n, index] of indexes.entries()) {
      const got = ring.get(index);
      if (got === undefined) continue;
      kept += 1;
      assert.deepEqual(got, payload(n, 1_100 + (n % 50)), `entry ${n} intact`);
    }
    // what 2 MiB holds of 1,100 to 1,149 byte payloads, less a tail left unused at a wrap
    assert.ok(kept >= 1_024 && kept <= Math.floor((2 * 1024 * 1024) / 1_100), `kept ${kept}`);
    assert.notEqual(ring.get(indexes.at(-1)!), undefined, 'the newest is kept');
    assert.equal(ring.get(indexes[0]!), undefined, 'the oldest is gone');
  });

  it('keeps small payloads in a small slab, and the newest 4,096 at most', () => {
    const ring = new PayloadRing();
    const indexes: number[] = [];
    // 10-byte payloads: the first 64 KiB slab holds 6,553 of them, more than are numbered at once
    for (let n = 0; n < 10_000; n += 1) indexes.push(ring.put(payload(n, 10)));
    assert.deepEqual(ring.get(indexes.at(-1)!), payload(9_999, 10));
    assert.deepEqual(ring.get(indexes.at(-4_096)!), payload(10_000 - 4_096, 10));
    assert.equal(ring.get(indexes.at(-4_097)!), undefined);
  });

  it('takes what it holds along when it grows: the first packets of a key frame stay', () => {
    const ring = new PayloadRing();
    // 64 payloads of 1,024 bytes fill the first 64 KiB slab to the byte; the next ones make it grow
    const indexes: number[] = [];
    for (let n = 0; n < 200; n += 1) indexes.push(ring.put(payload(n, 1_024)));
    for (const [n, index] of indexes.entries()) assert.deepEqual(ring.get(index), payload(n, 1_024), `entry ${n}`);
  });

  it('lets its payloads go when the stream ends', () => {
    const ring = new PayloadRing();
    const index = ring.put(payload(1));
    ring.release();
    assert.equal(ring.get(index), undefined);
    assert.deepEqual(ring.get(ring.put(payload(2))), payload(2), 'a later payload is kept again');
  });

  it('refuses a payload too large to number', () => {
    assert.equal(new PayloadRing().put(Buffer.alloc(70_000)), -1);
  });
});
