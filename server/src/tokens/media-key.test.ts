import assert from 'node:assert/strict';
import { hkdfSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { deriveMediaKey } from './media-key.ts';

const INFO = Buffer.from('rtc/media-key/v1');

describe('deriveMediaKey', () => {
  it('is HKDF-SHA-256 with the grant id as salt and "rtc/media-key/v1" as info (docs/reference/token-api.md, media key)', () => {
    for (let i = 0; i < 200; i++) {
      const master = randomBytes(i % 2 === 0 ? 32 : 1 + (i % 97));
      const grantId = randomBytes(16);
      assert.deepEqual(deriveMediaKey(master, grantId), Buffer.from(hkdfSync('sha256', master, grantId, INFO, 32)));
    }
  });

  it('matches hkdfSync for an empty salt too (RFC 5869: a salt of zeros)', () => {
    const master = randomBytes(32);
    assert.deepEqual(deriveMediaKey(master, new Uint8Array(0)), Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), INFO, 32)));
  });

  it('returns 32 bytes that change with the grant id', () => {
    const master = randomBytes(32);
    const a = deriveMediaKey(master, randomBytes(16));
    assert.equal(a.length, 32);
    assert.notDeepEqual(a, deriveMediaKey(master, randomBytes(16)));
  });
});
