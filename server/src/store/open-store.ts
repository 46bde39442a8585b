import { createPostgresStore } from './postgres.ts';
import { createSqliteStore } from './sqlite.ts';
import type { Config } from '../config.ts';
import type { Store } from './port.ts';

export interface OpenStoreOptions {
  /** A pooled database connection failed while idle; the pool replaces it. */
  readonly onConnectionError?: ((err: Error) => void) | undefined;
}

/** Opens and migrates the configured store: SQLite in the data directory, or PostgreSQL (docs/operations/configuration.md). */
export function openStore(store: Config['store'], options: OpenStoreOptions = {}): Promise<Store> {
  if (store.kind === 'postgres') {
    return createPostgresStore(store.url, { poolSize: store.poolSize, onConnectionError: options.onConnectionError });
  }
  return Promise.resolve(createSqliteStore(store.path));
}
