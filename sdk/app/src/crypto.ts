/** The SDK's cryptography, all through WebCrypto (`globalThis.crypto.subtle`). */
import { concatBytes, utf8 } from './encoding.ts';
import { HEADER_BYTES, KEY_LABEL } from '@rtc/protocol';

type Subtle = typeof globalThis.crypto.subtle;
/** Bytes over a plain ArrayBuffer, as WebCrypto takes them. */
type Bytes = Uint8Array<ArrayBuffer>;
/** A WebCrypto key (`CryptoKey`), never extractable here. */
export type SecretKey = Awaited<ReturnType<Subtle['importKey']>>;

/** The same bytes over a plain ArrayBuffer (a copy only when they sit in a shared one). */
function own(bytes: Uint8Array): Bytes {
  return bytes.buffer instanceof ArrayBuffer ? (bytes as Bytes) : new Uint8Array(bytes);
}

function subtle(): Subtle {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new TypeError('WebCrypto (globalThis.crypto.subtle) is not available in this environment');
  return subtle;
}

export function randomBytes(size: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(size));
}

export async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest('SHA-256', own(bytes)));
}

const PROOF_LABEL = utf8(KEY_LABEL.proof);
const C2S_LABEL = utf8(KEY_LABEL.clientToServer);
const S2C_LABEL = utf8(KEY_LABEL.serverToClient);

/** HMAC-SHA-256(K, "rtc/pop/v1" || SHA-256(grant) || server nonce || client nonce). */
export async function proofOfPossession(mediaKey: Uint8Array, grantDigest: Uint8Array, serverNonce: Uint8Array, clientNonce: Uint8Array): Promise<Uint8Array> {
  const key = await subtle().importKey('raw', own(mediaKey), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle().sign('HMAC', key, own(concatBytes(PROOF_LABEL, grantDigest, serverNonce, clientNonce))));
}

/** Per-direction AES-256-GCM keys: HKDF-SHA-256(K, salt = server nonce || client nonce, info = label || SHA-256(grant)). */
export async function deriveSessionKeys(
  mediaKey: Uint8Array, grantDigest: Uint8Array, serverNonce: Uint8Array, clientNonce: Uint8Array,
): Promise<{ c2s: SecretKey; s2c: SecretKey }> {
  const ikm = await subtle().importKey('raw', own(mediaKey), 'HKDF', false, ['deriveKey']);
  const salt = own(concatBytes(serverNonce, clientNonce));
  const derive = (label: Uint8Array): Promise<SecretKey> => subtle().deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt, info: own(concatBytes(label, grantDigest)) },
    ikm, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'],
  );
  const [c2s, s2c] = await Promise.all([derive(C2S_LABEL), derive(S2C_LABEL)]);
  return { c2s, s2c };
}

export function importAesKey(raw: Uint8Array): Promise<SecretKey> {
  return subtle().importKey('raw', own(raw), { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

function nonceFor(label: number, header: Uint8Array): Bytes {
  const nonce = new Uint8Array(12);
  new DataView(nonce.buffer).setUint32(0, label);
  nonce.set(header.subarray(8, 16), 4);
  return nonce;
}

/** header || AES-256-GCM(key, nonce = label || sequence, aad = header, plaintext) || tag. */
export async function seal(key: SecretKey, label: number, header: Uint8Array, plaintext: Uint8Array): Promise<Uint8Array> {
  const sealed = await subtle().encrypt(
    { name: 'AES-GCM', iv: nonceFor(label, header), additionalData: own(header), tagLength: 128 }, key, own(plaintext),
  );
  const out = new Uint8Array(HEADER_BYTES + sealed.byteLength);
  out.set(header, 0);
  out.set(new Uint8Array(sealed), HEADER_BYTES);
  return out;
}

/** The plaintext of a sealed message, or undefined when it does not authenticate. */
export async function open(key: SecretKey, label: number, message: Uint8Array): Promise<Uint8Array | undefined> {
  const bytes = own(message);
  const header = bytes.subarray(0, HEADER_BYTES);
  try {
    const plain = await subtle().decrypt(
      { name: 'AES-GCM', iv: nonceFor(label, header), additionalData: header, tagLength: 128 }, key, bytes.subarray(HEADER_BYTES),
    );
    return new Uint8Array(plain);
  } catch {
    return undefined;
  }
}
