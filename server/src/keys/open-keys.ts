import { createFileKeyRingSource, readKeyFileIfPresent } from './file-keyring.ts';
import { newKeyDocument } from './key-document.ts';
import { createStoreKeyRingSource, type KeyRingSource } from './key-ring-source.ts';
import { openLiveKeyRing, type LiveKeyRingOptions } from './live-key-ring.ts';
import type { Config } from '../config.ts';
import type { LiveKeyRing } from '../core/keyring.ts';
import type { KeyRingStore } from './store.ts';

/**
 * Where the key ring lives (docs/operations/configuration.md, "Keys"): `keys.json` in the data
 * directory on SQLite, as always; the database on PostgreSQL, where processes on other machines
 * have no shared directory but all read the same database.
 */
export function keyRingSource(config: Config, store: KeyRingStore): KeyRingSource {
  return config.store.kind === 'postgres' ? createStoreKeyRingSource(store) : createFileKeyRingSource(config.dataDir);
}

/**
 * Loads the key ring, creating it on the first start: processes starting together all end up with
 * the one ring that was stored first. A PostgreSQL database without a ring takes the data
 * directory's `keys.json` when there is one, so that a deployment moving onto it keeps its keys
 * (App Secret hashes depend on them).
 */
export async function openKeys(config: Config, store: KeyRingStore, options: LiveKeyRingOptions): Promise<LiveKeyRing> {
  const source = keyRingSource(config, store);
  const stored = await source.read() ?? await source.createIfAbsent(
    (config.store.kind === 'postgres' ? readKeyFileIfPresent(config.dataDir) : undefined)
      ?? newKeyDocument(Math.floor(options.clock.nowMs() / 1000)),
  );
  return openLiveKeyRing(source, stored, options);
}
