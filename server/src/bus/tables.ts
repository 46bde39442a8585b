import type { Migration } from '../sql/dialect.ts';

/** Platform events shared by the processes of one data directory (sqlite.ts); a cluster's go through Redis. */
export const BUS_EVENTS: Migration = {
  only: 'sqlite',
  sql: () => `CREATE TABLE bus_events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     origin TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );`,
};
