import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import type { BusEvent, EventBus } from '../core/ports.ts';
import { everyShared } from '../core/shared-interval.ts';
import { createMemoryBus } from './memory.ts';

export interface SqliteBusOptions {
  /** How often the table is read for other processes' events. */
  readonly pollMs?: number;
  /** Events older than this are deleted (every process has long read them). */
  readonly retainMs?: number;
  readonly onHandlerError: (err: unknown) => void;
  /** Told when a poll fails; the next one retries from the same position. */
  readonly onPollError?: (err: unknown) => void;
}

interface EventRow { seq: number; origin: string; body: string }

const DEFAULT_POLL_MS = 50;
const DEFAULT_RETAIN_MS = 10 * 60_000;
const BATCH = 1000;

/**
 * The event bus of the embedded deployment when its roles run as several processes on one data
 * directory: an event is delivered at once to this process's subscribers and appended to the
 * `bus_events` table of the store's file, which every other process reads every `pollMs`. Each
 * process starts reading at the end of the table: what happened before it started is in the store
 * itself (the revocation list every role loads or checks). See docs/operations/configuration.md.
 */
export function createSqliteBus(path: string, options: SqliteBusOptions): EventBus {
  const db = new Database(path);
  db.pragma('busy_timeout = 5000');
  const origin = randomBytes(9).toString('base64url');
  const local = createMemoryBus(options.onHandlerError);
  const insert = db.prepare('INSERT INTO bus_events (origin, body, created_at) VALUES (?, ?, ?)');
  const after = db.prepare<[number, number], EventRow>('SELECT seq, origin, body FROM bus_events WHERE seq > ? ORDER BY seq LIMIT ?');
  const purge = db.prepare('DELETE FROM bus_events WHERE created_at < ?');
  // changes when another connection to the file commits (SQLite's PRAGMA data_version): a poll with
  // nothing new costs that read instead of a query
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let readAtVersion: unknown;
  let position = (db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM bus_events').get() as { seq: number }).seq;
  let lastPurge = Date.now();
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;

  const poll = (): void => {
    try {
      const version = dataVersion.get();
      if (version !== readAtVersion) readNew();
      readAtVersion = version;
      if (Date.now() - lastPurge > retainMs / 10) {
        lastPurge = Date.now();
        purge.run(lastPurge - retainMs);
      }
    } catch (err) {
      options.onPollError?.(err);
    }
  };
  const readNew = (): void => {
    for (;;) {
      const rows = after.all(position, BATCH);
      for (const row of rows) {
        position = row.seq;
        if (row.origin !== origin) void local.publish(JSON.parse(row.body) as BusEvent);
      }
      if (rows.length < BATCH) break;
    }
  };
  // on the process's shared timer of its period: the poll wakes the loop with the media ticks and
  // the event loop sampler, not at a phase of its own (core/shared-interval.ts)
  const stopPolling = everyShared(options.pollMs ?? DEFAULT_POLL_MS, poll);

  return {
    reach: 'deployment',
    async publish(event) {
      insert.run(origin, JSON.stringify(event), Date.now());
      await local.publish(event);
    },
    subscribe: (handler) => local.subscribe(handler),
    // events stay in the file for the retention time: a poll that failed catches up on the next one
    onResync: () => () => {},
    async close() {
      stopPolling();
      await local.close();
      db.close();
    },
  };
}
