import type { Clock, Limiter, LimitResult } from '../core/ports.ts';

const OK: LimitResult = Object.freeze({ ok: true, retryAfterSec: 0 });
const systemClock: Clock = { nowMs: () => Date.now() };
/** How often, at most, windows that ended are dropped (keeps memory bounded without a timer per key). */
const SWEEP_INTERVAL_MS = 60_000;

interface Window {
  count: number;
  readonly endsAt: number;
}

/**
 * In-process fixed-window limiter (the embedded default); one process only. Time comes from the
 * injected clock, like every other service, so the windows follow the same time as the grants.
 */
export function createMemoryLimiter(clock: Clock = systemClock): Limiter {
  const windows = new Map<string, Window>();
  let nextSweepAt = clock.nowMs() + SWEEP_INTERVAL_MS;

  const sweep = (now: number): void => {
    if (now < nextSweepAt) return;
    nextSweepAt = now + SWEEP_INTERVAL_MS;
    for (const [id, window] of windows) if (window.endsAt <= now) windows.delete(id);
  };
  const refused = (window: Window, now: number): LimitResult =>
    ({ ok: false, retryAfterSec: Math.max(1, Math.ceil((window.endsAt - now) / 1000)) });

  return {
    async hit(key, max, windowSec) {
      const now = clock.nowMs();
      sweep(now);
      // a key is counted separately under each limit
      const id = `${max}/${windowSec}:${key}`;
      let window = windows.get(id);
      if (!window || window.endsAt <= now) {
        window = { count: 0, endsAt: now + windowSec * 1000 };
        windows.set(id, window);
      }
      window.count += 1;
      return window.count <= max ? OK : refused(window, now);
    },
    async peek(key, max, windowSec) {
      const now = clock.nowMs();
      const open = windows.get(`${max}/${windowSec}:${key}`);
      if (!open || open.endsAt <= now || open.count < max) return OK;
      return refused(open, now);
    },
  };
}
