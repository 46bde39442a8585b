import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MEDIA_CLOSE } from '@rtc/protocol';
import { CLOSE_CODES, errorForClose } from './errors.ts';

describe('CLOSE_CODES', () => {
  it('reconnects exactly on the codes docs/protocol/media.md says', () => {
    for (const { code, reconnect } of Object.values(MEDIA_CLOSE)) {
      assert.equal(CLOSE_CODES[code]?.reconnect, reconnect, `close code ${code}`);
    }
  });
});

describe('errorForClose', () => {
  it('names the URL of a connection that had opened, and the code and reason', () => {
    const error = errorForClose(4003, 'revoked', { url: 'wss://media.example.com:443/v1/media', opened: true });
    assert.equal(error.code, 'revoked');
    assert.equal(error.message, 'the media connection to wss://media.example.com:443/v1/media closed (4003 revoked)');
  });
});
