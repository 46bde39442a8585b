import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { sqliteBillingStore } from '../billing/sqlite.ts';
import { sqliteCustomerStore } from '../customers/sqlite.ts';
import { sqliteKeyRingStore } from '../keys/sqlite.ts';
import { sqliteRoomStore } from '../rooms/sqlite.ts';
import { SQLITE_INVITATION_MIGRATION, sqliteTokenStore } from '../tokens/sqlite.ts';
import type { Store } from './port.ts';
import { SQLITE_WEBHOOK_MIGRATION, sqliteWebhookStore } from '../webhooks/sqlite.ts';
import { SQLITE_SESSION_MIGRATION, SQLITE_SESSION_USAGE_MIGRATION, sqliteSessionStore } from '../sessions/sqlite.ts';

// The schema history of the one database file every module's adapter shares (each module's queries
// live in its own sqlite.ts). Each entry moves the schema one version forward; PRAGMA user_version
// records how far a file is.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     password_hash TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     family_id TEXT NOT NULL,
     access_hash TEXT NOT NULL UNIQUE,
     access_expires_at INTEGER NOT NULL,
     refresh_hash TEXT NOT NULL UNIQUE,
     refresh_expires_at INTEGER NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active','rotated','ended')),
     created_at INTEGER NOT NULL
   );
   CREATE INDEX sessions_family ON sessions(family_id);
   CREATE TABLE projects (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     name TEXT NOT NULL,
     console_app_id TEXT NOT NULL UNIQUE,
     archived_at INTEGER,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX projects_account ON projects(account_id, created_at);
   CREATE TABLE credentials (
     app_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     name TEXT NOT NULL,
     secret_hash TEXT NOT NULL,
     scope_publisher INTEGER NOT NULL,
     scope_subscriber INTEGER NOT NULL,
     ip_allowlist TEXT NOT NULL,
     max_ttl_seconds INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     rotated_at INTEGER,
     revoked_at INTEGER
   );
   CREATE INDEX credentials_project ON credentials(project_id, created_at);
   CREATE TABLE revocations (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX revocations_expiry ON revocations(expires_at);`,
  // billing: quotes are immutable documents; at most one pending subscription request per project
  `CREATE TABLE quotes (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     price_list_version TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     document TEXT NOT NULL
   );
   CREATE INDEX quotes_account ON quotes(account_id);
   CREATE TABLE subscription_requests (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     project_id TEXT NOT NULL REFERENCES projects(id),
     plan TEXT NOT NULL,
     quote_id TEXT REFERENCES quotes(id),
     note TEXT,
     status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','cancelled')),
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     decided_at INTEGER,
     reason TEXT
   );
   CREATE INDEX subscription_requests_account ON subscription_requests(account_id);
   CREATE INDEX subscription_requests_project ON subscription_requests(project_id);
   CREATE UNIQUE INDEX subscription_requests_one_pending ON subscription_requests(project_id) WHERE status = 'pending';`,
  // platform events shared by the processes of one data directory (bus/sqlite.ts)
  `CREATE TABLE bus_events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     origin TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );`,
  // archive cut-offs: a project's tokens issued up to its archive are refused (docs/decisions.md)
  `CREATE TABLE project_cutoffs (
     project_id TEXT PRIMARY KEY,
     cut_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX project_cutoffs_expiry ON project_cutoffs(expires_at);`,
  // the key ring document of a deployment that keeps it in its store (docs/operations/configuration.md, "Keys"): one row
  `CREATE TABLE key_ring (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     document TEXT NOT NULL,
     version INTEGER NOT NULL
   );`,
  // participants joined on the media nodes, and when each node was last seen (docs/reference/room-api.md)
  `CREATE TABLE live_participants (
     participant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     role TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room INTEGER NOT NULL,
     joined_at INTEGER NOT NULL,
     room_started_at INTEGER NOT NULL,
     media_node TEXT NOT NULL,
     grants TEXT NOT NULL
   );
   CREATE INDEX live_participants_project ON live_participants(project_id, room_id);
   CREATE INDEX live_participants_node ON live_participants(media_node);
   CREATE TABLE media_node_heartbeats (
     node_id TEXT PRIMARY KEY,
     seen_at INTEGER NOT NULL
   );`,
  // webhook endpoints and the outbox of their deliveries (docs/reference/webhooks.md)
  SQLITE_WEBHOOK_MIGRATION,
  // tokens issued per project and UTC day (docs/console.md, "Usage")
  `CREATE TABLE token_counts (
     project_id TEXT NOT NULL,
     day TEXT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (project_id, day)
   );`,
  // cut-offs of removed participants and ended rooms (docs/reference/room-api.md); user_id '' stands for every user
  `CREATE TABLE room_cutoffs (
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     cut_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     PRIMARY KEY (project_id, room_id, user_id)
   );
   CREATE INDEX room_cutoffs_expiry ON room_cutoffs(expires_at);`,
  // metadata and attributes of live participants, and the settings of rooms created or configured through the
  // room service API (docs/reference/room-api.md, "Metadata and attributes", "Room settings")
  `ALTER TABLE live_participants ADD COLUMN metadata TEXT NOT NULL DEFAULT '';
   ALTER TABLE live_participants ADD COLUMN attributes TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE room_settings (
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     metadata TEXT NOT NULL,
     max_participants INTEGER NOT NULL,
     empty_timeout INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     emptied_at INTEGER,
     PRIMARY KEY (project_id, room_id)
   );`,
  // every media session from join to leave, for the session history and participant minutes (docs/console.md, "Session history")
  SQLITE_SESSION_MIGRATION,
  // what each live participant publishes (docs/reference/room-api.md, "Published streams"): JSON, as its media node records it
  `ALTER TABLE live_participants ADD COLUMN streams TEXT NOT NULL DEFAULT '[]';`,
  // the usage kind of each session, for the cost of participant minutes (docs/console.md, "Usage")
  SQLITE_SESSION_USAGE_MIGRATION,
  // each live participant's media quality (docs/reference/room-api.md, "Quality"): JSON, as its media node measures it; NULL until then
  `ALTER TABLE live_participants ADD COLUMN quality TEXT;`,
  // share-link invitations already redeemed, until they expire (docs/console.md, "Share links")
  SQLITE_INVITATION_MIGRATION,
  // when a stored room first had somebody in it: rooms created ahead that nobody joined yet are capped per
  // project (docs/reference/room-api.md, "Limits"); a room stored earlier counts as started unless it never emptied since its creation
  `ALTER TABLE room_settings ADD COLUMN started_at INTEGER;
   UPDATE room_settings SET started_at = created_at WHERE emptied_at IS NULL OR emptied_at <> created_at;`,
  // permissions set through the room service API on the grants a participant used, until each expires
  // (docs/reference/room-api.md, "Changing permissions"): a reconnection with one of them gets them back
  `CREATE TABLE grant_permissions (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX grant_permissions_expiry ON grant_permissions(expires_at);`,
  // when the room service made each change (ms): of a session's permissions and those stored on a
  // grant it renews with, the newest win (docs/decisions.md, "The newest permission change wins")
  'ALTER TABLE grant_permissions ADD COLUMN set_at INTEGER NOT NULL DEFAULT 0;',
];

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
