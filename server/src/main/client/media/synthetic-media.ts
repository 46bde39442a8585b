/**
 * Synthetic camera and microphone RTP for load generation: VP8-shaped frames at a chosen bitrate
 * and Opus-shaped 20 ms packets. The server forwards RTP without decoding (docs/protocol/media.md,
 * section 10.3) but reads what a VP8 payload descriptor and a key frame's clear header say
 * (server/src/media/rtp/vp8.ts): those are real; the rest of each frame is random bytes.
 */
import { randomBytes } from 'node:crypto';
import { OPUS_STAMP_OFFSET, VP8_FRAME_STAMP_OFFSET, stampSendTime } from '../load-test-delay.ts';

export const VIDEO_FPS = 30;
/** RTP timestamp step of one frame (90 kHz clock). */
export const VIDEO_TIMESTAMP_STEP = 90_000 / VIDEO_FPS;
export const AUDIO_PACKET_MS = 20;
/** Opus at 32 kbit/s: 80 bytes every 20 ms. */
export const AUDIO_PAYLOAD_BYTES = 80;
/** VP8 bytes per RTP packet, under a path MTU with SRTP and header extensions. */
const MAX_VP8_BYTES = 1100;
/** Descriptor: X, then I with a 15-bit picture id. */
const DESCRIPTOR_BYTES = 4;
/** A key frame is this many times an inter frame, as an encoder's are. */
const KEY_FRAME_FACTOR = 3;

/** Random bytes the frames are cut from (fresh random bytes for every frame would cost CPU the load does not need). */
const NOISE = randomBytes(64 * 1024);

function noise(length: number, offset: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  for (let at = 0; at < length;) {
    const from = (offset + at) % NOISE.length;
    at += NOISE.copy(out, at, from, Math.min(NOISE.length, from + length - at));
  }
  return out;
}

/** A simulcast layer or the single layer: its frame size and the size a key frame announces. */
export interface VideoLayer {
  readonly rid: string | undefined;
  readonly bitrateBps: number;
  readonly width: number;
  readonly height: number;
}

/**
 * The layers of a video of `bitrateBps`: one at 1280x720, or with simulcast the three layers the
 * app SDK sends from a 720p camera, a quarter, half and the full size, smallest first
 * (docs/protocol/media.md, section 10.4), sharing the bitrate 1:4:16 as a browser's defaults do.
 */
export function videoLayers(bitrateBps: number, simulcast: boolean): VideoLayer[] {
  if (!simulcast) return [{ rid: undefined, bitrateBps, width: 1280, height: 720 }];
  return [
    { rid: 'q', bitrateBps: Math.round(bitrateBps / 21), width: 320, height: 180 },
    { rid: 'h', bitrateBps: Math.round((bitrateBps * 4) / 21), width: 640, height: 360 },
    { rid: 'f', bitrateBps: Math.round((bitrateBps * 16) / 21), width: 1280, height: 720 },
  ];
}

/** Frames of one layer cut into RTP payloads: VP8 descriptor (S bit on the first, picture id on all), frame bytes. */
export class Vp8FrameSource {
  private pictureId = Math.floor(Math.random() * 0x8000);
  private offset = 0;
  private readonly layer: VideoLayer;

  constructor(layer: VideoLayer) {
    this.layer = layer;
  }

  /** The RTP payloads of the next frame, its send time written in (load-test-delay.ts); the last one carries the marker bit. */
  next(keyFrame: boolean, sentAtMs: number): Buffer[] {
    const inter = Math.max(16, Math.round(this.layer.bitrateBps / 8 / VIDEO_FPS));
    const size = keyFrame ? inter * KEY_FRAME_FACTOR : inter;
    const frame = noise(size, this.offset);
    this.offset = (this.offset + size) % NOISE.length;
    // frame tag (RFC 6386 section 9.1): P bit 0 on a key frame, show_frame set; then a key frame's
    // start code and its size
    frame[0] = keyFrame ? 0x10 : 0x11;
    if (keyFrame) {
      frame.set([0x9d, 0x01, 0x2a], 3);
      frame.writeUInt16LE(this.layer.width & 0x3fff, 6);
      frame.writeUInt16LE(this.layer.height & 0x3fff, 8);
    }
    stampSendTime(frame, VP8_FRAME_STAMP_OFFSET, sentAtMs);
    this.pictureId = (this.pictureId + 1) & 0x7fff;
    const payloads: Buffer[] = [];
    for (let at = 0; at < size; at += MAX_VP8_BYTES) {
      const chunk = frame.subarray(at, Math.min(size, at + MAX_VP8_BYTES));
      const descriptor = Buffer.from([at === 0 ? 0x90 : 0x80, 0x80, 0x80 | (this.pictureId >> 8), this.pictureId & 0xff]);
      payloads.push(Buffer.concat([descriptor, chunk], DESCRIPTOR_BYTES + chunk.length));
    }
    return payloads;
  }
}

/** One 20 ms Opus packet: a CELT fullband 20 ms mono TOC byte (RFC 6716 section 3.1), its send time, then noise. */
export function opusPayload(sentAtMs: number): Buffer {
  const payload = noise(AUDIO_PAYLOAD_BYTES, Math.floor(Math.random() * NOISE.length));
  payload[0] = 0xf8;
  stampSendTime(payload, OPUS_STAMP_OFFSET, sentAtMs);
  return payload;
}
