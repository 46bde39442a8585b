import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fromB64u, fromUtf8, toB64u } from './encoding.ts';

describe('base64url', () => {
  it('matches Node for every byte string and decodes back (property)', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
      const text = toB64u(bytes);
      assert.equal(text, Buffer.from(bytes).toString('base64url'));
      assert.deepEqual(fromB64u(text), bytes);
    }));
  });

  it('refuses other alphabets, padding, impossible lengths and non-canonical endings', () => {
    for (const bad of ['a+b/', 'AAAA=', 'A', 'é', 'AB', 'AAB']) assert.equal(fromB64u(bad), undefined, bad);
    assert.deepEqual(fromB64u('AA'), new Uint8Array([0]));
    assert.deepEqual(fromB64u(''), new Uint8Array([]));
  });

  it('decodes UTF-8 strictly', () => {
    assert.equal(fromUtf8(new Uint8Array([0xe2, 0x82, 0xac])), '€');
    assert.equal(fromUtf8(new Uint8Array([0xe2, 0x82])), undefined);
  });
});
