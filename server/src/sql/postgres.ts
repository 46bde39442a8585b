import type pg from 'pg';

/** The query helpers every module's PostgreSQL adapter uses, on the store's one pool. */
export interface PgQueries {
  /** The rows a statement returns. */
  rows<R extends object>(text: string, values?: readonly unknown[]): Promise<R[]>;
  /** The first row a statement returns, if any. */
  one<R extends object>(text: string, values: readonly unknown[]): Promise<R | undefined>;
  /** How many rows a statement changed. */
  changed(text: string, values: readonly unknown[]): Promise<number>;
}

export function pgQueries(pool: pg.Pool): PgQueries {
  const rows = async <R extends object>(text: string, values: readonly unknown[] = []): Promise<R[]> => {
    // PostgreSQL text cannot hold NUL, so no row matches such a key; SQLite answers "not found" for
    // it too, where PostgreSQL would fail the query (an App ID or e-mail address comes from the caller)
    if (text.startsWith('SELECT') && values.some((v) => typeof v === 'string' && v.includes('\0'))) return [];
    return (await pool.query<R>(text, [...values])).rows;
  };
  const one = async <R extends object>(text: string, values: readonly unknown[]): Promise<R | undefined> =>
    (await rows<R>(text, values))[0];
  const changed = async (text: string, values: readonly unknown[]): Promise<number> =>
    (await pool.query(text, [...values])).rowCount ?? 0;
  return { rows, one, changed };
}

/**
 * Runs `step` in one transaction on one connection of the pool: committed when it returns, rolled
 * back when it throws (what it threw is thrown).
 */
export async function inTransaction<T>(pool: pg.Pool, step: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await step(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Socket errors that mean the database server cannot be reached or dropped the connection. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going away or not accepting connections yet: 57P01 admin_shutdown
 * (a fast stop or a failover), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up,
 * recovering), 53300 too_many_connections; and class 08, connection exceptions.
 */
const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03', '53300']);

/** What pg and pg-pool say when a connection ends, or cannot be had, without a socket error code. */
const CONNECTION_MESSAGES: readonly RegExp[] = [
  /^Connection terminated/, // unexpectedly, or "due to connection timeout"
  /^timeout exceeded when trying to connect$/, // the pool's connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Query read timeout$/,
];

/**
 * Whether `err` says the database is unreachable (stopped, restarting, failing over, the network
 * down) rather than that a statement failed: the one classification of the PostgreSQL store
 * (docs/operations/scale-out.md, "PostgreSQL restart"). A constraint violation, a syntax error or
 * any other SQL error is not one.
 */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof AggregateError && err.errors.some(isConnectionError)) return true; // every address of a name refused
  const code = (err as Error & { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    // any other SQLSTATE is an answer from a live server
    if (/^[0-9A-Z]{5}$/.test(code)) return false;
  }
  return CONNECTION_MESSAGES.some((m) => m.test(err.message));
}
