import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ProjectEventType } from '../../server/src/core/ports.ts';
import type { Store } from '../../server/src/store/port.ts';
import type { OutboxEvent, WebhookRecord } from '../../server/src/webhooks/store.ts';

const T0 = 1_800_000_000_000;
const uid = (prefix: string): string => `${prefix}_${randomBytes(11).toString('hex')}`;

/**
 * The webhook part of the store contract (store-contract.ts): endpoints, the outbox written per
 * wanting endpoint, leased claims that two stores never both win, outcomes and the delivery log.
 */
export function describeWebhookStoreContract(stores: () => { readonly store: Store; readonly other: Store }): void {
  describe('webhooks and their outbox', () => {
    const projectOf = async (): Promise<string> => {
      const { store } = stores();
      const accountId = uid('acc');
      await store.insertAccount({ id: accountId, email: `${uid('u')}@example.test`, passwordHash: 'ph', createdAt: T0 });
      const id = uid('prj');
      await store.insertProject({ id, accountId, name: 'p', consoleAppId: uid('app'), archivedAt: null, createdAt: T0, updatedAt: T0 });
      return id;
    };
    const webhook = async (projectId: string, fields: Partial<WebhookRecord> = {}): Promise<WebhookRecord> => {
      const w: WebhookRecord = {
        id: uid('wh'), projectId, url: 'https://example.test/hook', description: 'd', eventTypes: [], enabled: true,
        secret: uid('whsec'), previousSecret: null, previousSecretExpiresAt: null, createdAt: 1_800_000_000, updatedAt: 1_800_000_000,
        ...fields,
      };
      await stores().store.insertWebhook(w);
      return w;
    };
    const event = (projectId: string, type: ProjectEventType, fields: Partial<OutboxEvent> = {}): OutboxEvent => {
      const id = uid('evt');
      return { id, projectId, type, body: JSON.stringify({ id, type }), recordedAt: T0, ...fields };
    };
    const claim = (s: Store, fields: Partial<Parameters<Store['claimDeliveries']>[0]> = {}) =>
      s.claimDeliveries({ nowMs: T0, leaseMs: 30_000, owner: uid('own'), limit: 100, excludeWebhookIds: [], perWebhook: 100, ...fields });

    it('keeps endpoints with their fields, updates and deletes them', async () => {
      const { store, other } = stores();
      const p = await projectOf();
      const a = await webhook(p, { eventTypes: ['token.revoked', 'project.archived'] });
      const b = await webhook(p, { enabled: false, createdAt: a.createdAt + 1 });
      assert.deepEqual(await other.listWebhooks(p), [a, b]);
      assert.deepEqual(await other.getWebhook(p, a.id), a);
      assert.equal(await other.getWebhook(await projectOf(), a.id), undefined);
      assert.equal(await other.countWebhooks(p), 2);
      const updated = await other.updateWebhook(a.id, {
        url: 'https://example.test/other', enabled: false, previousSecret: a.secret, previousSecretExpiresAt: T0 + 5, secret: 'whsec_new',
        updatedAt: a.updatedAt + 9,
      });
      assert.deepEqual(updated, {
        ...a, url: 'https://example.test/other', enabled: false, previousSecret: a.secret, previousSecretExpiresAt: T0 + 5,
        secret: 'whsec_new', updatedAt: a.updatedAt + 9,
      });
      assert.deepEqual(await store.getWebhook(p, a.id), updated);
      assert.deepEqual((await store.updateWebhook(a.id, { eventTypes: [], updatedAt: a.updatedAt + 10 }))?.previousSecret, a.secret);
      assert.equal(await store.updateWebhook(uid('wh'), { updatedAt: 1 }), undefined);
      assert.equal(await other.deleteWebhook(p, b.id), true);
      assert.equal(await other.deleteWebhook(p, b.id), false);
      assert.equal(await store.countWebhooks(p), 1);
    });

    it('records one delivery per enabled endpoint that wants the type, or for the one endpoint named', async () => {
      const { store, other } = stores();
      const p = await projectOf();
      const all = await webhook(p);
      const revokes = await webhook(p, { eventTypes: ['token.revoked'] });
      const disabled = await webhook(p, { enabled: false });
      await webhook(await projectOf());
      assert.equal(await store.recordEvent(event(p, 'token.revoked')), 2);
      assert.equal(await other.recordEvent(event(p, 'credential.revoked')), 1);
      assert.equal(await store.recordEvent(event(p, 'webhook.test', { webhookId: disabled.id })), 1);
      assert.equal(await store.recordEvent(event(await projectOf(), 'token.revoked')), 0);
      assert.equal((await other.listDeliveries(all.id, { limit: 10 })).length, 2);
      const [d] = await store.listDeliveries(revokes.id, { limit: 10 });
      assert.equal(d?.eventType, 'token.revoked');
      assert.equal(d?.status, 'pending');
      assert.equal(d?.attempts, 0);
      assert.equal(d?.nextAttemptAt, T0);
      assert.deepEqual(await other.getDelivery(revokes.id, d!.id), d);
      assert.equal(await other.getDelivery(all.id, d!.id), undefined);
      assert.equal((await store.listDeliveries(disabled.id, { limit: 10 }))[0]?.eventType, 'webhook.test');
    });

    it('leases due deliveries to one claimer at a time, until the lease ends', async () => {
      const { store, other } = stores();
      const p = await projectOf();
      const w = await webhook(p, { previousSecret: 'whsec_old', previousSecretExpiresAt: T0 + 1000 });
      for (let i = 0; i < 6; i++) await store.recordEvent(event(p, 'token.revoked', { recordedAt: T0 - 100_000 + i }));
      await store.recordEvent(event(p, 'token.revoked', { recordedAt: T0 + 60_000 }));
      const [a, b] = await Promise.all([claim(store, { limit: 4 }), claim(other, { limit: 4 })]);
      const mine = (jobs: typeof a) => jobs.filter((j) => j.webhookId === w.id);
      const ids = [...mine(a), ...mine(b)].map((j) => j.id);
      assert.equal(ids.length, 6, 'every due delivery once, the future one not');
      assert.equal(new Set(ids).size, 6, 'no delivery twice');
      const job = mine(a)[0] ?? mine(b)[0]!;
      assert.equal(job.url, w.url);
      assert.deepEqual(job.secrets, [w.secret, 'whsec_old']);
      assert.equal(mine(await claim(store, { nowMs: T0 + 29_000 })).length, 0, 'leased');
      assert.equal(mine(await claim(store, { nowMs: T0 + 30_000, excludeWebhookIds: [w.id] })).length, 0, 'excluded');
      const again = mine(await claim(other, { nowMs: T0 + 30_000 }));
      assert.equal(again.length, 6, 'lease over: the other claims them again');
      const w2 = await webhook(p);
      for (let i = 0; i < 3; i++) await store.recordEvent(event(p, 'credential.rotated', { recordedAt: T0 + 40_000 + i }));
      const fair = await claim(other, { nowMs: T0 + 50_000, perWebhook: 1 });
      assert.deepEqual([fair.filter((j) => j.webhookId === w.id).length, fair.filter((j) => j.webhookId === w2.id).length], [1, 1],
        'one per endpoint and claim, the oldest due');
      assert.deepEqual(mine(await claim(store, { nowMs: T0 + 2000, limit: 100 }))
        .map((j) => j.secrets.length), [], 'nothing due while leased');
    });

    it('records outcomes only for the lease owner: delivered, retried later, failed', async () => {
      const { store, other } = stores();
      const p = await projectOf();
      const w = await webhook(p);
      for (let i = 0; i < 3; i++) await store.recordEvent(event(p, 'credential.rotated'));
      const owner = uid('own');
      const jobs = await claim(store, { owner });
      const [d1, d2, d3] = jobs.filter((j) => j.webhookId === w.id);
      assert.ok(d1 && d2 && d3);
      assert.equal(await other.completeDelivery(d1.id, uid('own'), {
        attemptedAt: T0 + 1, delivered: true, statusCode: 200, error: null, nextAttemptAt: null,
      }), false, 'not the owner');
      assert.equal(await other.completeDelivery(d1.id, owner, {
        attemptedAt: T0 + 1, delivered: true, statusCode: 204, error: null, nextAttemptAt: null,
      }), true);
      assert.equal(await store.completeDelivery(d2.id, owner, {
        attemptedAt: T0 + 1, delivered: false, statusCode: 503, error: 'answered 503', nextAttemptAt: T0 + 5000,
      }), true);
      assert.equal(await store.completeDelivery(d3.id, owner, {
        attemptedAt: T0 + 1, delivered: false, statusCode: null, error: 'connection failed (ECONNREFUSED)', nextAttemptAt: null,
      }), true);
      assert.equal(await store.completeDelivery(d1.id, owner, {
        attemptedAt: T0 + 2, delivered: true, statusCode: 200, error: null, nextAttemptAt: null,
      }), false, 'already delivered');
      const byId = new Map((await other.listDeliveries(w.id, { limit: 10 })).map((d) => [d.id, d]));
      assert.deepEqual([byId.get(d1.id)?.status, byId.get(d1.id)?.attempts, byId.get(d1.id)?.lastStatusCode,
        byId.get(d1.id)?.deliveredAt, byId.get(d1.id)?.nextAttemptAt], ['delivered', 1, 204, T0 + 1, null]);
      assert.deepEqual([byId.get(d2.id)?.status, byId.get(d2.id)?.lastError, byId.get(d2.id)?.nextAttemptAt], ['pending', 'answered 503', T0 + 5000]);
      assert.deepEqual([byId.get(d3.id)?.status, byId.get(d3.id)?.lastStatusCode, byId.get(d3.id)?.nextAttemptAt], ['failed', null, null]);
      assert.deepEqual((await claim(other, { nowMs: T0 + 5000 })).filter((j) => j.webhookId === w.id).map((j) => [j.id, j.attempts]),
        [[d2.id, 1]], 'the retry is due again, with its attempt count');
      assert.ok((await store.purgeDeliveries(T0 + 1)) >= 2);
      assert.deepEqual((await other.listDeliveries(w.id, { limit: 10 })).map((d) => d.id), [d2.id], 'the pending one stays');
    });

    it('lists deliveries newest first, page by page, and drops them with their endpoint', async () => {
      const { store, other } = stores();
      const p = await projectOf();
      const w = await webhook(p);
      for (let i = 0; i < 5; i++) await store.recordEvent(event(p, 'project.archived'));
      const all = await other.listDeliveries(w.id, { limit: 10 });
      assert.equal(all.length, 5);
      const first = await store.listDeliveries(w.id, { limit: 2 });
      const second = await store.listDeliveries(w.id, { limit: 2, afterId: first[1]!.id });
      assert.deepEqual([...first, ...second].map((d) => d.id), all.slice(0, 4).map((d) => d.id));
      assert.deepEqual(await store.listDeliveries(w.id, { limit: 2, afterId: uid('dlv') }), []);
      await other.deleteWebhook(p, w.id);
      assert.deepEqual(await store.listDeliveries(w.id, { limit: 10 }), []);
      assert.equal(await store.getDelivery(w.id, all[0]!.id), undefined);
    });
  });
}
