/**
 * The 16-byte header of every binary media message (docs/protocol/media.md, "Frame layout"), shared
 * by the media server and the app SDK. It is the AES-GCM associated data.
 */

export const PROTOCOL_VERSION = 1;
export const HEADER_BYTES = 16;
export const TAG_BYTES = 16;
export const KIND_CODE = { control: 0, audio: 1, video: 2, data: 3 } as const;
export const NONCE_LABEL = { clientControl: 1, serverControl: 2, streamFrame: 3, encodedFrame: 4 } as const;

export interface FrameHeader {
  readonly kind: number;
  readonly epoch: number;
  readonly streamId: number;
  readonly seq: number;
}

const TWO_32 = 2 ** 32;
/** Sequence numbers stay below 2^53, so they are exact JavaScript numbers: the high word is below 2^21. */
export const MAX_SEQ_HIGH = 2 ** 21;

export function encodeHeader(h: FrameHeader): Uint8Array {
  const bytes = new Uint8Array(HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, PROTOCOL_VERSION);
  view.setUint8(1, h.kind);
  view.setUint16(2, h.epoch);
  view.setUint32(4, h.streamId);
  view.setUint32(8, Math.floor(h.seq / TWO_32));
  view.setUint32(12, h.seq % TWO_32);
  return bytes;
}

/** Undefined for a message too short to be a frame, of another version, or with a sequence number out of range. */
export function decodeHeader(message: Uint8Array): FrameHeader | undefined {
  if (message.length < HEADER_BYTES + TAG_BYTES || message[0] !== PROTOCOL_VERSION) return undefined;
  const view = new DataView(message.buffer, message.byteOffset, HEADER_BYTES);
  const high = view.getUint32(8);
  if (high >= MAX_SEQ_HIGH) return undefined;
  const seq = high * TWO_32 + view.getUint32(12);
  if (seq === 0) return undefined;
  return { kind: view.getUint8(1), epoch: view.getUint16(2), streamId: view.getUint32(4), seq };
}
