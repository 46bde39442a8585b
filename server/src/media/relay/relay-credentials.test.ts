import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedKeyRing } from '../../core/keyring.ts';
import { buildKeyRing, newKeyDocument, parseKeyDocument, rotateKeyDocument, serializeKeyDocument } from '../../keys/key-document.ts';
import { deriveMediaKey } from '../../tokens/media-key.ts';
import { relayCredentialsOf, STATIC_RELAY_KID } from './index.ts';

const NOW = 1_800_000_000;

describe('relay credentials (docs/protocol/relay.md, "Node credential")', () => {
  it('are the same on every process that reads the same key ring, and apart from the master key and every media key', async () => {
    const document = newKeyDocument(NOW);
    // two media workers each load keys.json from the shared data directory
    const [a, b] = [1, 2].map(() => relayCredentialsOf({ port: 0, secret: undefined }, fixedKeyRing(buildKeyRing(parseKeyDocument(serializeKeyDocument(document), 'keys.json'), NOW, 'keys.json'))));
    const own = a!.current();
    assert.equal(own.kid, document.media_master[0]!.kid);
    assert.deepEqual(b!.current(), own);
    assert.deepEqual(await b!.find(own.kid), own);
    const master = Buffer.from(document.media_master[0]!.secret, 'base64url');
    assert.notDeepEqual(own.secret, master);
    assert.notDeepEqual(own.secret, deriveMediaKey(master, Buffer.alloc(16)));
    assert.equal(own.secret.length, 32);
  });

  it('follow a rotation: a new current key, the retiring one still found until it retires', async () => {
    const document = newKeyDocument(NOW);
    const before = relayCredentialsOf({ port: 0, secret: undefined }, fixedKeyRing(buildKeyRing(document, NOW, 'test'))).current();
    const { document: rotated, masterKid } = rotateKeyDocument(document, NOW + 60);
    const after = relayCredentialsOf({ port: 0, secret: undefined }, fixedKeyRing(buildKeyRing(rotated, NOW + 60, 'test')));
    assert.equal(after.current().kid, masterKid);
    assert.notDeepEqual(after.current().secret, before.secret);
    assert.deepEqual(await after.find(before.kid), before);
    assert.equal(await after.find('mk-unknown'), undefined);
  });

  it('are the operator\'s secret when RTC_MEDIA_RELAY_SECRET is set, under the kid static, and nothing else', async () => {
    const secret = Buffer.from('s'.repeat(40));
    const credentials = relayCredentialsOf({ port: 0, secret }, fixedKeyRing(buildKeyRing(newKeyDocument(NOW), NOW, 'test')));
    assert.deepEqual(credentials.current(), { kid: STATIC_RELAY_KID, secret });
    assert.equal(await credentials.find('mk-anything'), undefined);
  });
});
