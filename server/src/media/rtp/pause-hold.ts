/**
 * A forwarded video pauses only once its smallest layer has not fitted for this long, unless the
 * client's link loses more than LOSS_PAUSE of what is sent: a dip of the estimate (each key frame
 * queues for a moment on a slow link) is not a link that cannot carry the video.
 */
export const PAUSE_AFTER_MS = 2_000;
export const LOSS_PAUSE = 0.1;
/**
 * A paused video whose smallest layer the estimate would keep, though not resume (probes show at
 * most what a slow link carries, short of the room a resume asks for), tries again after
 * RETRY_AFTER_MS; one that pauses again within RETRY_MEMORY_MS of its try waits twice as long the
 * next time, up to RETRY_MAX_MS.
 */
export const RETRY_AFTER_MS = 4_000;
const RETRY_MAX_MS = 32_000;
const RETRY_MEMORY_MS = 10_000;

/** What the allocation said of one forwarded video, and what the hold needs to know of it. */
export interface HoldInput {
  /** The layer the allocation gives it (-1: none fits). */
  readonly target: number;
  /** Its smallest layer with a rate (-1: none measured). */
  readonly lowest: number;
  /** The client hid its tile (bounds of 0). */
  readonly hidden: boolean;
  /** Paused already. */
  readonly paused: boolean;
  /** The loss of the client's link (fraction). */
  readonly loss: number;
  /** Its smallest layer fits with the margin a forwarded video keeps it with (rtp/allocation.ts). */
  readonly keepable?: boolean;
}

/**
 * The pause hysteresis of one video a subscriber receives (docs/protocol/media.md, "Bandwidth"): it
 * keeps a forwarded video on its smallest layer through PAUSE_AFTER_MS of an estimate too low for it.
 */
export class PauseHold {
  /** Since when the smallest layer has not fitted while it was forwarded; undefined while it fits. */
  private unfitSinceMs: number | undefined;
  private pausedSinceMs: number | undefined;
  private retryAfterMs = RETRY_AFTER_MS;
  private retriedAtMs = Number.NEGATIVE_INFINITY;

  /** Whether it is forwarded though its smallest layer does not fit (a probe may show that it does). */
  get holding(): boolean {
    return this.unfitSinceMs !== undefined;
  }

  /** The layer to forward: the allocation's, or the smallest one while the hold lasts. */
  target(input: HoldInput, nowMs: number): number {
    if (input.paused) return this.retry(input, nowMs);
    this.pausedSinceMs = undefined;
    if (input.target >= 0 || input.hidden || input.paused || input.lowest < 0) {
      this.unfitSinceMs = undefined;
      return input.target;
    }
    this.unfitSinceMs ??= nowMs;
    return nowMs - this.unfitSinceMs < PAUSE_AFTER_MS && input.loss <= LOSS_PAUSE ? input.lowest : input.target;
  }

  /** A paused video: the allocation's layer, or its smallest one when a try is due. */
  private retry(input: HoldInput, nowMs: number): number {
    this.unfitSinceMs = undefined;
    if (this.pausedSinceMs === undefined) {
      this.pausedSinceMs = nowMs;
      this.retryAfterMs = nowMs - this.retriedAtMs < RETRY_MEMORY_MS ? Math.min(this.retryAfterMs * 2, RETRY_MAX_MS) : RETRY_AFTER_MS;
    }
    if (input.target >= 0 || input.hidden || input.lowest < 0 || input.keepable !== true) return input.target;
    if (nowMs - this.pausedSinceMs < this.retryAfterMs) return input.target;
    this.retriedAtMs = nowMs;
    return input.lowest;
  }
}
