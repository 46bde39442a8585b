import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
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

describe('sqlite webhook outbox', () => {
  it('claims nothing without the write lock when nothing is due, so another process writing never holds it up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtc-sqlite-'));
    dirs.push(dir);
    const file = join(dir, 'rtc.sqlite');
    const store = createSqliteStore(file);
    const writer = new Database(file);
    try {
      writer.prepare('BEGIN IMMEDIATE').run();
      const claim = { nowMs: Date.now(), leaseMs: 30_000, owner: 'own_a', limit: 10, excludeWebhookIds: [], perWebhook: 2 };
      // a claim that took the write lock first would wait busy_timeout (5 s) for this writer, then fail
      assert.deepEqual(await store.claimDeliveries(claim), []);
      writer.prepare('COMMIT').run();
    } finally {
      writer.close();
      await store.close();
    }
  });
});
