import type Database from 'better-sqlite3';
import type { KeyRingStore } from './store.ts';

/** The key ring kept in the SQLite store (one row), on its connection. */
export function sqliteKeyRingStore(db: Database.Database): KeyRingStore {
  const q = {
    readKeyRing: db.prepare<[], { document: string; version: number }>('SELECT document, version FROM key_ring WHERE id = 1'),
    insertKeyRing: db.prepare<[string]>('INSERT INTO key_ring (id, document, version) VALUES (1, ?, 1) ON CONFLICT (id) DO NOTHING'),
    replaceKeyRing: db.prepare<[string, number]>('UPDATE key_ring SET document = ?, version = version + 1 WHERE id = 1 AND version = ?'),
  };

  return {
    async readKeyRing() { return q.readKeyRing.get(); },
    async insertKeyRingIfAbsent(document) { return q.insertKeyRing.run(document).changes === 1; },
    async replaceKeyRing(document, expectedVersion) { return q.replaceKeyRing.run(document, expectedVersion).changes === 1; },
  };
}
