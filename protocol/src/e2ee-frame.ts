/**
 * Layout of an encoded audio or video frame encrypted end to end for WebRTC (docs/protocol/media.md,
 * "Encrypted encoded frames"): the bytes a packetizer must read stay clear, the rest is sealed under
 * the stream key, and a 12-byte trailer names the key epoch and the sequence number.
 *
 * ```
 * frame'  = clear || AES-256-GCM(key of epoch, nonce, rest, aad = clear || trailer) || tag || trailer
 * trailer = epoch (2) || seq (8) || clear length (1) || 0xE2
 * nonce   = 0x00000004 || seq (8)
 * ```
 */

export const E2EE_TRAILER_BYTES = 12;
export const E2EE_MARKER = 0xe2;
export const E2EE_TAG_BYTES = 16;

/** Unencrypted leading bytes: the Opus TOC byte; the VP8 payload header (10 bytes of a key frame, 3 otherwise). */
export function clearBytes(kind: 'audio' | 'video', frame: Uint8Array): number {
  if (kind === 'audio') return Math.min(1, frame.length);
  const keyFrame = frame.length > 0 && (frame[0]! & 0x01) === 0;
  return Math.min(keyFrame ? 10 : 3, frame.length);
}

export interface E2eeTrailer {
  readonly epoch: number;
  readonly seq: number;
  readonly clear: number;
}

const TWO_32 = 2 ** 32;

export function encodeTrailer(t: E2eeTrailer): Uint8Array {
  const bytes = new Uint8Array(E2EE_TRAILER_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, t.epoch);
  view.setUint32(2, Math.floor(t.seq / TWO_32));
  view.setUint32(6, t.seq % TWO_32);
  view.setUint8(10, t.clear);
  view.setUint8(11, E2EE_MARKER);
  return bytes;
}

/** The trailer of an encrypted frame, or undefined when the frame cannot be one. */
export function decodeTrailer(frame: Uint8Array): E2eeTrailer | undefined {
  if (frame.length < E2EE_TRAILER_BYTES + E2EE_TAG_BYTES || frame[frame.length - 1] !== E2EE_MARKER) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset + frame.length - E2EE_TRAILER_BYTES, E2EE_TRAILER_BYTES);
  const high = view.getUint32(2);
  if (high >= 2 ** 21) return undefined;
  const seq = high * TWO_32 + view.getUint32(6);
  const clear = view.getUint8(10);
  if (seq === 0 || clear > frame.length - E2EE_TRAILER_BYTES - E2EE_TAG_BYTES) return undefined;
  return { epoch: view.getUint16(0), seq, clear };
}

/** The 12-byte AES-GCM nonce of an encrypted frame. */
export function e2eeNonce(seq: number): Uint8Array {
  const nonce = new Uint8Array(12);
  const view = new DataView(nonce.buffer);
  view.setUint32(0, 4);
  view.setUint32(4, Math.floor(seq / TWO_32));
  view.setUint32(8, seq % TWO_32);
  return nonce;
}
