/**
 * The VP8 RTP payload descriptor (RFC 7741 section 4.2) and what the start of a VP8 frame tells
 * without decoding it (RFC 6386 sections 9.1 and 19.1).
 *
 * ```
 *  0 1 2 3 4 5 6 7
 * +-+-+-+-+-+-+-+-+
 * |X|R|N|S|R| PID |  required
 * +-+-+-+-+-+-+-+-+
 * |I|L|T|K| RSV   |  when X
 * +-+-+-+-+-+-+-+-+
 * |M| PictureID   |  when I; M: a second byte follows (15-bit id)
 * +-+-+-+-+-+-+-+-+
 * |   PictureID   |
 * +-+-+-+-+-+-+-+-+
 * |   TL0PICIDX   |  when L
 * +-+-+-+-+-+-+-+-+
 * |TID|Y| KEYIDX  |  when T or K
 * +-+-+-+-+-+-+-+-+
 * ```
 */
export interface Vp8Packet {
  /** Descriptor length: the VP8 frame (its payload header) starts here. */
  readonly headerBytes: number;
  /** S bit: the packet starts a partition. */
  readonly startOfPartition: boolean;
  /** PID: the partition the packet's first byte belongs to. */
  readonly partitionIndex: number;
  /** 7- or 15-bit picture id, undefined when absent. */
  readonly pictureId: number | undefined;
  readonly pictureIdBits: 0 | 7 | 15;
  readonly tl0PicIdx: number | undefined;
  /** TID, undefined unless the T bit is set (with K alone the byte is there but TID is not meaningful). */
  readonly temporalId: number | undefined;
  /** Start of a key frame: S=1, PID=0 and the frame tag's P bit (bit 0 of its first byte) is 0. */
  readonly keyFrame: boolean;
  /** From a key frame's header; 0 unless the packet starts a key frame with its whole 10-byte header. */
  readonly width: number;
  readonly height: number;
}

const X = 0x80;
const S = 0x10;
const I = 0x80;
const L = 0x40;
const T = 0x20;
const K = 0x10;
const M = 0x80;

/**
 * A key frame's clear bytes: the 3-byte frame tag, the start code 9d 01 2a and two 16-bit sizes
 * (RFC 6386 section 9.1). docs/protocol/media.md section 11 leaves exactly these in clear; past
 * them (past 3 bytes on other frames) the frame may be encrypted end to end, so nothing here reads
 * further.
 */
const KEY_FRAME_HEADER_BYTES = 10;

/** Parses the descriptor; undefined when it is truncated or no VP8 byte follows it. */
export function parseVp8(payload: Uint8Array): Vp8Packet | undefined {
  const n = payload.length;
  if (n === 0) return undefined;
  const first = payload[0]!;
  let at = 1;
  let pictureId: number | undefined;
  let pictureIdBits: 0 | 7 | 15 = 0;
  let tl0PicIdx: number | undefined;
  let temporalId: number | undefined;
  if ((first & X) !== 0) {
    if (n < 2) return undefined;
    const ext = payload[1]!;
    at = 2;
    if ((ext & I) !== 0) {
      if (at >= n) return undefined;
      const high = payload[at]!;
      if ((high & M) !== 0) {
        if (at + 1 >= n) return undefined;
        pictureId = ((high & 0x7f) << 8) | payload[at + 1]!;
        pictureIdBits = 15;
        at += 2;
      } else {
        pictureId = high;
        pictureIdBits = 7;
        at += 1;
      }
    }
    if ((ext & L) !== 0) {
      if (at >= n) return undefined;
      tl0PicIdx = payload[at]!;
      at += 1;
    }
    if ((ext & (T | K)) !== 0) {
      if (at >= n) return undefined;
      if ((ext & T) !== 0) temporalId = payload[at]! >>> 6;
      at += 1;
    }
  }
  // RFC 7741 section 4.1: a packet carries at least one byte of the VP8 frame.
  if (at >= n) return undefined;
  const startOfPartition = (first & S) !== 0;
  const partitionIndex = first & 0x07;
  const keyFrame = startOfPartition && partitionIndex === 0 && (payload[at]! & 0x01) === 0;
  let width = 0;
  let height = 0;
  if (keyFrame && n - at >= KEY_FRAME_HEADER_BYTES && payload[at + 3] === 0x9d && payload[at + 4] === 0x01 && payload[at + 5] === 0x2a) {
    // The top two bits of each size are a scale the decoder applies, not part of the size.
    width = (payload[at + 6]! | (payload[at + 7]! << 8)) & 0x3fff;
    height = (payload[at + 8]! | (payload[at + 9]! << 8)) & 0x3fff;
  }
  return { headerBytes: at, startOfPartition, partitionIndex, pictureId, pictureIdBits, tl0PicIdx, temporalId, keyFrame, width, height };
}

/**
 * Rewrites the picture id and TL0PICIDX in place where the descriptor has them: the id keeps the
 * width the publisher chose (a 7-bit id wraps at 128, a 15-bit one at 32768), so the packet's length
 * never changes. A truncated descriptor is left as it is.
 */
export function rewriteVp8(payload: Uint8Array, pictureId: number, tl0PicIdx: number | undefined): void {
  const n = payload.length;
  if (n < 2 || (payload[0]! & X) === 0) return;
  const ext = payload[1]!;
  let at = 2;
  if ((ext & I) !== 0) {
    if (at >= n) return;
    if ((payload[at]! & M) !== 0) {
      if (at + 1 >= n) return;
      payload[at] = M | ((pictureId >>> 8) & 0x7f);
      payload[at + 1] = pictureId & 0xff;
      at += 2;
    } else {
      payload[at] = pictureId & 0x7f;
      at += 1;
    }
  }
  if ((ext & L) !== 0 && at < n && tl0PicIdx !== undefined) payload[at] = tl0PicIdx & 0xff;
}
