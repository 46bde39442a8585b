import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createSqliteStore } from '../../server/src/store/sqlite.ts';
import { describeStoreContract } from './store-contract.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// each store of one database is another connection to one file, as another process would open it
describeStoreContract('sqlite', {
  async newDatabase() {
    const dir = mkdtempSync(join(tmpdir(), 'rtc-sqlite-'));
    dirs.push(dir);
    return async () => createSqliteStore(join(dir, 'rtc.sqlite'));
  },
});
