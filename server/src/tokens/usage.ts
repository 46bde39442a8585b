/**
 * Tokens issued per project and UTC day, for the console's usage view (docs/console.md, "Usage"; billing/usage.ts).
 * Issuing a token only counts in memory; the counts go to the store in one batch every few
 * seconds and when the process stops, so the token API's hot path never waits on the database.
 */
import type { TokenCounter } from '../core/ports.ts';
import type { TokenCount, TokenCountStore } from './store.ts';

export function dayOf(epochSec: number): string {
  return new Date(epochSec * 1000).toISOString().slice(0, 10);
}

const DAY_SECONDS = 86_400;

export class TokenUsage implements TokenCounter {
  private readonly store: TokenCountStore;
  private pending = new Map<string, TokenCount>();
  private flushing: Promise<void> = Promise.resolve();
  // the UTC day of the last count and its first second: the hot path formats a date once a day
  private day = '';
  private dayStartSec = Number.NaN;

  constructor(store: TokenCountStore) {
    this.store = store;
  }

  /** One token issued for a project at `issuedAtSec`. */
  count(projectId: string, issuedAtSec: number): void {
    if (!(issuedAtSec >= this.dayStartSec && issuedAtSec < this.dayStartSec + DAY_SECONDS)) {
      this.dayStartSec = Math.floor(issuedAtSec / DAY_SECONDS) * DAY_SECONDS;
      this.day = dayOf(issuedAtSec);
    }
    const day = this.day;
    const key = `${projectId} ${day}`;
    const held = this.pending.get(key);
    this.pending.set(key, { projectId, day, count: (held?.count ?? 0) + 1 });
  }

  /** Writes what was counted since the last flush; on failure the counts wait for the next one. */
  flush(): Promise<void> {
    // a failed flush must not stop the next ones: each starts after the previous, whatever its outcome
    this.flushing = this.flushing.catch(() => undefined).then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        // in one order on every node, so that two nodes adding to the same rows never deadlock
        const rows = [...batch.values()].sort((a, b) => (a.projectId === b.projectId ? cmp(a.day, b.day) : cmp(a.projectId, b.projectId)));
        await this.store.addTokenCounts(rows);
      } catch (err) {
        for (const [key, c] of batch) {
          const held = this.pending.get(key);
          this.pending.set(key, { ...c, count: c.count + (held?.count ?? 0) });
        }
        throw err;
      }
    });
    return this.flushing;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
