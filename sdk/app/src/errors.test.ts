import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MEDIA_CLOSE } from '@rtc/protocol';
import { CLOSE_CODES } from './errors.ts';

describe('CLOSE_CODES', () => {
  it('reconnects exactly on the codes docs/protocol/media.md says', () => {
    for (const { code, reconnect } of Object.values(MEDIA_CLOSE)) {
      assert.equal(CLOSE_CODES[code]?.reconnect, reconnect, `close code ${code}`);
    }
  });
});
