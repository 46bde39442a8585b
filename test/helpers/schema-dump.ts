import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * The schema of a database as data, for comparing the schema one build creates with the one an
 * earlier build created. SQL text is compared with its layout folded (whitespace runs as one
 * space, none inside parentheses or before a comma), so that only what the database keeps counts.
 */
export function foldSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').replace(/\(\s+/g, '(').replace(/\s+([),])/g, '$1').trim();
}

/** The statements of a migration, each folded, in order. */
export function foldStatements(sql: string): string[] {
  return sql.split(';').map(foldSql).filter((s) => s !== '');
}

export interface SqliteSchema {
  readonly userVersion: number;
  /** Every table, index and trigger of `sqlite_master` with its SQL folded (SQLite keeps the text it was given). */
  readonly objects: readonly { readonly type: string; readonly name: string; readonly table: string; readonly sql: string | null }[];
}

/** The schema of the SQLite file at `path`, opened read-only. */
export function dumpSqliteSchema(path: string): SqliteSchema {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare<[], { type: string; name: string; tbl_name: string; sql: string | null }>(
      'SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all();
    return {
      userVersion: db.pragma('user_version', { simple: true }) as number,
      objects: rows.map((r) => ({ type: r.type, name: r.name, table: r.tbl_name, sql: r.sql === null ? null : foldSql(r.sql) })),
    };
  } finally {
    db.close();
  }
}

export interface PostgresSchema {
  readonly versions: readonly number[];
  readonly columns: readonly string[];
  readonly constraints: readonly string[];
  readonly indexes: readonly string[];
  readonly sequences: readonly string[];
}

/** The schema of the PostgreSQL database at `url` as the catalog states it (its own canonical text). */
export async function dumpPostgresSchema(url: string): Promise<PostgresSchema> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const lines = async (text: string): Promise<string[]> => (await client.query<{ line: string }>(text)).rows.map((r) => r.line);
    return {
      versions: (await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version),
      columns: await lines(`SELECT concat_ws(' ', table_name || '.' || column_name, data_type, CASE WHEN is_nullable = 'NO' THEN 'NOT NULL' END,
          'DEFAULT ' || column_default, CASE WHEN is_identity = 'YES' THEN 'IDENTITY ' || identity_generation END) AS line
        FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
      constraints: await lines(`SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) AS line
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY conrelid::regclass::text, conname`),
      indexes: await lines(`SELECT indexdef AS line FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`),
      sequences: await lines(`SELECT sequence_name || ' ' || data_type AS line FROM information_schema.sequences
        WHERE sequence_schema = 'public' ORDER BY sequence_name`),
    };
  } finally {
    await client.end();
  }
}

/** What the schema fixtures hold (server/src/store/fixtures): taken from the build before the tables moved to their modules. */
export interface SchemaFixtures {
  /** Each dialect's migrations, one entry per schema version, as folded statements. */
  readonly migrations: { readonly sqlite: readonly (readonly string[])[]; readonly postgres: readonly (readonly string[])[] };
  readonly sqlite: SqliteSchema;
  readonly postgres: PostgresSchema;
}

export function readSchemaFixtures(): SchemaFixtures {
  const read = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../server/src/store/fixtures/${name}`, import.meta.url), 'utf8'));
  return {
    migrations: read('migrations.json') as SchemaFixtures['migrations'],
    ...(read('schema.json') as Pick<SchemaFixtures, 'sqlite' | 'postgres'>),
  };
}
