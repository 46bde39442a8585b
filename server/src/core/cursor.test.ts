import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCursor, encodeCursor, INVALID_CURSOR, type CursorScope } from './cursor.ts';
import { ApiError } from './errors.ts';

const scope: CursorScope = { listing: 'extensions', filters: { category: 'moderation', q: undefined } };

function refused(cursor: string, s: CursorScope = scope): void {
  assert.throws(() => decodeCursor(s, cursor), (err: unknown) =>
    err instanceof ApiError && err.code === 'invalid_request' && err.message === INVALID_CURSOR);
}

describe('pagination cursors', () => {
  it('give back the last id for the same listing and filters, in any order of the filters', () => {
    const cursor = encodeCursor(scope, 'noise-suppression');
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.equal(decodeCursor({ listing: 'extensions', filters: { q: undefined, category: 'moderation' } }, cursor), 'noise-suppression');
  });

  it('are refused with other filters or on another listing', () => {
    const cursor = encodeCursor(scope, 'a');
    refused(cursor, { listing: 'extensions', filters: { category: 'analytics' } });
    refused(cursor, { listing: 'extensions', filters: {} });
    refused(cursor, { listing: 'quotes', filters: { category: 'moderation' } });
  });

  it('are refused when altered or made up', () => {
    const cursor = encodeCursor(scope, 'abc');
    const bytes = Buffer.from(cursor, 'base64url');
    const f = bytes.indexOf('"f":"') + 5; // the filters' fingerprint
    bytes[f] = bytes[f] === 0x41 ? 0x42 : 0x41;
    for (const bad of [bytes.toString('base64url'), `${cursor}A`, 'not a cursor', '', 'e30', Buffer.from('{"v":1}').toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'), 'x'.repeat(600)]) {
      refused(bad);
    }
  });
});
