import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../store/port.ts';
import type { TokenCount } from './store.ts';
import { TokenUsage, dayOf } from './usage.ts';

/** A store whose token count writes fail while `down` is set, and that records what it got. */
function flakyStore(): { store: Store; written: TokenCount[][]; down: { value: boolean } } {
  const written: TokenCount[][] = [];
  const down = { value: false };
  const store = {
    async addTokenCounts(counts: readonly TokenCount[]) {
      if (down.value) throw new Error('db down');
      written.push([...counts]);
    },
  } as unknown as Store;
  return { store, written, down };
}

describe('TokenUsage', () => {
  const day = Date.UTC(2026, 10, 24, 12) / 1000;

  it('writes the counts of a batch once, sorted by project and day, and nothing when there is nothing', async () => {
    const { store, written } = flakyStore();
    const usage = new TokenUsage(store);
    usage.count('prj_b', day);
    usage.count('prj_a', day + 86_400);
    usage.count('prj_a', day);
    usage.count('prj_a', day);
    await usage.flush();
    await usage.flush();
    assert.deepEqual(written, [[
      { projectId: 'prj_a', day: '2026-11-24', count: 2 }, { projectId: 'prj_a', day: '2026-11-25', count: 1 },
      { projectId: 'prj_b', day: '2026-11-24', count: 1 },
    ]]);
  });

  it('keeps the counts of a failed write for the next one, and writes again once the store is back', async () => {
    const { store, written, down } = flakyStore();
    const usage = new TokenUsage(store);
    usage.count('prj_a', day);
    down.value = true;
    await assert.rejects(usage.flush(), /db down/);
    usage.count('prj_a', day);
    down.value = false;
    await usage.flush();
    assert.deepEqual(written, [[{ projectId: 'prj_a', day: dayOf(day), count: 2 }]]);
  });

  it('counts each token on its own UTC day, across midnight both ways and for a clock that goes back', async () => {
    const { store, written } = flakyStore();
    const usage = new TokenUsage(store);
    const midnight = Date.UTC(2026, 10, 25) / 1000;
    for (const at of [midnight - 1, midnight, midnight - 1, midnight + 86_399, midnight + 86_400, midnight - 86_400, midnight - 86_401]) {
      usage.count('prj_a', at);
    }
    await usage.flush();
    assert.deepEqual(written, [[
      { projectId: 'prj_a', day: '2026-11-23', count: 1 }, { projectId: 'prj_a', day: '2026-11-24', count: 3 },
      { projectId: 'prj_a', day: '2026-11-25', count: 2 }, { projectId: 'prj_a', day: '2026-11-26', count: 1 },
    ]]);
  });
});
