import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../ports.ts';
import { createSqliteStore } from './sqlite.ts';

// findCredentialForAuth keeps the rows it read while nothing wrote to the file: every write, by
// this connection or by another one (another process on the same data directory), must be seen
// by the very next look-up (docs/reference/token-api.md, "Customer API": rotation and revocation are immediate).
describe('sqlite store: credential look-ups of the token API', () => {
  let dir: string;
  let a: Store;
  let b: Store;
  const appId = 'app_AAAAAAAAAAAAAAAAAAAAAA';
  const projectId = 'prj_AAAAAAAAAAAAAAAAAAAAAA';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rtc-sqlite-'));
    a = createSqliteStore(join(dir, 'rtc.sqlite'));
    b = createSqliteStore(join(dir, 'rtc.sqlite'));
    await a.insertAccount({ id: 'acc_AAAAAAAAAAAAAAAAAAAAAA', email: 'a@example.test', passwordHash: 'x', createdAt: 1 });
    await a.insertProject({
      id: projectId, accountId: 'acc_AAAAAAAAAAAAAAAAAAAAAA', name: 'p', consoleAppId: 'app_CCCCCCCCCCCCCCCCCCCCCC',
      archivedAt: null, createdAt: 1, updatedAt: 1,
    });
    await a.insertCredential({
      appId, projectId, name: 'c', secretHash: 'hash-1', scopes: { publisher: true, subscriber: true }, ipAllowlist: [],
      maxTtlSeconds: 3600, createdAt: 1, updatedAt: 1, rotatedAt: null, revokedAt: null,
    });
  });

  after(async () => {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sees a rotation made through the same store at once', async () => {
    assert.equal((await a.findCredentialForAuth(appId))?.secretHash, 'hash-1');
    await a.updateCredential(appId, { secretHash: 'hash-2', rotatedAt: 2, updatedAt: 2 });
    assert.equal((await a.findCredentialForAuth(appId))?.secretHash, 'hash-2');
  });

  it('sees a rotation, a revocation and an archive made through another connection at once', async () => {
    assert.equal((await a.findCredentialForAuth(appId))?.secretHash, 'hash-2');
    await b.updateCredential(appId, { secretHash: 'hash-3', rotatedAt: 3, updatedAt: 3 });
    assert.equal((await a.findCredentialForAuth(appId))?.secretHash, 'hash-3');
    await b.updateProject(projectId, { archivedAt: 4, updatedAt: 4 });
    assert.equal((await a.findCredentialForAuth(appId))?.projectArchived, true);
    await b.updateCredential(appId, { revokedAt: 5, updatedAt: 5 });
    assert.equal((await a.findCredentialForAuth(appId))?.revokedAt, 5);
  });

  it('answers unknown App IDs with undefined and hands out read-only records', async () => {
    assert.equal(await a.findCredentialForAuth('app_BBBBBBBBBBBBBBBBBBBBBB'), undefined);
    const found = await a.findCredentialForAuth(appId);
    assert.ok(found && Object.isFrozen(found) && Object.isFrozen(found.scopes) && Object.isFrozen(found.ipAllowlist));
  });
});
