import type { Migration } from '../sql/dialect.ts';

/**
 * The media nodes of the processes of one data directory (`RTC_MEDIA_WORKERS`, sqlite.ts): what a
 * cluster keeps in Redis, kept in the store's file. Times in milliseconds since the epoch.
 */
export const MEDIA_NODE_DIRECTORY: Migration = {
  only: 'sqlite',
  sql: () => `CREATE TABLE placement_nodes (
     node_id TEXT PRIMARY KEY,
     host TEXT NOT NULL,
     port INTEGER NOT NULL,
     live_until INTEGER NOT NULL,
     sessions INTEGER NOT NULL
   );
   CREATE TABLE placement_users (
     node_id TEXT NOT NULL,
     user_key TEXT NOT NULL,
     PRIMARY KEY (node_id, user_key)
   );
   CREATE TABLE placement_reservations (
     node_id TEXT NOT NULL,
     user_key TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     PRIMARY KEY (node_id, user_key)
   );
   CREATE TABLE placement_rooms (
     room_key TEXT NOT NULL,
     node_id TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     PRIMARY KEY (room_key, node_id)
   );`,
};
