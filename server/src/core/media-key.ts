import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

const MEDIA_KEY_INFO = Buffer.from('rtc/media-key/v1');

// hkdfSync turns a Buffer key into a KeyObject on every call; master keys live as long as the
// process, so each is converted once
const masterKeyObjects = new WeakMap<Buffer, KeyObject>();

function keyObjectOf(master: Buffer): KeyObject {
  let key = masterKeyObjects.get(master);
  if (key === undefined) {
    key = createSecretKey(master);
    masterKeyObjects.set(master, key);
  }
  return key;
}

/** K = HKDF-SHA-256(master, salt = grant id bytes, info = "rtc/media-key/v1"), 32 bytes. */
export function deriveMediaKey(master: Buffer, grantId: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', keyObjectOf(master), grantId, MEDIA_KEY_INFO, 32));
}
