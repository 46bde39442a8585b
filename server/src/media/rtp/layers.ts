import type { Vp8Packet } from './vp8.ts';

/** A publisher's RTP packet on its way to subscribers, parsed once at the server's ingress. */
export interface ForwardedRtp {
  /** Simulcast layer, 0 the smallest; 0 for a stream of one layer. */
  readonly layer: number;
  /** The publisher's SSRC of that layer. */
  readonly ssrc: number;
  readonly seq: number;
  readonly timestamp: number;
  readonly marker: boolean;
  readonly payload: Buffer;
  /** The VP8 payload descriptor and key frame header (video only). */
  readonly vp8: Vp8Packet | undefined;
}

/** RTP, SRTP and UDP/IP bytes on top of the payload, counted in what a packet costs a link. */
export const OVERHEAD_BYTES = 12 + 8 + 10 + 28;

/** A layer stays available this long after its last packet (a publisher may drop its top layer). */
const STALE_MS = 1_500;
/** The rate of a layer is measured over windows of this length. */
const WINDOW_MS = 500;

class Layer {
  ssrc = 0;
  width = 0;
  height = 0;
  lastPacketMs = Number.NEGATIVE_INFINITY;
  windowStartMs = 0;
  windowBytes = 0;
  bps = 0;
}

/**
 * What the server knows of a published video's simulcast layers (docs/protocol/media.md, "Layers"):
 * for each, its rate as received (RTP overhead included) and its picture size from its last key frame.
 */
export class StreamLayers {
  private readonly layers: Layer[];

  constructor(count: number) {
    this.layers = Array.from({ length: Math.max(count, 1) }, () => new Layer());
  }

  get count(): number {
    return this.layers.length;
  }

  onPacket(layer: number, ssrc: number, bytes: number, vp8: Vp8Packet | undefined, nowMs: number): void {
    const l = this.layers[layer];
    if (!l) return;
    l.ssrc = ssrc;
    if (vp8?.keyFrame && vp8.width > 0) {
      l.width = vp8.width;
      l.height = vp8.height;
    }
    if (nowMs - l.lastPacketMs > STALE_MS) {
      l.windowStartMs = nowMs;
      l.windowBytes = 0;
      l.bps = 0;
    }
    l.lastPacketMs = nowMs;
    l.windowBytes += bytes + OVERHEAD_BYTES;
    const span = nowMs - l.windowStartMs;
    if (span >= WINDOW_MS) {
      const rate = (l.windowBytes * 8 * 1000) / span;
      l.bps = l.bps === 0 ? rate : l.bps * 0.6 + rate * 0.4;
      l.windowStartMs = nowMs;
      l.windowBytes = 0;
    }
  }

  /** Each layer's rate in bit/s; 0 for a layer not received lately (or not yet measured). */
  rates(nowMs: number): number[] {
    return this.layers.map((l) => (nowMs - l.lastPacketMs > STALE_MS ? 0 : l.bps || (l.windowBytes > 0 ? 1 : 0)));
  }

  sizes(): { width: number; height: number }[] {
    return this.layers.map((l) => ({ width: l.width, height: l.height }));
  }

  get(layer: number): { readonly ssrc: number; readonly width: number; readonly height: number } | undefined {
    return this.layers[layer];
  }
}
