import { hkdfSync } from 'node:crypto';

const MEDIA_KEY_INFO = Buffer.from('rtc/media-key/v1');

/** K = HKDF-SHA-256(master, salt = grant id bytes, info = "rtc/media-key/v1"), 32 bytes. */
export function deriveMediaKey(master: Buffer, grantId: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', master, grantId, MEDIA_KEY_INFO, 32));
}
