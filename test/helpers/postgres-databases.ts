import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The environment variable through which `npm test` (scripts/test.mjs) names its one PostgreSQL server. */
export const SHARED_POSTGRES_ENV = 'TEST_POSTGRES_URL';

/** Fresh PostgreSQL databases for one test file. */
export interface PostgresDatabases {
  /** Creates a fresh, empty database and returns its URL. */
  createDatabase(): Promise<string>;
  /** Drops the databases created here (or stops this file's own server). */
  stop(): Promise<void>;
}

/** A throwaway PostgreSQL 15 server on loopback, owned by this test process (test/helpers/postgres.ts starts it). */
export interface Postgres extends PostgresDatabases {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication: any password is accepted). */
  readonly url: string;
  /** Stops the server (a fast shutdown: sessions end with 57P01) and keeps its files; `up()` starts it again. */
  down(): Promise<void>;
  /** Starts the server stopped by `down()` again on the same port, with the same databases. */
  up(): Promise<void>;
}

/** A database name no other test file picks: the shared server holds every file's databases at once. */
export const databaseName = (): string => `rtc_${randomBytes(6).toString('hex')}`;

/** Databases on the server at `adminUrl` (its `postgres` database): created from template0, dropped (connections and all) by `stop()`. */
function databasesOn(adminUrl: string): PostgresDatabases {
  const created: string[] = [];
  const admin = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    async createDatabase() {
      const name = databaseName();
      await admin(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
      created.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.href;
    },
    async stop() {
      for (const name of created.splice(0)) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Fresh databases for a test file that needs PostgreSQL only as a store: on the server of the whole
 * test run when `npm test` started one (TEST_POSTGRES_URL), else on a server this process starts
 * itself, as a file run alone (`node --import tsx --test FILE`) does. A test that stops or restarts
 * the server uses `startPostgres` (test/helpers/postgres.ts) for a server of its own.
 */
export async function postgresDatabases(): Promise<PostgresDatabases> {
  const shared = process.env[SHARED_POSTGRES_ENV];
  if (shared !== undefined && shared !== '') return databasesOn(shared);
  // loaded only here: the module that starts servers stays out of the files the shared server serves
  const own = new URL('./postgres.ts', import.meta.url).href;
  const { startPostgres } = await import(own) as { startPostgres: () => Promise<Postgres> };
  return startPostgres();
}
