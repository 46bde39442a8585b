import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { makeCertificate } from '../helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { useTempDirs } from './serve-helpers.ts';

// the lease is the send's timeout and 5 s (docs/reference/webhooks.md): 6 s here
const TIMEOUT_MS = 1000;

/**
 * Webhooks of a cluster (docs/operations/scale-out.md): two api nodes on one PostgreSQL and one
 * Redis share one outbox; an api node killed in the middle of its sends leaves them to the other.
 */
describe('webhooks across api nodes: one killed mid-delivery, every event still arrives', () => {
  const tempDir = useTempDirs();
  let postgres: Postgres;
  let redis: RedisServer;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  let a: RunningServer;
  let b: RunningServer | undefined;
  let customer: Customer;
  let webhookId: string;

  const node = (): Promise<RunningServer> => startServer({ dataDir: tempDir(), roles: ['api', 'token'], env });
  const sendTestEvent = async (server: RunningServer): Promise<string> => {
    const res = await request(`${server.api}/v1/projects/${customer.projectId}/webhooks/${webhookId}/test`, {
      method: 'POST', headers: bearer(customer.accessToken),
    });
    assert.equal(res.status, 202, res.text);
    return res.json<{ event_id: string }>().event_id;
  };

  before(async () => {
    const tls = makeCertificate(tempDir());
    [postgres, redis, receiver] = await Promise.all([startPostgres(), startRedis(), startWebhookReceiver(tls)]);
    env = {
      DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url,
      RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: tls.certFile, RTC_WEBHOOK_RETRY_BASE_MS: '100',
      RTC_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    };
    a = await node();
    customer = await createCustomer(a);
    const created = await request(`${a.api}/v1/projects/${customer.projectId}/webhooks`, {
      headers: bearer(customer.accessToken), body: { url: receiver.url },
    });
    assert.equal(created.status, 201, created.text);
    const webhook = created.json<{ id: string; secret: string }>();
    webhookId = webhook.id;
    receiver.secrets = [webhook.secret];
  });
  after(async () => {
    await Promise.all([a, b].filter((s): s is RunningServer => s !== undefined).map((s) => s.stop()));
    await receiver?.stop();
    await redis?.dispose();
    await postgres?.stop();
  });

  it('re-sends what the killed node held, with the same event id, and delivers the rest from the other node', async () => {
    // A takes its own events at once and the receiver keeps both sends (two to one endpoint at most) unanswered
    receiver.hold = true;
    const first = [await sendTestEvent(a), await sendTestEvent(a), await sendTestEvent(a)];
    await receiver.waitForHeld((events) => events.length >= 2, 'two sends from A held by the receiver');
    const heldIds = receiver.held.map((d) => d.event.id);
    receiver.hold = false;
    // B joins while A is mid-delivery, and sends what A has not taken
    b = await node();
    const second = [await sendTestEvent(b), await sendTestEvent(b)];
    const killedAt = Date.now();
    a.process.kill('SIGKILL');
    const all = [...first, ...second];
    await receiver.waitFor((events) => all.every((id) => events.some((e) => e.id === id)), 'every event, from B', 60_000);
    const resentAfterMs = Date.now() - killedAt;
    // the held ones were seen twice, with the same id and signed body: a receiver de-duplicates by id
    for (const id of heldIds) {
      assert.ok(first.includes(id));
      const resent = receiver.deliveries.filter((d) => d.event.id === id);
      assert.equal(resent.length, 1, `${id} answered once`);
      assert.equal(resent[0]!.headers['rtc-webhook-id'], id);
    }
    assert.equal(receiver.refused, 0);
    assert.ok(resentAfterMs < 30_000, `re-sent ${resentAfterMs} ms after the kill, within the lease and a poll`);
    // the delivery log, read on the surviving node, shows every event delivered
    for (;;) {
      const res = await request(`${b.api}/v1/projects/${customer.projectId}/webhooks/${webhookId}/deliveries?limit=100`, {
        headers: bearer(customer.accessToken),
      });
      assert.equal(res.status, 200, res.text);
      const log = res.json<{ deliveries: { event_id: string; status: string }[] }>().deliveries;
      const delivered = new Set(log.filter((d) => d.status === 'delivered').map((d) => d.event_id));
      if (all.every((id) => delivered.has(id))) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
});
