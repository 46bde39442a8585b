import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CredentialRecord, ProjectRecord, SessionRecord } from '../../server/src/customers/store.ts';
import type { Store } from '../../server/src/store/port.ts';
import { describeBillingStoreContract } from './billing-store-contract.ts';
import { describeDatabaseStoreContract } from './database-store-contract.ts';
import { describeInvitationStoreContract } from './invitation-store-contract.ts';
import { describeRoomStoreContract } from './room-store-contract.ts';
import { describeSessionStoreContract } from './session-store-contract.ts';
import { describeWebhookStoreContract } from './webhook-store-contract.ts';

/** Where a store under test keeps its data: each call gives a new, empty database. */
export interface StoreFixture {
  /** Returns an opener of that database: every call opens one more store on it (another connection or process would). */
  newDatabase(): Promise<() => Promise<Store>>;
}

// millisecond timestamps: beyond 32 bits, so a column too narrow for them fails here
const T0 = 1_800_000_000_000;

const uid = (prefix: string): string => `${prefix}_${randomBytes(11).toString('hex')}`;

/**
 * The behaviour every Store adapter shares, run against each of them (sqlite.test.ts,
 * postgres.test.ts): what services rely on, including uniqueness conflicts, conditional updates
 * that only one of several concurrent callers wins, list order, cursors and column types.
 */
export function describeStoreContract(name: string, fixture: StoreFixture): void {
  describe(`${name} store contract`, () => {
    let open: () => Promise<Store>;
    let store: Store;
    let other: Store;

    before(async () => {
      open = await fixture.newDatabase();
      store = await open();
      other = await open();
    });
    after(async () => {
      await store.close();
      await other.close();
    });

    const account = async (email = `${uid('u')}@example.test`): Promise<string> => {
      const id = uid('acc');
      assert.equal(await store.insertAccount({ id, email, passwordHash: 'ph', createdAt: T0 }), true);
      return id;
    };
    const project = async (accountId: string, fields: Partial<ProjectRecord> = {}): Promise<ProjectRecord> => {
      const p: ProjectRecord = {
        id: uid('prj'), accountId, name: 'p', consoleAppId: uid('app'), archivedAt: null, createdAt: T0, updatedAt: T0, ...fields,
      };
      await store.insertProject(p);
      return p;
    };
    const credential = async (projectId: string, fields: Partial<CredentialRecord> = {}): Promise<CredentialRecord> => {
      const c: CredentialRecord = {
        appId: uid('app'), projectId, name: 'c', secretHash: 'hash-1', scopes: { publisher: true, subscriber: false },
        ipAllowlist: ['10.0.0.0/8', '2001:db8::/32'], maxTtlSeconds: 3600, createdAt: T0, updatedAt: T0,
        rotatedAt: null, revokedAt: null, ...fields,
      };
      await store.insertCredential(c);
      return c;
    };
    const session = async (accountId: string, familyId = uid('fam')): Promise<SessionRecord> => {
      const s: SessionRecord = {
        id: uid('ses'), accountId, familyId, accessHash: uid('ah'), accessExpiresAt: T0 + 900_000, refreshHash: uid('rh'),
        refreshExpiresAt: T0 + 86_400_000, status: 'active', createdAt: T0,
      };
      await store.insertSession(s);
      return s;
    };
    it('answers ping', async () => {
      await store.ping();
    });

    it('answers look-ups by a key that holds a NUL character with nothing', async () => {
      const key = 'app_\u0000x';
      assert.equal(await store.findAccountByEmail('a\u0000b@example.test'), undefined);
      assert.equal(await store.getAccount(key), undefined);
      assert.equal(await store.findSessionByAccessHash(key), undefined);
      assert.equal(await store.findSessionByRefreshHash(key), undefined);
      assert.equal(await store.findCredentialForAuth(key), undefined);
      assert.equal(await store.getCredential(key, key), undefined);
      assert.equal(await store.getProject(key, key), undefined);
      assert.equal(await store.isRevoked(key), false);
      assert.equal(await store.getQuote(key, key), undefined);
      assert.equal(await store.getSubscriptionRequest(key), undefined);
    });

    describe('accounts', () => {
      it('stores an account and finds it by e-mail and by id', async () => {
        const email = `${uid('u')}@example.test`;
        const id = await account(email);
        const expected = { id, email, passwordHash: 'ph', createdAt: T0 };
        assert.deepEqual(await store.findAccountByEmail(email), expected);
        assert.deepEqual(await other.getAccount(id), expected);
        assert.equal(await store.findAccountByEmail(`nobody-${email}`), undefined);
        assert.equal(await store.getAccount(uid('acc')), undefined);
      });

      it('answers false for an e-mail address that is taken, and keeps the first account', async () => {
        const email = `${uid('u')}@example.test`;
        const id = await account(email);
        assert.equal(await other.insertAccount({ id: uid('acc'), email, passwordHash: 'other', createdAt: T0 + 1 }), false);
        assert.equal((await store.findAccountByEmail(email))?.id, id);
      });

      it('lets exactly one of several concurrent sign-ups with one e-mail address win', async () => {
        const email = `${uid('u')}@example.test`;
        const results = await Promise.all([store, other, store, other].map((s) =>
          s.insertAccount({ id: uid('acc'), email, passwordHash: 'ph', createdAt: T0 })));
        assert.equal(results.filter(Boolean).length, 1);
      });

      it('replaces a password hash only while it is still the one named', async () => {
        const id = await account();
        assert.equal(await store.replacePasswordHash(id, 'ph', 'ph2'), true);
        assert.equal((await other.getAccount(id))?.passwordHash, 'ph2');
        // a password changed since the hash was read stays
        await other.updateAccountPassword(id, 'changed');
        assert.equal(await store.replacePasswordHash(id, 'ph2', 'ph3'), false);
        assert.equal((await store.getAccount(id))?.passwordHash, 'changed');
        assert.equal(await store.replacePasswordHash(uid('acc'), 'ph', 'ph2'), false);
      });

      it('refuses a second account with the same id', async () => {
        const id = await account();
        await assert.rejects(store.insertAccount({ id, email: `${uid('u')}@example.test`, passwordHash: 'ph', createdAt: T0 }));
      });
    });

    describe('sessions', () => {
      it('finds a session by its access hash and by its refresh hash', async () => {
        const s = await session(await account());
        assert.deepEqual(await store.findSessionByAccessHash(s.accessHash), s);
        assert.deepEqual(await other.findSessionByRefreshHash(s.refreshHash), s);
        assert.equal(await store.findSessionByAccessHash(s.refreshHash), undefined);
        assert.equal(await store.findSessionByRefreshHash(uid('rh')), undefined);
      });

      it('refuses a session whose access or refresh hash is taken', async () => {
        const accountId = await account();
        const s = await session(accountId);
        await assert.rejects(store.insertSession({ ...s, id: uid('ses'), refreshHash: uid('rh') }));
        await assert.rejects(store.insertSession({ ...s, id: uid('ses'), accessHash: uid('ah') }));
      });

      it('rotates an active session once', async () => {
        const s = await session(await account());
        assert.equal(await store.markSessionRotated(s.id), true);
        assert.equal(await store.markSessionRotated(s.id), false);
        assert.equal((await store.findSessionByAccessHash(s.accessHash))?.status, 'rotated');
        assert.equal(await store.markSessionRotated(uid('ses')), false);
      });

      it('lets exactly one of concurrent refresh rotations win, across stores', async () => {
        const accountId = await account();
        for (let round = 0; round < 5; round++) {
          const s = await session(accountId);
          const results = await Promise.all([store, other, store, other].map((st) => st.markSessionRotated(s.id)));
          assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results.join(',')}`);
        }
      });

      it('ends every session of a family and no other', async () => {
        const accountId = await account();
        const family = uid('fam');
        const a = await session(accountId, family);
        const b = await session(accountId, family);
        const c = await session(accountId);
        await store.markSessionRotated(a.id);
        await other.endSessionFamily(family);
        assert.equal((await store.findSessionByAccessHash(a.accessHash))?.status, 'ended');
        assert.equal((await store.findSessionByAccessHash(b.accessHash))?.status, 'ended');
        assert.equal((await store.findSessionByAccessHash(c.accessHash))?.status, 'active');
        assert.equal(await store.markSessionRotated(b.id), false, 'an ended session cannot rotate');
      });

      it('ends every session of an account but the family kept, and changes its password', async () => {
        const accountId = await account();
        const keep = uid('fam');
        const kept = await session(accountId, keep);
        const ended = await session(accountId);
        const stranger = await session(await account());
        await other.endAccountSessions(accountId, keep);
        assert.equal((await store.findSessionByAccessHash(kept.accessHash))?.status, 'active');
        assert.equal((await store.findSessionByAccessHash(ended.accessHash))?.status, 'ended');
        assert.equal((await store.findSessionByAccessHash(stranger.accessHash))?.status, 'active');
        await other.endAccountSessions(accountId);
        assert.equal((await store.findSessionByAccessHash(kept.accessHash))?.status, 'ended');
        await other.updateAccountPassword(accountId, 'new-hash');
        assert.equal((await store.getAccount(accountId))?.passwordHash, 'new-hash');
      });
    });

    describe('projects', () => {
      it('lists an account\'s projects by creation time, then in insertion order', async () => {
        const accountId = await account();
        const late = await project(accountId, { createdAt: T0 + 2000 });
        const first = await project(accountId, { createdAt: T0 + 1000, name: 'b' });
        const second = await project(accountId, { createdAt: T0 + 1000, name: 'a' });
        const third = await project(accountId, { createdAt: T0 + 1000, name: 'c' });
        await project(await account());
        assert.deepEqual(await other.listProjects(accountId), [first, second, third, late]);
        assert.equal(await store.countProjects(accountId), 4);
        assert.equal(await store.countProjects(uid('acc')), 0);
      });

      it('gets a project only through its own account', async () => {
        const accountId = await account();
        const p = await project(accountId);
        assert.deepEqual(await store.getProject(accountId, p.id), p);
        assert.equal(await store.getProject(await account(), p.id), undefined);
      });

      it('refuses a second project with a taken console App ID', async () => {
        const accountId = await account();
        const p = await project(accountId);
        await assert.rejects(store.insertProject({ ...p, id: uid('prj') }));
      });

      it('applies a patch: absent fields stay, archivedAt null un-archives', async () => {
        const accountId = await account();
        const p = await project(accountId, { name: 'before' });
        const renamed = await store.updateProject(p.id, { name: 'after', updatedAt: T0 + 1 });
        assert.deepEqual(renamed, { ...p, name: 'after', updatedAt: T0 + 1 });
        const archived = await other.updateProject(p.id, { archivedAt: T0 + 2, updatedAt: T0 + 2 });
        assert.deepEqual(archived, { ...p, name: 'after', archivedAt: T0 + 2, updatedAt: T0 + 2 });
        const restored = await store.updateProject(p.id, { archivedAt: null, updatedAt: T0 + 3 });
        assert.deepEqual(restored, { ...p, name: 'after', archivedAt: null, updatedAt: T0 + 3 });
        assert.deepEqual(await store.getProject(accountId, p.id), restored);
        assert.equal(await store.updateProject(uid('prj'), { name: 'x', updatedAt: T0 }), undefined);
      });

      it('keeps both of two concurrent patches of different fields', async () => {
        const accountId = await account();
        const p = await project(accountId);
        await Promise.all([
          store.updateProject(p.id, { name: 'renamed', updatedAt: T0 + 1 }),
          other.updateProject(p.id, { archivedAt: T0 + 1, updatedAt: T0 + 1 }),
        ]);
        const after = await store.getProject(accountId, p.id);
        assert.equal(after?.name, 'renamed');
        assert.equal(after?.archivedAt, T0 + 1);
      });
    });

    describe('credentials', () => {
      it('round-trips every field: booleans, the allow-list, nulls and integers', async () => {
        const p = await project(await account());
        const c = await credential(p.id, { scopes: { publisher: false, subscriber: true }, ipAllowlist: [], maxTtlSeconds: 60 });
        const got = await other.getCredential(p.id, c.appId);
        assert.deepEqual(got, c);
        assert.equal(typeof got?.createdAt, 'number');
        assert.equal(await store.getCredential(uid('prj'), c.appId), undefined, 'another project does not see it');
      });

      it('lists a project\'s credentials in creation order and counts those not revoked', async () => {
        const p = await project(await account());
        const b = await credential(p.id, { createdAt: T0 + 1 });
        const a = await credential(p.id, { createdAt: T0 });
        const c = await credential(p.id, { createdAt: T0 + 1, revokedAt: T0 + 5 });
        assert.deepEqual(await store.listCredentials(p.id), [a, b, c]);
        assert.equal(await store.countCredentials(p.id), 2);
        assert.deepEqual(await store.listCredentials(uid('prj')), []);
      });

      it('refuses a credential of a project that does not exist', async () => {
        await assert.rejects(credential(uid('prj')));
      });

      it('applies a patch: absent fields stay', async () => {
        const p = await project(await account());
        const c = await credential(p.id);
        const rotated = await store.updateCredential(c.appId, { secretHash: 'hash-2', rotatedAt: T0 + 1, updatedAt: T0 + 1 });
        assert.deepEqual(rotated, { ...c, secretHash: 'hash-2', rotatedAt: T0 + 1, updatedAt: T0 + 1 });
        const edited = await other.updateCredential(c.appId, {
          name: 'renamed', scopes: { publisher: false, subscriber: true }, ipAllowlist: ['192.0.2.1/32'], maxTtlSeconds: 120,
          updatedAt: T0 + 2,
        });
        const expected = {
          ...c, secretHash: 'hash-2', rotatedAt: T0 + 1, name: 'renamed', scopes: { publisher: false, subscriber: true },
          ipAllowlist: ['192.0.2.1/32'], maxTtlSeconds: 120, updatedAt: T0 + 2,
        };
        assert.deepEqual(edited, expected);
        const revoked = await store.updateCredential(c.appId, { revokedAt: T0 + 3, updatedAt: T0 + 3 });
        assert.deepEqual(revoked, { ...expected, revokedAt: T0 + 3, updatedAt: T0 + 3 });
        assert.deepEqual(await store.getCredential(p.id, c.appId), revoked);
        assert.equal(await store.updateCredential(uid('app'), { name: 'x', updatedAt: T0 }), undefined);
      });
    });

    // findCredentialForAuth may keep the rows it read (SQLite does while nothing wrote to the file):
    // every write, by this store or another one (another process on the same data), must be seen by
    // the very next look-up (docs/reference/token-api.md: rotation and revocation are immediate).
    describe('credential look-ups of the token API', () => {
      let projectId: string;
      let appId: string;

      before(async () => {
        projectId = (await project(await account())).id;
        appId = (await credential(projectId)).appId;
      });

      it('sees a rotation made through the same store at once', async () => {
        assert.equal((await store.findCredentialForAuth(appId))?.secretHash, 'hash-1');
        await store.updateCredential(appId, { secretHash: 'hash-2', rotatedAt: T0 + 2, updatedAt: T0 + 2 });
        assert.equal((await store.findCredentialForAuth(appId))?.secretHash, 'hash-2');
      });

      it('sees a rotation, a revocation and an archive made through another store at once', async () => {
        assert.equal((await store.findCredentialForAuth(appId))?.secretHash, 'hash-2');
        await other.updateCredential(appId, { secretHash: 'hash-3', rotatedAt: T0 + 3, updatedAt: T0 + 3 });
        assert.equal((await store.findCredentialForAuth(appId))?.secretHash, 'hash-3');
        assert.equal((await store.findCredentialForAuth(appId))?.projectArchived, false);
        await other.updateProject(projectId, { archivedAt: T0 + 4, updatedAt: T0 + 4 });
        assert.equal((await store.findCredentialForAuth(appId))?.projectArchived, true);
        await other.updateCredential(appId, { revokedAt: T0 + 5, updatedAt: T0 + 5 });
        assert.equal((await store.findCredentialForAuth(appId))?.revokedAt, T0 + 5);
      });

      it('answers unknown App IDs with undefined and hands out read-only records', async () => {
        assert.equal(await store.findCredentialForAuth(uid('app')), undefined);
        const found = await store.findCredentialForAuth(appId);
        assert.ok(found && Object.isFrozen(found) && Object.isFrozen(found.scopes) && Object.isFrozen(found.ipAllowlist));
        assert.deepEqual(found.ipAllowlist, ['10.0.0.0/8', '2001:db8::/32']);
        assert.deepEqual(found.scopes, { publisher: true, subscriber: false });
      });
    });

    describe('revocations', () => {
      it('records a revocation once, lists those not expired and purges the expired', async () => {
        const projectId = uid('prj');
        const now = 2_000_000_000;
        const expired = { grantId: uid('g'), projectId, expiresAt: now - 1 };
        const boundary = { grantId: uid('g'), projectId, expiresAt: now };
        const live = { grantId: uid('g'), projectId, expiresAt: now + 60 };
        for (const r of [expired, boundary, live]) await store.insertRevocation(r);
        await other.insertRevocation({ ...live, expiresAt: now + 999 });
        assert.equal(await store.isRevoked(live.grantId), true);
        assert.equal(await other.isRevoked(uid('g')), false);
        const listed = (await store.listRevocations(now)).filter((r) => r.projectId === projectId);
        const byGrant = (a: { grantId: string }, b: { grantId: string }) => a.grantId.localeCompare(b.grantId);
        assert.deepEqual(listed.sort(byGrant), [boundary, live].sort(byGrant));
        assert.equal(await store.purgeRevocations(now), 1);
        assert.equal(await store.isRevoked(expired.grantId), false);
        assert.equal(await store.isRevoked(boundary.grantId), true);
        assert.equal(await store.purgeRevocations(now), 0);
      });
    });

    describeRoomStoreContract(() => ({ store, other }));
    describeInvitationStoreContract(() => ({ store, other }));

    describe('token counts', () => {
      it('adds counts per project and day across stores and batches, and lists them from a day on, oldest first', async () => {
        const [a, b] = [uid('prj'), uid('prj')];
        await store.addTokenCounts([{ projectId: a, day: '2026-11-23', count: 2 }, { projectId: a, day: '2026-11-24', count: 1 }]);
        await other.addTokenCounts([{ projectId: a, day: '2026-11-24', count: 4 }, { projectId: b, day: '2026-11-24', count: 7 }]);
        await store.addTokenCounts([]);
        assert.deepEqual(await other.listTokenCounts(a, '2026-11-01'), [
          { projectId: a, day: '2026-11-23', count: 2 }, { projectId: a, day: '2026-11-24', count: 5 },
        ]);
        assert.deepEqual(await store.listTokenCounts(a, '2026-11-24'), [{ projectId: a, day: '2026-11-24', count: 5 }]);
        assert.deepEqual(await store.listTokenCounts(uid('prj'), '2026-01-01'), []);
      });
    });

    describe('project cut-offs', () => {
      it('keeps the later cut-off of a project archived twice, lists those not expired and purges the expired', async () => {
        const now = 2_000_000_000;
        const projectId = uid('prj');
        const expired = { projectId: uid('prj'), cutAt: now - 4000, expiresAt: now - 1 };
        const boundary = { projectId: uid('prj'), cutAt: now - 3660, expiresAt: now };
        await store.insertProjectCutoff({ projectId, cutAt: now - 10, expiresAt: now + 3650 });
        await other.insertProjectCutoff({ projectId, cutAt: now, expiresAt: now + 3660 });
        // a late writer of the earlier archive does not move the cut-off back
        await store.insertProjectCutoff({ projectId, cutAt: now - 10, expiresAt: now + 3650 });
        for (const c of [expired, boundary]) await store.insertProjectCutoff(c);
        const live = { projectId, cutAt: now, expiresAt: now + 3660 };
        assert.deepEqual(await other.projectCutoff(projectId), live);
        assert.deepEqual(await store.projectCutoff(expired.projectId), expired);
        assert.equal(await store.projectCutoff(uid('prj')), undefined);
        const mine = new Set([projectId, expired.projectId, boundary.projectId]);
        const listed = (await store.listProjectCutoffs(now)).filter((c) => mine.has(c.projectId));
        const byProject = (a: { projectId: string }, b: { projectId: string }) => a.projectId.localeCompare(b.projectId);
        assert.deepEqual(listed.sort(byProject), [boundary, live].sort(byProject));
        assert.equal(await store.purgeProjectCutoffs(now), 1);
        assert.equal(await store.projectCutoff(expired.projectId), undefined);
        assert.deepEqual(await store.projectCutoff(boundary.projectId), boundary);
        assert.equal(await other.purgeProjectCutoffs(now), 0);
      });
    });

    describeBillingStoreContract(() => ({ store, other }));

    describeWebhookStoreContract(() => ({ store, other }));
    describeSessionStoreContract(() => ({ store, other }));

    describeDatabaseStoreContract(() => fixture.newDatabase());
  });
}
