import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { turnCredentials } from './turn.ts';

// expected credentials computed independently: printf %s "$USERNAME" | openssl dgst -sha1 -hmac "$SECRET" -binary | base64
const VECTORS = [
  { secret: 'shared secret', expiresAt: 1700000600, id: 'grant-id-1', credential: '/wRoey1uOuawYavy3cBVtlcz+JE=' },
  { secret: 's3cr3t', expiresAt: 4102444800, id: 'AAECAwQFBgcICQoLDA0ODw', credential: 'XNuxtJqMCNhiUMVSnGMciawLjPI=' },
];

describe('turnCredentials', () => {
  for (const v of VECTORS) {
    it(`signs ${v.expiresAt}:${v.id} with HMAC-SHA-1 of the shared secret`, () => {
      const creds = turnCredentials(v.secret, ['turn:relay.example:3478?transport=udp'], v.expiresAt, v.id);
      assert.equal(creds.username, `${v.expiresAt}:${v.id}`);
      assert.equal(creds.credential, v.credential);
      assert.deepEqual(creds.uris, ['turn:relay.example:3478?transport=udp']);
    });
  }

  it('gives another secret, expiry or id another credential', () => {
    const base = turnCredentials('a', [], 100, 'x').credential;
    assert.notEqual(turnCredentials('b', [], 100, 'x').credential, base);
    assert.notEqual(turnCredentials('a', [], 101, 'x').credential, base);
    assert.notEqual(turnCredentials('a', [], 100, 'y').credential, base);
  });

  it('copies the URI list rather than sharing it', () => {
    const uris = ['turn:a:3478'];
    const creds = turnCredentials('a', uris, 100, 'x');
    assert.notEqual(creds.uris, uris);
    assert.deepEqual(creds.uris, uris);
  });

  it('refuses an id with a colon, an empty id and a non-integer expiry', () => {
    assert.throws(() => turnCredentials('a', [], 100, 'x:y'), TypeError);
    assert.throws(() => turnCredentials('a', [], 100, ''), TypeError);
    assert.throws(() => turnCredentials('a', [], 1.5, 'x'), TypeError);
    assert.throws(() => turnCredentials('a', [], -1, 'x'), TypeError);
  });
});
