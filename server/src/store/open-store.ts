import { createSqliteStore } from './sqlite.ts';
import type { Config } from '../config.ts';
import type { Store } from './port.ts';

export interface OpenStoreOptions {
  /** A pooled database connection failed while idle; the pool replaces it. */
  readonly onConnectionError?: ((err: Error) => void) | undefined;
}

/** Opens and migrates the configured store: SQLite in the data directory, or PostgreSQL (docs/operations/configuration.md). */
export async function openStore(store: Config['store'], options: OpenStoreOptions = {}): Promise<Store> {
  if (store.kind === 'postgres') {
    // pg and the PostgreSQL adapters are loaded only where a DATABASE_URL names them
    const { createPostgresStore } = await import('./postgres.ts');
    return createPostgresStore(store.url, { poolSize: store.poolSize, onConnectionError: options.onConnectionError });
  }
  return createSqliteStore(store.path);
}
