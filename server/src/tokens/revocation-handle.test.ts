import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeHandle, encodeHandle, type HandleContents } from './revocation-handle.ts';

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 8);
const B64U = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const contents = (): HandleContents => ({
  projectId: `prj_${randomBytes(16).toString('base64url')}`,
  grantId: randomBytes(16),
  expiresAt: 1_700_000_600,
});

/** The same character position with a different base64url character. */
function flip(text: string, index: number): string {
  const c = text[index]!;
  const replacement = B64U[(B64U.indexOf(c) + 1) % B64U.length]!;
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

describe('revocation handle', () => {
  it('round-trips project, grant id and expiry', () => {
    const c = contents();
    const handle = encodeHandle(KEY, c);
    assert.match(handle, /^rvk_[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeHandle(KEY, handle), c);
  });

  it('round-trips any project, grant id and 32-bit expiry (property)', () => {
    fc.assert(fc.property(
      fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ minLength: 16, maxLength: 16 }),
      fc.integer({ min: 0, max: 0xffffffff }),
      (project, grant, expiresAt) => {
        const c = { projectId: `prj_${Buffer.from(project).toString('base64url')}`, grantId: Buffer.from(grant), expiresAt };
        assert.deepEqual(decodeHandle(KEY, encodeHandle(KEY, c)), c);
      },
    ));
  });

  it('gives distinct handles for distinct grants of one project', () => {
    const c = contents();
    assert.notEqual(encodeHandle(KEY, c), encodeHandle(KEY, { ...c, grantId: randomBytes(16) }));
  });

  it('rejects every single-character alteration after the prefix', () => {
    const handle = encodeHandle(KEY, contents());
    for (let i = 4; i < handle.length; i++) {
      assert.equal(decodeHandle(KEY, flip(handle, i)), undefined, `position ${i}`);
    }
  });

  it('rejects every single-bit alteration of the decoded bytes', () => {
    const handle = encodeHandle(KEY, contents());
    const bytes = Buffer.from(handle.slice(4), 'base64url');
    for (let bit = 0; bit < bytes.length * 8; bit++) {
      const altered = Buffer.from(bytes);
      altered[bit >> 3]! ^= 1 << (bit & 7);
      assert.equal(decodeHandle(KEY, `rvk_${altered.toString('base64url')}`), undefined, `bit ${bit}`);
    }
  });

  it('rejects a handle made under another key', () => {
    assert.equal(decodeHandle(KEY, encodeHandle(OTHER_KEY, contents())), undefined);
  });

  it('rejects truncated and extended handles', () => {
    const handle = encodeHandle(KEY, contents());
    assert.equal(decodeHandle(KEY, handle.slice(0, -1)), undefined);
    assert.equal(decodeHandle(KEY, handle.slice(0, -4)), undefined);
    assert.equal(decodeHandle(KEY, `${handle}A`), undefined);
    assert.equal(decodeHandle(KEY, `${handle}AAAA`), undefined);
  });

  it('rejects a wrong or missing prefix', () => {
    const handle = encodeHandle(KEY, contents());
    assert.equal(decodeHandle(KEY, handle.slice(4)), undefined);
    assert.equal(decodeHandle(KEY, `rvx_${handle.slice(4)}`), undefined);
    assert.equal(decodeHandle(KEY, `RVK_${handle.slice(4)}`), undefined);
  });

  it('rejects padding, standard base64 characters and whitespace', () => {
    // 16 bytes of 0xff encode to '_' characters wherever they fall
    const handle = encodeHandle(KEY, { ...contents(), grantId: Buffer.alloc(16, 0xff) });
    assert.match(handle.slice(4), /_/);
    assert.equal(decodeHandle(KEY, `${handle}=`), undefined);
    assert.equal(decodeHandle(KEY, handle.replace(/_/g, '/')), undefined);
    assert.equal(decodeHandle(KEY, ` ${handle}`), undefined);
    assert.equal(decodeHandle(KEY, `${handle}\n`), undefined);
  });

  it('rejects a correctly authenticated handle of an unknown version', () => {
    const handle = encodeHandle(KEY, contents());
    const bytes = Buffer.from(handle.slice(4), 'base64url');
    const body = Buffer.from(bytes.subarray(0, 37));
    body[0] = 2;
    const mac = createHmac('sha256', KEY).update('rtc/revocation-handle/v1').update(body).digest().subarray(0, 16);
    assert.equal(decodeHandle(KEY, `rvk_${Buffer.concat([body, mac]).toString('base64url')}`), undefined);
    // the same construction with version 1 is accepted, so the check above is about the version alone
    body[0] = 1;
    const mac1 = createHmac('sha256', KEY).update('rtc/revocation-handle/v1').update(body).digest().subarray(0, 16);
    assert.notEqual(decodeHandle(KEY, `rvk_${Buffer.concat([body, mac1]).toString('base64url')}`), undefined);
  });

  it('rejects garbage', () => {
    for (const garbage of ['', 'rvk_', 'hello', 'rvk_!!!!', 'rvk_' + 'A'.repeat(1000), '\u0000']) {
      assert.equal(decodeHandle(KEY, garbage), undefined, JSON.stringify(garbage));
    }
  });

  it('never throws on arbitrary strings (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
      assert.equal(decodeHandle(KEY, text), undefined);
      assert.equal(decodeHandle(KEY, `rvk_${text}`), undefined);
    }));
  });

  it('refuses to encode a project id or grant id of the wrong size with a TypeError', () => {
    assert.throws(() => encodeHandle(KEY, { ...contents(), projectId: 'prj_short' }), TypeError);
    assert.throws(() => encodeHandle(KEY, { ...contents(), grantId: randomBytes(15) }), TypeError);
  });
});
