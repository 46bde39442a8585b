import pg from 'pg';
import { ApiError } from '../core/errors.ts';
import { isConnectionError } from '../sql/postgres.ts';
import { postgresBillingStore } from '../billing/postgres.ts';
import { postgresCustomerStore } from '../customers/postgres.ts';
import { postgresKeyRingStore } from '../keys/postgres.ts';
import { postgresRoomStore } from '../rooms/postgres.ts';
import { POSTGRES_INVITATION_MIGRATION, postgresTokenStore } from '../tokens/postgres.ts';
import type { Store } from './port.ts';
import { POSTGRES_WEBHOOK_MIGRATION, postgresWebhookStore } from '../webhooks/postgres.ts';
import { POSTGRES_SESSION_MIGRATION, POSTGRES_SESSION_USAGE_MIGRATION, postgresSessionStore } from '../sessions/postgres.ts';

/**
 * The schema history of the one database every module's adapter shares (each module's queries live in
 * its own postgres.ts). Each entry moves the schema one version forward; `schema_migrations` records the versions applied.
 * The tables are those of the SQLite store (sqlite.ts) with PostgreSQL types: timestamps are BIGINT
 * (milliseconds do not fit an INTEGER), scopes BOOLEAN, the IP allow-list JSONB. Quote documents stay
 * TEXT: they are kept exactly as shown to the customer (docs/billing.md), which JSONB would not do.
 * `seq` gives the insertion order that SQLite's rowid gives there: lists and cursors follow it.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     password_hash TEXT NOT NULL,
     created_at BIGINT NOT NULL
   );
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     family_id TEXT NOT NULL,
     access_hash TEXT NOT NULL UNIQUE,
     access_expires_at BIGINT NOT NULL,
     refresh_hash TEXT NOT NULL UNIQUE,
     refresh_expires_at BIGINT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active','rotated','ended')),
     created_at BIGINT NOT NULL
   );
   CREATE INDEX sessions_family ON sessions(family_id);
   CREATE TABLE projects (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     name TEXT NOT NULL,
     console_app_id TEXT NOT NULL UNIQUE,
     archived_at BIGINT,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX projects_account ON projects(account_id, created_at, seq);
   CREATE TABLE credentials (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     app_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     name TEXT NOT NULL,
     secret_hash TEXT NOT NULL,
     scope_publisher BOOLEAN NOT NULL,
     scope_subscriber BOOLEAN NOT NULL,
     ip_allowlist JSONB NOT NULL,
     max_ttl_seconds BIGINT NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     rotated_at BIGINT,
     revoked_at BIGINT
   );
   CREATE INDEX credentials_project ON credentials(project_id, created_at, seq);
   CREATE TABLE revocations (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX revocations_expiry ON revocations(expires_at);`,
  // billing: quotes are immutable documents; at most one pending subscription request per project
  `CREATE TABLE quotes (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     price_list_version TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     document TEXT NOT NULL
   );
   CREATE INDEX quotes_account ON quotes(account_id, seq);
   CREATE TABLE subscription_requests (
     seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     project_id TEXT NOT NULL REFERENCES projects(id),
     plan TEXT NOT NULL,
     quote_id TEXT REFERENCES quotes(id),
     note TEXT,
     status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','cancelled')),
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     decided_at BIGINT,
     reason TEXT
   );
   CREATE INDEX subscription_requests_account ON subscription_requests(account_id);
   CREATE INDEX subscription_requests_project ON subscription_requests(project_id);
   CREATE UNIQUE INDEX subscription_requests_one_pending ON subscription_requests(project_id) WHERE status = 'pending';`,
  // archive cut-offs: a project's tokens issued up to its archive are refused (docs/decisions.md)
  `CREATE TABLE project_cutoffs (
     project_id TEXT PRIMARY KEY,
     cut_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX project_cutoffs_expiry ON project_cutoffs(expires_at);`,
  // the cluster's key ring (docs/operations/configuration.md, "Keys"): one row, the keys.json document and its version
  `CREATE TABLE key_ring (
     id SMALLINT PRIMARY KEY CHECK (id = 1),
     document TEXT NOT NULL,
     version BIGINT NOT NULL
   );`,
  // participants joined on the media nodes, and when each node was last seen (docs/reference/room-api.md)
  `CREATE TABLE live_participants (
     seq BIGSERIAL,
     participant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     role TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room BOOLEAN NOT NULL,
     joined_at BIGINT NOT NULL,
     room_started_at BIGINT NOT NULL,
     media_node TEXT NOT NULL,
     grants TEXT NOT NULL
   );
   CREATE INDEX live_participants_project ON live_participants(project_id, room_id);
   CREATE INDEX live_participants_node ON live_participants(media_node);
   CREATE TABLE media_node_heartbeats (
     node_id TEXT PRIMARY KEY,
     seen_at BIGINT NOT NULL
   );`,
  // webhook endpoints and the outbox of their deliveries (docs/reference/webhooks.md)
  POSTGRES_WEBHOOK_MIGRATION,
  // tokens issued per project and UTC day (docs/console.md, "Usage")
  `CREATE TABLE token_counts (
     project_id TEXT NOT NULL,
     day TEXT NOT NULL,
     count BIGINT NOT NULL,
     PRIMARY KEY (project_id, day)
   );`,
  // cut-offs of removed participants and ended rooms (docs/reference/room-api.md); user_id '' stands for every user
  `CREATE TABLE room_cutoffs (
     project_id TEXT NOT NULL,
     room_id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     cut_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL,
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
     created_at BIGINT NOT NULL,
     emptied_at BIGINT,
     PRIMARY KEY (project_id, room_id)
   );`,
  // every media session from join to leave, for the session history and participant minutes (docs/console.md, "Session history")
  POSTGRES_SESSION_MIGRATION,
  // what each live participant publishes (docs/reference/room-api.md, "Published streams"): JSON, as its media node records it
  `ALTER TABLE live_participants ADD COLUMN streams TEXT NOT NULL DEFAULT '[]';`,
  // the usage kind of each session, for the cost of participant minutes (docs/console.md, "Usage")
  POSTGRES_SESSION_USAGE_MIGRATION,
  // each live participant's media quality (docs/reference/room-api.md, "Quality"): JSON, as its media node measures it; NULL until then
  `ALTER TABLE live_participants ADD COLUMN quality TEXT;`,
  // share-link invitations already redeemed, until they expire (docs/console.md, "Share links")
  POSTGRES_INVITATION_MIGRATION,
  // when a stored room first had somebody in it: rooms created ahead that nobody joined yet are capped per
  // project (docs/reference/room-api.md, "Limits"); a room stored earlier counts as started unless it never emptied since its creation
  `ALTER TABLE room_settings ADD COLUMN started_at BIGINT;
   UPDATE room_settings SET started_at = created_at WHERE emptied_at IS NULL OR emptied_at <> created_at;`,
  // permissions set through the room service API on the grants a participant used, until each expires
  // (docs/reference/room-api.md, "Changing permissions"): a reconnection with one of them gets them back
  `CREATE TABLE grant_permissions (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     publish_streams TEXT NOT NULL,
     subscribe_streams TEXT NOT NULL,
     subscribe_room BOOLEAN NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX grant_permissions_expiry ON grant_permissions(expires_at);`,
  // when the room service made each change (ms): of a session's permissions and those stored on a
  // grant it renews with, the newest win (docs/decisions.md, "The newest permission change wins")
  'ALTER TABLE grant_permissions ADD COLUMN set_at BIGINT NOT NULL DEFAULT 0;',
];

/** The advisory lock that serialises migrations: one key for this schema in each database. */
const MIGRATION_LOCK_KEY = 0x7274_6373; // 'rtcs'
const DEFAULT_POOL_SIZE = 10;
/** How long a query waits for a connection before the request is refused as unavailable. */
const CONNECT_TIMEOUT_MS = 3000;
const INT8_OID = 20;

export interface PostgresStoreOptions {
  /** Connections kept at most (default 10). */
  readonly poolSize?: number | undefined;
  /** An idle connection failed (the server restarted, the network dropped); the pool replaces it. */
  readonly onConnectionError?: ((err: Error) => void) | undefined;
}

/** BIGINT columns (timestamps, counts) arrive as numbers, as the domain has them; other types as pg parses them. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID && format !== 'binary'
    ? (value: string) => toSafeInteger(value)
    : pg.types.getTypeParser(oid, format ?? 'text'))) as pg.CustomTypesConfig['getTypeParser'],
};

function toSafeInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError('a BIGINT column holds a value beyond the safe integer range');
  return n;
}

/**
 * Opens a PostgreSQL store on `url` (postgres:// or postgresql://) and brings its schema up to date;
 * the same behaviour as the SQLite store, for several processes sharing one database
 * (docs/operations/configuration.md). `close()` ends the pool.
 */
export async function createPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url, max: options.poolSize ?? DEFAULT_POOL_SIZE, types: TYPES,
    // a server that does not answer (host down, packets dropped) refuses requests after a bound, never holds them
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  // without a listener, an idle connection that breaks would end the process
  pool.on('error', (err) => options.onConnectionError?.(err));
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }

  return refusedWhileUnreachable({
    ...postgresKeyRingStore(pool),
    ...postgresCustomerStore(pool),
    ...postgresTokenStore(pool),
    ...postgresRoomStore(pool),
    ...postgresBillingStore(pool),
    ...postgresWebhookStore(pool),
    ...postgresSessionStore(pool),
    async ping() { await pool.query('SELECT 1'); },
    // a second close does nothing, as with SQLite (pg's pool refuses a second end)
    async close() {
      if (!pool.ending) await pool.end();
    },
  });
}

/**
 * Refused because the database is unreachable (`503 unavailable`, `Retry-After: 1`): nothing was
 * done, or nothing is known to be (a revoke answered so is not done; the caller retries).
 */
export class StoreUnavailableError extends ApiError {
  constructor(cause: unknown) {
    super('unavailable', 'the database is unreachable; retry shortly', { retryAfterSec: 1, cause });
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The store with every method's connection-level failure (isConnectionError) turned into
 * StoreUnavailableError, for every caller at once: a request answers 503 while PostgreSQL
 * restarts or fails over, and the pool reconnects by itself afterwards. Other errors pass unchanged.
 */
function refusedWhileUnreachable<S extends object>(store: S): S {
  const translate = (err: unknown): never => {
    throw isConnectionError(err) ? new StoreUnavailableError(err) : err;
  };
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    wrapped[name] = typeof value === 'function'
      ? (...args: unknown[]): Promise<unknown> => {
        try {
          return Promise.resolve((value as (...a: unknown[]) => unknown).apply(store, args)).catch(translate);
        } catch (err) {
          return Promise.reject(err).catch(translate);
        }
      }
      : value;
  }
  return wrapped as S;
}

/**
 * Brings the database to the newest schema in one transaction that first takes a transaction-level
 * advisory lock: processes that start together on one database migrate it once, the others wait
 * for the lock, then find nothing left to do. A failed step rolls every step of this run back.
 */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
    const current = (await client.query<{ v: number }>('SELECT COALESCE(max(version), 0)::int AS v FROM schema_migrations'))
      .rows[0]?.v ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(`the database has schema version ${current}, newer than this build knows (${MIGRATIONS.length})`);
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      await client.query(MIGRATIONS[version]!);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version + 1, Date.now()]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
