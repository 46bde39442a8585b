import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { sqliteBillingStore } from '../billing/sqlite.ts';
import { sqliteCustomerStore } from '../customers/sqlite.ts';
import { sqliteKeyRingStore } from '../keys/sqlite.ts';
import { sqliteRoomStore } from '../rooms/sqlite.ts';
import { sqliteTokenStore } from '../tokens/sqlite.ts';
import type { Store } from './port.ts';
import { sqliteWebhookStore } from '../webhooks/sqlite.ts';
import { sqliteSessionStore } from '../sessions/sqlite.ts';
import { migrationsFor } from './migrations.ts';

// The schema history (migrations.ts) as this file's SQL; PRAGMA user_version records how far a file is.
const MIGRATIONS = migrationsFor('sqlite');

/** Opens (and migrates) the embedded store: one SQLite file in WAL mode. */
export function createSqliteStore(path: string): Store {
  // the file holds password and secret hashes: a new one, and a new data directory, are their
  // owner's only (SQLite gives -wal/-shm the same mode)
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
  const db = new Database(path);
  // first, so that processes opening one file together wait for each other's locks instead of failing
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db);
  const ping = db.prepare('SELECT 1');
  return {
    ...sqliteKeyRingStore(db),
    ...sqliteCustomerStore(db),
    ...sqliteTokenStore(db),
    ...sqliteRoomStore(db),
    ...sqliteBillingStore(db),
    ...sqliteWebhookStore(db),
    ...sqliteSessionStore(db),
    async ping() { ping.get(); },
    async close() { db.close(); },
  };
}

/**
 * Brings the file to the newest schema. The version is read and every missing step applied inside
 * one write transaction taken up front (BEGIN IMMEDIATE), so processes that start together on one
 * file migrate it once: the others wait for the lock, then find nothing left to do.
 */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new Error(`the data file has schema version ${current}, newer than this build knows (${MIGRATIONS.length})`);
    }
    for (let version = current; version < MIGRATIONS.length; version++) db.exec(MIGRATIONS[version]!);
    if (current < MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
