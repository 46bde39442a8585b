import { createFileKeyRingSource, missingKeyFileMessage } from '../keys/file-keyring.ts';
import { createStoreKeyRingSource, KeyRotationError, rotateKeys } from '../keys/key-ring-source.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../core/ports.ts';
import { openStore } from '../store/open-store.ts';
import type { CommandOutput } from './subscriptions-command.ts';

export const KEYS_USAGE = `  keys rotate    add a new signing key and media master key (keys.json in RTC_DATA_DIR, or
                 the database with DATABASE_URL); running processes take them within 30 s,
                 the current keys stay published until their grants expire`;

/**
 * `rtc keys rotate` (docs/operations/configuration.md, "Keys"): rotates the ring where the
 * deployment keeps it. Exit codes: 0 rotated, 1 refused (no ring yet, or a concurrent rotation won).
 */
export async function runKeysRotate(config: Config, clock: Clock, io: CommandOutput): Promise<number> {
  const nowSec = Math.floor(clock.nowMs() / 1000);
  const store = config.store.kind === 'postgres' ? await openStore(config.store) : undefined;
  try {
    const kids = store
      ? await rotateKeys(createStoreKeyRingSource(store), nowSec, 'no key ring in the database: `rtc serve` creates it on its first start')
      : await rotateKeys(createFileKeyRingSource(config.dataDir), nowSec, missingKeyFileMessage(config.dataDir));
    io.out(JSON.stringify({ rotated: true, signing_kid: kids.signingKid, media_master_kid: kids.masterKid }));
    return 0;
  } catch (err) {
    if (!(err instanceof KeyRotationError)) throw err;
    io.err(`rtc: keys rotate: ${err.message}`);
    return 1;
  } finally {
    await store?.close();
  }
}
