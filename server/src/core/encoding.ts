/** Small pure helpers for base64url and constant-time comparison. */
import { timingSafeEqual } from 'node:crypto';

export function b64u(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** Decodes strict base64url (no padding, no other alphabet); undefined when malformed. */
export function fromB64u(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  // reject non-canonical encodings (stray low bits in the last character)
  return bytes.toString('base64url') === text ? bytes : undefined;
}

export function safeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
