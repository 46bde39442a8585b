import type { Limiter, LimitResult } from '../../ports.ts';

const OK: LimitResult = Object.freeze({ ok: true, retryAfterSec: 0 });

/** One key's window: opened by its first hit, counting every hit until `endsAt` (ms). */
interface Window {
  count: number;
  readonly endsAt: number;
}

/**
 * In-process fixed-window limiter (the embedded default); one process only.
 *
 * No timer per key: within one table (one max and window length) windows are kept in the order
 * they opened, which is the order they end, so ended ones are dropped from the front as hits come
 * in. A flood of new addresses then costs one small entry each for as long as its window lasts.
 */
export function createMemoryLimiter(): Limiter {
  // the same key counts separately under different limits: one table per window length and max
  const tables = new Map<number, Map<number, Map<string, Window>>>();
  const tableFor = (max: number, windowSec: number): Map<string, Window> => {
    let byMax = tables.get(windowSec);
    if (!byMax) {
      byMax = new Map();
      tables.set(windowSec, byMax);
    }
    let table = byMax.get(max);
    if (!table) {
      table = new Map();
      byMax.set(max, table);
    }
    return table;
  };
  const dropEnded = (table: Map<string, Window>, now: number): void => {
    for (const [key, window] of table) {
      if (window.endsAt > now) break;
      table.delete(key);
    }
  };
  const denied = (window: Window, now: number): LimitResult =>
    ({ ok: false, retryAfterSec: Math.max(1, Math.ceil((window.endsAt - now) / 1000)) });

  return {
    async hit(key, max, windowSec) {
      const now = Date.now();
      const table = tableFor(max, windowSec);
      dropEnded(table, now);
      let window = table.get(key);
      if (window === undefined || window.endsAt <= now) {
        // delete first, so the new window goes to the back of the table's order
        table.delete(key);
        window = { count: 0, endsAt: now + windowSec * 1000 };
        table.set(key, window);
      }
      window.count += 1;
      return window.count <= max ? OK : denied(window, now);
    },
    async peek(key, max, windowSec) {
      const now = Date.now();
      const window = tableFor(max, windowSec).get(key);
      if (window === undefined || window.endsAt <= now || window.count < max) return OK;
      return denied(window, now);
    },
  };
}
