import type pg from 'pg';
import { pgQueries } from '../sql/postgres.ts';
import type { KeyRingStore } from './store.ts';

/** The key ring kept in the PostgreSQL store (one row), on its pool. */
export function postgresKeyRingStore(pool: pg.Pool): KeyRingStore {
  const { one, changed } = pgQueries(pool);
  return {
    async readKeyRing() {
      return one<{ document: string; version: number }>('SELECT document, version FROM key_ring WHERE id = $1', [1]);
    },
    // of processes starting together on an empty database, the first insert wins; the others wait
    // for its commit, insert nothing and read the winner's ring
    async insertKeyRingIfAbsent(document) {
      return await changed(`INSERT INTO key_ring (id, document, version) VALUES (1, $1, 1) ON CONFLICT (id) DO NOTHING`,
        [document]) === 1;
    },
    // compare-and-swap: of two concurrent replacements the second waits for the first's row lock,
    // then finds the version moved on and changes nothing
    async replaceKeyRing(document, expectedVersion) {
      return await changed(`UPDATE key_ring SET document = $1, version = version + 1 WHERE id = 1 AND version = $2`,
        [document, expectedVersion]) === 1;
    },
  };
}
