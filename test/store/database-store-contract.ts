import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Store } from '../../server/src/store/port.ts';

const T0 = 1_800_000_000_000;
const uid = (prefix: string): string => `${prefix}_${randomBytes(11).toString('hex')}`;

/**
 * The part of the store contract (store-contract.ts) that needs a database of its own for each
 * test: the key ring's single row, and the schema migrations of an empty database.
 * `newDatabase` returns an opener of a new, empty database.
 */
export function describeDatabaseStoreContract(newDatabase: () => Promise<() => Promise<Store>>): void {
  describe('key ring', () => {
    // one row per database: each test takes a database of its own
    const fresh = async (count: number): Promise<Store[]> => {
      const openFresh = await newDatabase();
      return Promise.all(Array.from({ length: count }, () => openFresh()));
    };
    const closeAll = (stores: readonly Store[]) => Promise.all(stores.map((s) => s.close()));
    // a document as the key ring writes it: JSON text over several lines, beyond ASCII too
    const doc = (n: number): string => `${JSON.stringify({ version: 1, n, note: 'clé ✓' }, null, 2)}\n`;

    it('has no ring until one is inserted, then keeps it exactly at version 1', async () => {
      const stores = await fresh(2);
      try {
        const [a, b] = stores as [Store, Store];
        assert.equal(await a.readKeyRing(), undefined);
        assert.equal(await a.replaceKeyRing(doc(1), 1), false, 'nothing to replace');
        assert.equal(await a.insertKeyRingIfAbsent(doc(1)), true);
        assert.deepEqual(await b.readKeyRing(), { document: doc(1), version: 1 });
        assert.equal(await b.insertKeyRingIfAbsent(doc(2)), false, 'the first ring stays');
        assert.deepEqual(await a.readKeyRing(), { document: doc(1), version: 1 });
      } finally {
        await closeAll(stores);
      }
    });

    it('lets exactly one of several stores inserting at the same moment win, and all read the winner', async () => {
      const stores = await fresh(4);
      try {
        const won = await Promise.all(stores.map((s, i) => s.insertKeyRingIfAbsent(doc(i))));
        assert.equal(won.filter(Boolean).length, 1);
        const winner = doc(won.indexOf(true));
        for (const s of stores) assert.deepEqual(await s.readKeyRing(), { document: winner, version: 1 });
      } finally {
        await closeAll(stores);
      }
    });

    it('replaces the ring only at the expected version (compare-and-swap), one version on each time', async () => {
      const stores = await fresh(2);
      try {
        const [a, b] = stores as [Store, Store];
        await a.insertKeyRingIfAbsent(doc(1));
        assert.equal(await b.replaceKeyRing(doc(2), 1), true);
        assert.deepEqual(await a.readKeyRing(), { document: doc(2), version: 2 });
        assert.equal(await a.replaceKeyRing(doc(3), 1), false, 'a stale version changes nothing');
        assert.deepEqual(await b.readKeyRing(), { document: doc(2), version: 2 });
        assert.equal(await a.replaceKeyRing(doc(3), 2), true);
        assert.deepEqual(await b.readKeyRing(), { document: doc(3), version: 3 });
      } finally {
        await closeAll(stores);
      }
    });

    it('lets exactly one of several concurrent replacements of one version win', async () => {
      const stores = await fresh(4);
      try {
        await stores[0]!.insertKeyRingIfAbsent(doc(0));
        const won = await Promise.all(stores.map((s, i) => s.replaceKeyRing(doc(10 + i), 1)));
        assert.equal(won.filter(Boolean).length, 1);
        assert.deepEqual(await stores[0]!.readKeyRing(), { document: doc(10 + won.indexOf(true)), version: 2 });
      } finally {
        await closeAll(stores);
      }
    });
  });

  describe('schema migrations', () => {
    it('lets several stores opening one empty database at the same moment all succeed, and migrates it once', async () => {
      const openFresh = await newDatabase();
      const stores = await Promise.all(Array.from({ length: 4 }, () => openFresh()));
      try {
        const id = uid('acc');
        const email = `${uid('u')}@example.test`;
        assert.equal(await stores[0]!.insertAccount({ id, email, passwordHash: 'ph', createdAt: T0 }), true);
        for (const s of stores) assert.equal((await s.getAccount(id))?.email, email);
        // opening again finds nothing to do and keeps the data
        const reopened = await openFresh();
        assert.equal((await reopened.findAccountByEmail(email))?.id, id);
        await reopened.close();
        await reopened.close(); // a second close does nothing
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  });
}
