import type { Migration } from '../sql/dialect.ts';

/**
 * The key ring document of a deployment that keeps it in its store (docs/operations/configuration.md,
 * "Keys"): one row, the keys.json document and its version.
 */
export const KEY_RING: Migration = {
  sql: (d) => `CREATE TABLE key_ring (
     id ${d.smallint} PRIMARY KEY CHECK (id = 1),
     document TEXT NOT NULL,
     version ${d.bigint} NOT NULL
   );`,
};
