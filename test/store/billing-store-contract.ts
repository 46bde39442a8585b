import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { QuoteRecord, SubscriptionRequestRecord } from '../../server/src/billing/store.ts';
import type { ProjectRecord } from '../../server/src/customers/store.ts';
import type { Store } from '../../server/src/store/port.ts';

const T0 = 1_800_000_000_000;
const uid = (prefix: string): string => `${prefix}_${randomBytes(11).toString('hex')}`;

/**
 * The billing module's part of the store contract (store-contract.ts): quotes kept exactly as
 * issued, and subscription requests (one pending per project, one decision wins).
 */
export function describeBillingStoreContract(stores: () => { readonly store: Store; readonly other: Store }): void {
  const account = async (): Promise<string> => {
    const id = uid('acc');
    assert.equal(await stores().store.insertAccount({ id, email: `${uid('u')}@example.test`, passwordHash: 'ph', createdAt: T0 }), true);
    return id;
  };
  const project = async (accountId: string): Promise<ProjectRecord> => {
    const p: ProjectRecord = { id: uid('prj'), accountId, name: 'p', consoleAppId: uid('app'), archivedAt: null, createdAt: T0, updatedAt: T0 };
    await stores().store.insertProject(p);
    return p;
  };
  const subscriptionRequest = (accountId: string, projectId: string, fields: Partial<SubscriptionRequestRecord> = {}) => ({
    id: uid('sub'), accountId, projectId, plan: 'team', quoteId: null, note: null, status: 'pending' as const,
    createdAt: T0, updatedAt: T0, decidedAt: null, reason: null, ...fields,
  });

  describe('quotes', () => {
    it('keeps the document exactly as given and lists newest first, a page at a time', async () => {
      const { store, other } = stores();
      const accountId = await account();
      const quotes: QuoteRecord[] = [];
      for (let i = 0; i < 5; i++) {
        // the insertion order decides, not the creation time
        const q: QuoteRecord = {
          id: uid('quo'), accountId, priceListVersion: '2026-01', createdAt: T0 - i,
          document: `{ "b": ${i}, "a": [1, 2.50],  "note": "é\\u00e9" }`,
        };
        await store.insertQuote(q);
        quotes.push(q);
      }
      const otherAccount = await account();
      await store.insertQuote({ ...quotes[0]!, id: uid('quo'), accountId: otherAccount });
      assert.deepEqual(await other.getQuote(accountId, quotes[2]!.id), quotes[2]);
      assert.equal(await store.getQuote(otherAccount, quotes[2]!.id), undefined);
      const newest = [...quotes].reverse();
      const page1 = await store.listQuotes(accountId, { limit: 2 });
      assert.deepEqual(page1, newest.slice(0, 2));
      const page2 = await store.listQuotes(accountId, { limit: 2, afterId: page1[1]!.id });
      assert.deepEqual(page2, newest.slice(2, 4));
      const page3 = await store.listQuotes(accountId, { limit: 2, afterId: page2[1]!.id });
      assert.deepEqual(page3, newest.slice(4));
      assert.deepEqual(await store.listQuotes(accountId, { limit: 2, afterId: quotes[0]!.id }), []);
      assert.deepEqual(await store.listQuotes(accountId, { limit: 2, afterId: uid('quo') }), [], 'an unknown cursor');
      assert.deepEqual(await store.listQuotes(otherAccount, { limit: 2, afterId: quotes[4]!.id }), [],
        'a cursor of another account');
    });

    it('refuses a second quote with the same id', async () => {
      const { store, other } = stores();
      const accountId = await account();
      const q = { id: uid('quo'), accountId, priceListVersion: 'v', createdAt: T0, document: '{}' };
      await store.insertQuote(q);
      await assert.rejects(other.insertQuote(q));
    });
  });

  describe('subscription requests', () => {
    it('allows one pending request per project, and a new one once it is decided', async () => {
      const { store, other } = stores();
      const accountId = await account();
      const p = await project(accountId);
      const q = { id: uid('quo'), accountId, priceListVersion: 'v', createdAt: T0, document: '{}' };
      await store.insertQuote(q);
      const first = subscriptionRequest(accountId, p.id, { quoteId: q.id, note: 'please' });
      assert.equal(await store.insertSubscriptionRequest(first), true);
      assert.equal(await other.insertSubscriptionRequest(subscriptionRequest(accountId, p.id)), false);
      assert.equal(await store.insertSubscriptionRequest(first), false, 'the same id');
      assert.deepEqual(await other.getSubscriptionRequest(first.id), first);
      assert.deepEqual(await other.getSubscriptionRequest(first.id, accountId), first);
      assert.equal(await store.getSubscriptionRequest(first.id, await account()), undefined);
      assert.equal(await store.getSubscriptionRequest(uid('sub')), undefined);

      const cancelled = await store.transitionSubscriptionRequest(first.id, { status: 'cancelled', at: T0 + 1 });
      assert.deepEqual(cancelled, { ...first, status: 'cancelled', updatedAt: T0 + 1, decidedAt: T0 + 1, reason: null });
      assert.equal(await store.transitionSubscriptionRequest(first.id, { status: 'approved', at: T0 + 2 }), undefined,
        'a final state stays');
      assert.equal(await other.insertSubscriptionRequest(subscriptionRequest(accountId, p.id)), true);
    });

    it('lets exactly one of concurrent decisions win', async () => {
      const { store, other } = stores();
      const accountId = await account();
      const p = await project(accountId);
      const r = subscriptionRequest(accountId, p.id);
      await store.insertSubscriptionRequest(r);
      const results = await Promise.all([
        store.transitionSubscriptionRequest(r.id, { status: 'approved', at: T0 + 1 }),
        other.transitionSubscriptionRequest(r.id, { status: 'rejected', at: T0 + 1, reason: 'no' }),
        store.transitionSubscriptionRequest(r.id, { status: 'cancelled', at: T0 + 1 }),
      ]);
      const winners = results.filter((x) => x !== undefined);
      assert.equal(winners.length, 1);
      assert.deepEqual(await store.getSubscriptionRequest(r.id), winners[0]);
    });

    it('lists newest first with filters and a cursor', async () => {
      const { store, other } = stores();
      const accountId = await account();
      const p1 = await project(accountId);
      const p2 = await project(accountId);
      const a = subscriptionRequest(accountId, p1.id);
      const b = subscriptionRequest(accountId, p2.id);
      await store.insertSubscriptionRequest(a);
      await store.insertSubscriptionRequest(b);
      const rejected = await store.transitionSubscriptionRequest(a.id, { status: 'rejected', at: T0 + 1, reason: 'budget' });
      const c = subscriptionRequest(accountId, p1.id, { createdAt: T0 - 10 });
      await store.insertSubscriptionRequest(c);

      assert.deepEqual(await other.listSubscriptionRequests({ accountId }, { limit: 10 }), [c, b, rejected]);
      assert.deepEqual(await other.listSubscriptionRequests({ accountId, projectId: p1.id }, { limit: 10 }), [c, rejected]);
      assert.deepEqual(await other.listSubscriptionRequests({ accountId, status: 'pending' }, { limit: 10 }), [c, b]);
      assert.deepEqual(await other.listSubscriptionRequests({ projectId: p2.id }, { limit: 10 }), [b], 'every account');
      assert.deepEqual(await other.listSubscriptionRequests({ accountId }, { limit: 1, afterId: c.id }), [b]);
      assert.deepEqual(await other.listSubscriptionRequests({ accountId }, { limit: 5, afterId: b.id }), [rejected]);
      assert.deepEqual(await other.listSubscriptionRequests({ accountId }, { limit: 5, afterId: uid('sub') }), []);
      assert.deepEqual(await other.listSubscriptionRequests({ accountId: uid('acc') }, { limit: 5 }), []);
    });
  });
}
