import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSqliteStore } from '../store/sqlite.ts';
import { createHttpsSender, PRIVATE_TARGET } from './https-sender.ts';
import { newWebhookSecret } from '../core/ids.ts';
import type { Store } from '../store/port.ts';
import type { WebhookRecord } from './store.ts';
import { startWebhookDelivery, type DeliveryResult, type WebhookDelivery } from './delivery.ts';
import { createProjectEvents } from './endpoints.ts';
import { makeCertificate } from '../../../test/helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.ts';

const clock = { nowMs: () => Date.now() };

/**
 * The delivery worker against real HTTPS receivers and a real SQLite file: a receiver that never
 * answers holds back no other endpoint, two workers on one file send each delivery once, and a
 * delivery that keeps failing is given up.
 */
describe('webhook delivery worker', () => {
  let dir: string;
  let tls: { certFile: string; keyFile: string };
  let store: Store;
  let other: Store;
  let ok: WebhookReceiver;
  let silent: Server;
  let silentUrl: string;
  const senders: { close(): void }[] = [];
  const workers: WebhookDelivery[] = [];

  const sender = (allowPrivate = true, timeoutMs = 3000) => {
    const s = createHttpsSender({ timeoutMs, allowPrivate, ca: readFileSync(tls.certFile) });
    senders.push(s);
    return s;
  };
  const start = (s: Store, options: { allowPrivate?: boolean; giveUpAfterMs?: number; timeoutMs?: number; onDelivery?: (r: DeliveryResult) => void } = {}) => {
    const w = startWebhookDelivery({
      store: s, clock, send: sender(options.allowPrivate, options.timeoutMs),
      policy: { baseMs: 20, maxDelayMs: 50, giveUpAfterMs: options.giveUpAfterMs ?? 60_000 },
      pollIntervalMs: 20, onDelivery: options.onDelivery,
    });
    workers.push(w);
    return w;
  };
  const stopAll = async (): Promise<void> => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  };
  let projectNo = 0;
  const project = async (): Promise<string> => {
    projectNo += 1;
    const accountId = `acc_${projectNo}`;
    await store.insertAccount({ id: accountId, email: `w${projectNo}@example.test`, passwordHash: 'ph', createdAt: 0 });
    const id = `prj_${projectNo}`;
    await store.insertProject({ id, accountId, name: 'p', consoleAppId: `app_${projectNo}`, archivedAt: null, createdAt: 0, updatedAt: 0 });
    return id;
  };
  const webhook = async (projectId: string, url: string): Promise<WebhookRecord> => {
    const w: WebhookRecord = {
      id: `wh_${Math.random().toString(36).slice(2)}`, projectId, url, description: '', eventTypes: [], enabled: true,
      secret: newWebhookSecret(), previousSecret: null, previousSecretExpiresAt: null, createdAt: 0, updatedAt: 0,
    };
    await store.insertWebhook(w);
    return w;
  };
  const record = async (projectId: string, n: number): Promise<void> => {
    const events = createProjectEvents(store, clock);
    for (let i = 0; i < n; i++) await events.record({ projectId, type: 'credential.rotated', occurredAt: 1, data: { app_id: `app_${i}` } });
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rtc-webhook-worker-'));
    tls = makeCertificate(dir);
    store = createSqliteStore(join(dir, 'rtc.sqlite'));
    other = createSqliteStore(join(dir, 'rtc.sqlite'));
    ok = await startWebhookReceiver(tls);
    // accepts the TLS connection and reads the request, never answers
    silent = createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, () => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await stopAll();
    for (const s of senders) s.close();
    silent.closeAllConnections();
    silent.close();
    await ok.stop();
    await store.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers to a working endpoint while another never answers', async () => {
    const p = await project();
    const good = await webhook(p, ok.url);
    await webhook(p, silentUrl);
    ok.secrets = [good.secret];
    await record(p, 10);
    // the silent endpoint holds each request for a minute: ten events queued behind it would take ten
    start(store, { timeoutMs: 60_000 });
    await ok.waitFor((events) => events.filter((e) => e.project_id === p).length >= 10, 'ten events at the working endpoint', 30_000);
    await stopAll();
  });

  it('sends each delivery once when two workers share one SQLite file', async () => {
    const p = await project();
    const w = await webhook(p, ok.url);
    ok.secrets = [w.secret];
    await record(p, 20);
    let delivered = 0;
    const all = new Promise<void>((resolve) => {
      const onDelivery = (r: DeliveryResult): void => {
        if (r.webhookId === w.id && r.outcome === 'delivered' && ++delivered === 20) resolve();
      };
      start(store, { onDelivery });
      start(other, { onDelivery });
    });
    await all;
    await stopAll();
    const ids = ok.deliveries.filter((d) => d.event.project_id === p).map((d) => d.event.id);
    assert.equal(ids.length, 20, 'no event twice');
    const log = await store.listDeliveries(w.id, { limit: 100 });
    assert.ok(log.every((d) => d.status === 'delivered' && d.attempts === 1 && d.lastStatusCode === 204));
  });

  it('retries a failing endpoint and gives up after the limit, reporting each attempt', async () => {
    const p = await project();
    const w = await webhook(p, ok.url);
    ok.secrets = [w.secret];
    ok.answer = 500;
    const results: DeliveryResult[] = [];
    const done = new Promise<void>((resolve) => {
      start(store, {
        // long enough that a loaded machine still makes a second attempt before the limit
        giveUpAfterMs: 3000,
        onDelivery: (r) => {
          if (r.webhookId !== w.id) return;
          results.push(r);
          if (r.outcome === 'failed') resolve();
        },
      });
    });
    await record(p, 1);
    await done;
    await stopAll();
    ok.answer = 204;
    assert.ok(results.length >= 2, `${results.length} attempts`);
    assert.ok(results.slice(0, -1).every((r) => r.outcome === 'retry' && r.statusCode === 500));
    const [d] = await store.listDeliveries(w.id, { limit: 1 });
    assert.deepEqual([d?.status, d?.attempts, d?.lastStatusCode, d?.lastError, d?.nextAttemptAt],
      ['failed', results.length, 500, 'answered 500', null]);
  });

  it('refuses a private target at connect time unless allowed', async () => {
    const p = await project();
    const w = await webhook(p, ok.url);
    const attempted = new Promise<DeliveryResult>((resolve) => {
      start(store, { allowPrivate: false, onDelivery: (r) => { if (r.webhookId === w.id) resolve(r); } });
    });
    await record(p, 1);
    assert.equal((await attempted).outcome, 'retry');
    await stopAll();
    const [d] = await store.listDeliveries(w.id, { limit: 1 });
    assert.equal(d?.lastError, PRIVATE_TARGET);
    assert.equal(d?.lastStatusCode, null);
  });
});
