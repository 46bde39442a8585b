import { SustainedRate } from '../../sessions/usage-kind.ts';
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
  /** A packet the server had to ask the publisher for again: ms from its loss showing to its arrival. */
  readonly recoveredAfterMs?: number | undefined;
}

/** RTP, SRTP and UDP/IP bytes on top of the payload, counted in what a packet costs a link. */
export const OVERHEAD_BYTES = 12 + 8 + 10 + 28;

/** The recovery time of a stream is remembered this long after its last recovered packet. */
const RECOVERY_MEMORY_MS = 10_000;

/** A layer stays available this long after its last packet (a publisher may drop its top layer). */
const STALE_MS = 1_500;
/**
 * A layer silent this long (or four of its frame intervals, if longer) while a smaller one received a
 * packet within SMALLER_FLOWING_MS has stopped: its publisher's encoder turned it off (its uplink
 * cannot carry it). It is held out at once, as a starved layer, rather than after STALE_MS: its
 * subscribers move to the smaller layer about a second sooner, which on a capped uplink was the
 * difference between a stalled second and none.
 */
const STOPPED_MS = 400;
const SMALLER_FLOWING_MS = 200;
/** The rate of a layer is measured over windows of this length. */
const WINDOW_MS = 500;
/**
 * A layer's rate has settled once it was measured over this many windows since it started (or
 * started again after STALE_MS). A browser's encoder starts a simulcast layer low and ramps it up:
 * in its first window the 640-wide layer of a 300 kbit/s-capped subscriber's publisher measured
 * under what the start estimate leaves, and a subscriber raised to it overran its link (lost 26-50
 * packets in its first second) before the layer grew to 400 kbit/s and more.
 */
const SETTLED_WINDOWS = 2;
/**
 * A layer encoded at less than this fraction of the frame rate of a smaller one, or that stops while
 * a smaller one flows, is starved (the publisher's uplink leaves it too little, and its encoder drops
 * frames or turns it off): it counts as unavailable,
 * since the smaller layer at full motion looks better than the larger one stuttering. It counts
 * again once it is back at RECOVERED_FPS_FRACTION and has flowed without a stop for STARVED_HOLD_MS, a hold that
 * doubles (up to STARVED_HOLD_MAX_MS) each time the layer starves again within a minute, so that
 * subscribers do not switch back and forth (each switch costs a key frame on the uplink that starved it).
 */
const STARVED_FPS_FRACTION = 0.5;
const RECOVERED_FPS_FRACTION = 0.8;
const STARVED_HOLD_MS = 5_000;
const STARVED_HOLD_MAX_MS = 40_000;
const STARVED_MEMORY_MS = 60_000;

class Layer {
  ssrc = 0;
  width = 0;
  height = 0;
  lastPacketMs = Number.NEGATIVE_INFINITY;
  /** Since when its packets come without a gap of STOPPED_MS. */
  flowingSinceMs = Number.NEGATIVE_INFINITY;
  windowStartMs = 0;
  windowBytes = 0;
  windowFrames = 0;
  bps = 0;
  fps = 0;
  /** Windows measured since the layer started, up to SETTLED_WINDOWS. */
  windows = 0;
  starved = false;
  /** The server told the publisher to rest it (publish_layers): its silence is asked for, not a starved uplink. */
  rested = false;
  starvedAtMs = Number.NEGATIVE_INFINITY;
  holdMs = STARVED_HOLD_MS;
  /** Its rate for billing, and the picture size that rate has verified (docs/console.md, "Usage kind of a session"). */
  readonly usageRate = new SustainedRate();
  verifiedPixels = 0;
}

/**
 * What the server knows of a published video's simulcast layers (docs/protocol/media.md, "Layers"):
 * for each, its rate and frame rate as received (RTP overhead included) and its picture size from its
 * last key frame.
 */
export class StreamLayers {
  private readonly layers: Layer[];
  private recovery = 0;
  private lastRecoveredMs = Number.NEGATIVE_INFINITY;

  constructor(count: number) {
    this.layers = Array.from({ length: Math.max(count, 1) }, () => new Layer());
  }

  get count(): number {
    return this.layers.length;
  }

  /**
   * The layers the publisher was told to rest (`rested[i]` for layer i). A rested layer's silence is
   * not taken for a starved uplink, and one asked back counts as soon as it is measured (if its
   * uplink still starves it, that shows again, and its hold doubles as for any repeat).
   */
  setRested(rested: readonly boolean[]): void {
    this.layers.forEach((l, i) => {
      const now = rested[i] ?? false;
      if (l.rested && !now) l.starved = false;
      l.rested = now;
    });
  }

  /** Every packet of the layer as it arrives; `marker` ends a frame. */
  onPacket(layer: number, ssrc: number, bytes: number, marker: boolean, vp8: Vp8Packet | undefined, nowMs: number): void {
    const l = this.layers[layer];
    if (!l) return;
    l.ssrc = ssrc;
    if (vp8?.keyFrame && vp8.width > 0) {
      l.width = vp8.width;
      l.height = vp8.height;
    }
    if (nowMs - l.lastPacketMs > STOPPED_MS) l.flowingSinceMs = nowMs;
    if (nowMs - l.lastPacketMs > STALE_MS) {
      l.windowStartMs = nowMs;
      l.windowBytes = 0;
      l.windowFrames = 0;
      l.bps = 0;
      l.fps = 0;
      l.windows = 0;
    }
    l.lastPacketMs = nowMs;
    // a key frame's size counts only once the layer carried a rate that size needs, for seconds
    l.verifiedPixels = l.usageRate.add(bytes, nowMs, l.width * l.height);
    l.windowBytes += bytes + OVERHEAD_BYTES;
    if (marker) l.windowFrames += 1;
    const span = nowMs - l.windowStartMs;
    if (span >= WINDOW_MS) {
      const rate = (l.windowBytes * 8 * 1000) / span;
      const fps = (l.windowFrames * 1000) / span;
      l.bps = l.bps === 0 ? rate : l.bps * 0.6 + rate * 0.4;
      l.fps = l.fps === 0 ? fps : l.fps * 0.6 + fps * 0.4;
      l.windows = Math.min(l.windows + 1, SETTLED_WINDOWS);
      l.windowStartMs = nowMs;
      l.windowBytes = 0;
      l.windowFrames = 0;
    }
  }

  /** Each layer's rate in bit/s; 0 for a layer not received lately (or not yet measured), or starved. */
  rates(nowMs: number): number[] {
    let smallerFps = 0;
    let smallerLastMs = Number.NEGATIVE_INFINITY;
    return this.layers.map((l) => {
      const silentMs = nowMs - l.lastPacketMs;
      const stale = silentMs > STALE_MS;
      // a layer that stops while a smaller one flows (the publisher's encoder turns it off and on
      // as its uplink allows) is held out like a starved one: it would come back for a moment only
      const flowingBelow = smallerFps > 0 && nowMs - smallerLastMs <= SMALLER_FLOWING_MS;
      const stopped = Number.isFinite(l.lastPacketMs) && smallerFps > 0
        && (stale || (flowingBelow && silentMs > Math.max(STOPPED_MS, l.fps > 0 ? 4000 / l.fps : 0)));
      smallerLastMs = Math.max(smallerLastMs, l.lastPacketMs);
      if (!l.starved && !l.rested && (stopped || (!stale && l.fps > 0 && l.fps < smallerFps * STARVED_FPS_FRACTION))) {
        l.holdMs = nowMs - l.starvedAtMs < STARVED_MEMORY_MS ? Math.min(l.holdMs * 2, STARVED_HOLD_MAX_MS) : STARVED_HOLD_MS;
        l.starved = true;
        l.starvedAtMs = nowMs;
      }
      if (stale) return 0;
      // back only once it flowed without a stop for the whole hold: a layer its encoder turns on
      // and off every few seconds would take its subscribers up only to drop them a moment later
      const held = nowMs - l.starvedAtMs < l.holdMs || nowMs - l.flowingSinceMs < l.holdMs;
      if (l.starved && !held && l.fps >= smallerFps * RECOVERED_FPS_FRACTION) {
        l.starved = false;
      }
      smallerFps = Math.max(smallerFps, l.fps);
      return l.starved ? 0 : l.bps || (l.windowBytes > 0 ? 1 : 0);
    });
  }

  /** Whether each layer's rate has settled (SETTLED_WINDOWS): a subscriber is raised only to a layer that has. */
  settled(): boolean[] {
    return this.layers.map((l) => l.windows >= SETTLED_WINDOWS);
  }

  /** A packet of the stream came only when asked for again, `afterMs` after its loss showed. */
  onRecovered(afterMs: number, nowMs: number): void {
    this.recovery = afterMs >= this.recovery ? afterMs : this.recovery * 0.9 + afterMs * 0.1;
    this.lastRecoveredMs = nowMs;
  }

  /**
   * How much later than the rest a packet lost on the publisher's uplink reaches subscribers (ms;
   * 0 when none was lost in the last 10 s): the time from its loss showing to its retransmission
   * arriving, the larger recent ones weighing most.
   */
  recoveryMs(nowMs: number): number {
    return nowMs - this.lastRecoveredMs > RECOVERY_MEMORY_MS ? 0 : Math.round(this.recovery);
  }

  /** Each layer's frames per second as received (0: not measured yet). */
  frameRates(): number[] {
    return this.layers.map((l) => Math.round(l.fps * 10) / 10);
  }

  /**
   * Each layer as last measured, for the room service API (docs/reference/room-api.md, "Published
   * streams"): its picture size (0 until its first key frame) and rate in bit/s (0 when not received
   * lately). Reads only: the starvation bookkeeping of `rates` is left alone.
   */
  measured(nowMs: number): { width: number; height: number; bps: number }[] {
    return this.layers.map((l) => ({ width: l.width, height: l.height, bps: nowMs - l.lastPacketMs > STALE_MS ? 0 : Math.round(l.bps) }));
  }

  /** The picture size (pixels) the layer's rate has verified lately; 0 while none (docs/console.md, "Usage kind of a session"). */
  verifiedPixels(layer: number): number {
    return this.layers[layer]?.verifiedPixels ?? 0;
  }

  sizes(): { width: number; height: number }[] {
    return this.layers.map((l) => ({ width: l.width, height: l.height }));
  }

  get(layer: number): { readonly ssrc: number; readonly width: number; readonly height: number } | undefined {
    return this.layers[layer];
  }
}
