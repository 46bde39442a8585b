/**
 * A subscriber's bounds on the video it receives (`rtc_video`, docs/protocol/media.md, "A client,
 * step by step"): the ones the application sets, the ones adaptive video measures, and sending
 * them, each change once, within a budget of the control messages the server allows.
 */
import { MAX_SIMULCAST_LAYERS, MAX_VIDEO_DIMENSION, type RtcVideoPreference } from '@rtc/protocol';

/**
 * Bounds on the video received of one stream: the server forwards the largest simulcast layer
 * within them that fits the downlink. A missing or `null` field is no bound; a `maxWidth` or
 * `maxHeight` of 0 asks for no video at all (a hidden tile).
 *
 * @example
 * ```ts
 * remote.setVideoBounds({ maxWidth: 640, maxHeight: 360 }); // a grid tile
 * remote.setVideoBounds({ maxLayer: 0 });                     // the smallest layer only
 * remote.setVideoBounds({ maxWidth: 0 });                     // hidden: no video
 * remote.setVideoBounds(null);                                // no bound again
 * ```
 */
export interface VideoBounds {
  /** Pixels, 0 to 16384. */
  readonly maxWidth?: number | null;
  /** Pixels, 0 to 16384. */
  readonly maxHeight?: number | null;
  /** 0 (the smallest layer) to 2. */
  readonly maxLayer?: number | null;
}

/** Bounds with every field decided; `null` is no bound. */
export interface ResolvedBounds {
  readonly maxWidth: number | null;
  readonly maxHeight: number | null;
  readonly maxLayer: number | null;
}

export const NO_BOUNDS: ResolvedBounds = Object.freeze({ maxWidth: null, maxHeight: null, maxLayer: null });

/** Checks bounds given by the application; throws TypeError for a field out of range. */
export function resolveBounds(bounds: VideoBounds | null | undefined): ResolvedBounds {
  if (bounds === null || bounds === undefined) return NO_BOUNDS;
  if (typeof bounds !== 'object') throw new TypeError('video bounds must be an object or null');
  return {
    maxWidth: field(bounds.maxWidth, MAX_VIDEO_DIMENSION, 'maxWidth'),
    maxHeight: field(bounds.maxHeight, MAX_VIDEO_DIMENSION, 'maxHeight'),
    maxLayer: field(bounds.maxLayer, MAX_SIMULCAST_LAYERS - 1, 'maxLayer'),
  };
}

function field(value: number | null | undefined, max: number, name: string): number | null {
  if (value === null || value === undefined) return null;
  if (!Number.isInteger(value) || value < 0 || value > max) throw new TypeError(`${name} must be an integer from 0 to ${max}, or null`);
  return value;
}

/** The tighter of two bounds, field by field: what both the application and adaptive video allow. */
export function tighterBounds(a: ResolvedBounds, b: ResolvedBounds): ResolvedBounds {
  const min = (x: number | null, y: number | null): number | null => (x === null ? y : y === null ? x : Math.min(x, y));
  return { maxWidth: min(a.maxWidth, b.maxWidth), maxHeight: min(a.maxHeight, b.maxHeight), maxLayer: min(a.maxLayer, b.maxLayer) };
}

export function sameBounds(a: ResolvedBounds, b: ResolvedBounds): boolean {
  return a.maxWidth === b.maxWidth && a.maxHeight === b.maxHeight && a.maxLayer === b.maxLayer;
}

/** Timers, injectable for tests. */
export interface Scheduler {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * `rtc_video` messages a connection may take: docs/protocol/media.md, section 6 allows 40 control
 * messages in a burst and 20 per second; bounds take half, so that publishing, offers and pings
 * made at the same moment (a reconnection sends them all at once) always fit.
 */
export const BOUNDS_BURST = 20;
export const BOUNDS_PER_SECOND = 10;

/**
 * The bounds of every video stream, by stream id, and what the current connection was told. Each
 * change is sent once (the tighter of the application's and adaptive video's bounds); a new
 * connection is told every bound again.
 */
export class VideoPreferences {
  private readonly scheduler: Scheduler;
  private readonly explicit = new Map<number, ResolvedBounds>();
  private readonly adaptive = new Map<number, ResolvedBounds>();
  /** What the current connection was told, by stream id (no entry: no bound). */
  private readonly sent = new Map<number, ResolvedBounds>();
  private send: ((message: RtcVideoPreference) => boolean) | undefined;
  private tokens = BOUNDS_BURST;
  private tokensAt: number;
  private timer: unknown;

  constructor(scheduler: Scheduler = realScheduler) {
    this.scheduler = scheduler;
    this.tokensAt = scheduler.now();
  }

  /** The application's bounds on a stream (undefined when it set none). */
  explicitOf(streamId: number): ResolvedBounds | undefined {
    return this.explicit.get(streamId);
  }

  /** What the server is asked for a stream: the tighter of the application's and adaptive video's bounds. */
  effective(streamId: number): ResolvedBounds {
    return tighterBounds(this.explicit.get(streamId) ?? NO_BOUNDS, this.adaptive.get(streamId) ?? NO_BOUNDS);
  }

  /** The application's bounds (`NO_BOUNDS` clears them). */
  setExplicit(streamId: number, bounds: ResolvedBounds): void {
    if (sameBounds(bounds, NO_BOUNDS)) this.explicit.delete(streamId);
    else this.explicit.set(streamId, bounds);
    this.flush();
  }

  /** Adaptive video's bounds, from the elements showing the stream; undefined when none does. */
  setAdaptive(streamId: number, bounds: ResolvedBounds | undefined): void {
    if (bounds === undefined) this.adaptive.delete(streamId);
    else this.adaptive.set(streamId, bounds);
    this.flush();
  }

  /** A new connection: it knows no bound; `send` returns false when the message could not go out. */
  connected(send: (message: RtcVideoPreference) => boolean): void {
    this.send = send;
    this.sent.clear();
    this.flush();
  }

  /** The connection is gone: nothing is sent until the next one. */
  disconnected(): void {
    this.send = undefined;
    this.sent.clear();
    this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sends what changed, while the budget lasts; the rest when it refills. */
  private flush(): void {
    if (!this.send || this.timer !== undefined) return;
    const now = this.scheduler.now();
    this.tokens = Math.min(BOUNDS_BURST, this.tokens + ((now - this.tokensAt) / 1000) * BOUNDS_PER_SECOND);
    this.tokensAt = now;
    for (const streamId of new Set([...this.explicit.keys(), ...this.adaptive.keys(), ...this.sent.keys()])) {
      const want = this.effective(streamId);
      if (sameBounds(want, this.sent.get(streamId) ?? NO_BOUNDS)) continue;
      if (this.tokens < 1) {
        this.timer = this.scheduler.setTimeout(() => {
          this.timer = undefined;
          this.flush();
        }, Math.ceil(((1 - this.tokens) / BOUNDS_PER_SECOND) * 1000));
        return;
      }
      const message: RtcVideoPreference = {
        type: 'rtc_video', stream_id: streamId, max_width: want.maxWidth, max_height: want.maxHeight, max_layer: want.maxLayer,
      };
      if (!this.send(message)) return;
      this.tokens -= 1;
      if (sameBounds(want, NO_BOUNDS)) this.sent.delete(streamId);
      else this.sent.set(streamId, want);
    }
  }
}
