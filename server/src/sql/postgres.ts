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
