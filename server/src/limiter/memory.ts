import type { Clock, Limiter, LimitResult } from '../core/ports.ts';

const OK: LimitResult = Object.freeze({ ok: true, retryAfterSec: 0 });
const systemClock: Clock = { nowMs: () => Date.now() };
/** How often, at most, the windows that ended are dropped. */
const SWEEP_INTERVAL_MS = 1_000;
const MAX_COUNT = 0xffff_ffff;
const FIRST_SLOTS = 64;

/**
 * Keys one limit holds at most. Beyond it the windows that opened first are forgotten, a sixteenth
 * of them at once, and their keys start over: a flood of new keys (failed authentications from ever
 * new addresses) holds a bounded amount of memory, about 120 bytes a key, rather than growing for as
 * long as a window lasts (docs/decisions/operations.md).
 */
const MAX_KEYS_PER_LIMIT = 65_536;

export interface MemoryLimiterOptions {
  readonly maxKeysPerLimit?: number;
}

const refused = (endsAt: number, now: number): LimitResult =>
  ({ ok: false, retryAfterSec: Math.max(1, Math.ceil((endsAt - now) / 1000)) });

/**
 * The open windows of one limit: a slot per key in two typed arrays, no object per key. The map
 * keeps its keys in the order their windows opened (a window that opens again moves to the end), and
 * every window of a limit lasts as long, so the windows that ended, and the one to forget when the
 * limit holds too many keys, are always at its front.
 */
class Windows {
  private readonly slots = new Map<string, number>();
  private counts = new Uint32Array(FIRST_SLOTS);
  private ends = new Float64Array(FIRST_SLOTS);
  private readonly free: number[] = [];
  private issued = 0;
  private readonly windowMs: number;
  private readonly maxKeys: number;

  constructor(windowSec: number, maxKeys: number) {
    this.windowMs = windowSec * 1000;
    this.maxKeys = maxKeys;
  }

  hit(key: string, max: number, now: number): LimitResult {
    let slot = this.slots.get(key);
    if (slot === undefined || this.ends[slot]! <= now) {
      if (slot === undefined) {
        if (this.slots.size >= this.maxKeys) this.dropOldest(Math.max(1, this.maxKeys >> 4));
        slot = this.take();
      } else {
        this.slots.delete(key);
      }
      this.slots.set(key, slot);
      this.counts[slot] = 0;
      this.ends[slot] = now + this.windowMs;
    }
    const count = Math.min(this.counts[slot]! + 1, MAX_COUNT);
    this.counts[slot] = count;
    return count <= max ? OK : refused(this.ends[slot]!, now);
  }

  peek(key: string, max: number, now: number): LimitResult {
    const slot = this.slots.get(key);
    if (slot === undefined || this.ends[slot]! <= now || this.counts[slot]! < max) return OK;
    return refused(this.ends[slot]!, now);
  }

  /** Drops the windows that ended: they are at the front. */
  sweep(now: number): void {
    for (const [key, slot] of this.slots) {
      if (this.ends[slot]! > now) return;
      this.slots.delete(key);
      this.free.push(slot);
    }
  }

  /**
   * Several at once: the map's iteration steps over the entries deleted at its front until it is
   * rehashed, so one at a time would cost a walk over all of them for every new key.
   */
  private dropOldest(count: number): void {
    let left = count;
    for (const [key, slot] of this.slots) {
      this.slots.delete(key);
      this.free.push(slot);
      if (--left === 0) return;
    }
  }

  private take(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    if (this.issued === this.counts.length) {
      const counts = new Uint32Array(this.issued * 2);
      counts.set(this.counts);
      this.counts = counts;
      const ends = new Float64Array(this.issued * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    return this.issued++;
  }
}

/**
 * In-process fixed-window limiter (the embedded default); one process only. A window opens with a
 * key's first hit. Time comes from the injected clock, like every other service, so the windows
 * follow the same time as the grants.
 */
export function createMemoryLimiter(clock: Clock = systemClock, options: MemoryLimiterOptions = {}): Limiter {
  const maxKeys = options.maxKeysPerLimit ?? MAX_KEYS_PER_LIMIT;
  // by window length, then by max: a key is counted separately under each limit
  const limits = new Map<number, Map<number, Windows>>();
  let nextSweepAt = clock.nowMs() + SWEEP_INTERVAL_MS;

  const windowsOf = (max: number, windowSec: number, open: boolean): Windows | undefined => {
    let byMax = limits.get(windowSec);
    if (!byMax) {
      if (!open) return undefined;
      byMax = new Map();
      limits.set(windowSec, byMax);
    }
    let windows = byMax.get(max);
    if (!windows && open) {
      windows = new Windows(windowSec, maxKeys);
      byMax.set(max, windows);
    }
    return windows;
  };
  const sweep = (now: number): void => {
    if (now < nextSweepAt) return;
    nextSweepAt = now + SWEEP_INTERVAL_MS;
    for (const byMax of limits.values()) for (const windows of byMax.values()) windows.sweep(now);
  };

  return {
    async hit(key, max, windowSec) {
      const now = clock.nowMs();
      sweep(now);
      return windowsOf(max, windowSec, true)!.hit(key, max, now);
    },
    async peek(key, max, windowSec) {
      return windowsOf(max, windowSec, false)?.peek(key, max, clock.nowMs()) ?? OK;
    },
  };
}
