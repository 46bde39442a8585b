import pg from 'pg';
import { ApiError } from '../core/errors.ts';
import { isConnectionError } from '../sql/postgres.ts';
import { postgresBillingStore } from '../billing/postgres.ts';
import { postgresCustomerStore } from '../customers/postgres.ts';
import { postgresKeyRingStore } from '../keys/postgres.ts';
import { postgresRoomStore } from '../rooms/postgres.ts';
import { postgresTokenStore } from '../tokens/postgres.ts';
import type { Store } from './port.ts';
import { postgresWebhookStore } from '../webhooks/postgres.ts';
import { postgresSessionStore } from '../sessions/postgres.ts';
import { migrationsFor } from './migrations.ts';

/**
 * The schema history (migrations.ts) as this database's SQL; `schema_migrations` records the versions applied.
 * Each module's queries live in its own postgres.ts; the tables' PostgreSQL types are those of sql/dialect.ts.
 */
const MIGRATIONS = migrationsFor('postgres');

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
