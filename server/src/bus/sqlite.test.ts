import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { BusEvent, EventBus } from '../core/ports.ts';
import type { Store } from '../store/port.ts';
import { createSqliteStore } from '../store/sqlite.ts';
import { createSqliteBus } from './sqlite.ts';

const failOnError = (err: unknown): never => {
  throw err;
};

/** Resolves with the first `count` events the bus delivers. */
function received(bus: EventBus, count: number): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  return new Promise((resolve) => {
    bus.subscribe((event) => {
      events.push(event);
      if (events.length === count) resolve(events);
    });
  });
}

describe('SQLite event bus (processes of one data directory)', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'rtc-bus-')), 'rtc.sqlite');
  const store: Store = createSqliteStore(path);
  const a = createSqliteBus(path, { pollMs: 5, onHandlerError: failOnError, onPollError: failOnError });
  const b = createSqliteBus(path, { pollMs: 5, onHandlerError: failOnError, onPollError: failOnError });
  after(async () => {
    await Promise.all([a.close(), b.close()]);
    await store.close();
  });

  it('delivers every event once to each bus, whichever bus published it, in each publisher\'s order', async () => {
    const events: BusEvent[] = [
      { type: 'grant.revoked', grantId: 'g1', projectId: 'prj_1', expiresAt: 2_000_000_000 },
      { type: 'credential.changed', appId: 'app_1' },
      { type: 'credential.changed', appId: 'app_2' },
      { type: 'grant.revoked', grantId: 'g2', projectId: 'prj_1', expiresAt: 2_000_000_000 },
    ];
    const onA = received(a, 5);
    const onB = received(b, 5);
    await a.publish(events[0]!);
    await b.publish(events[1]!);
    await a.publish(events[2]!);
    await b.publish(events[3]!);
    // a last event from each side: had any event arrived twice, it would be among the first five
    const last: BusEvent = { type: 'credential.changed', appId: 'app_last' };
    await a.publish(last);
    const key = (e: BusEvent): string => JSON.stringify(e);
    for (const got of [await onA, await onB]) {
      assert.deepEqual(got.map(key).sort(), [...events, last].map(key).sort());
      const published: string[] = [events[0]!, events[2]!, last].map(key);
      assert.deepEqual(got.map(key).filter((k) => published.includes(k)), published, "a's events in a's order");
    }
  });
});
