import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WebhookEvent } from '../../sdk/server/src/index.ts';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { makeCertificate } from '../helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { useTempDirs } from './serve-helpers.ts';

/**
 * `rtc serve` killed (SIGKILL) with undelivered events in its outbox: a process of its own, since
 * the point is a process that ends without closing anything. The other delivery cases are
 * server/src/webhooks/webhooks.platform.test.ts.
 */
describe('webhooks: no event lost when rtc serve is killed', () => {
  const tempDir = useTempDirs();
  let tls: { certFile: string; keyFile: string };
  let receiver: WebhookReceiver;
  let server: RunningServer;
  let dataDir: string;
  let customer: Customer;
  let webhook: { id: string; secret: string };
  const outputs: string[] = [];

  const start = async (): Promise<RunningServer> => startServer({
    dataDir,
    roles: ['api', 'token'],
    env: { RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: tls.certFile, RTC_WEBHOOK_RETRY_BASE_MS: '100', RTC_LOG_LEVEL: 'trace' },
  });
  const api = (path: string): string => `${server.api}/v1/projects/${customer.projectId}${path}`;
  const auth = (): Record<string, string> => bearer(customer.accessToken);
  const rotations = (events: readonly WebhookEvent[]): number => events.filter((e) => e.type === 'credential.rotated').length;

  before(async () => {
    tls = makeCertificate(tempDir());
    dataDir = tempDir();
    receiver = await startWebhookReceiver(tls);
    server = await start();
    customer = await createCustomer(server);
    const created = await request(api('/webhooks'), { headers: auth(), body: { url: receiver.url, event_types: ['credential.rotated'] } });
    assert.equal(created.status, 201, created.text);
    webhook = created.json<{ id: string; secret: string }>();
    receiver.secrets = [webhook.secret];
  });
  after(async () => {
    outputs.push(server?.output() ?? '');
    await server?.stop();
    await receiver?.stop();
    assert.ok(!outputs.join('').includes(webhook.secret), 'the webhook secret is never logged');
  });

  it('loses no event when the platform is stopped (SIGKILL) with undelivered events and restarted on the same data', async () => {
    await receiver.stop();
    for (let i = 0; i < 2; i++) {
      const res = await request(api(`/credentials/${customer.appId}/rotate`), { method: 'POST', headers: auth() });
      assert.equal(res.status, 200, res.text);
    }
    // every event attempted once, and failed, before the kill
    for (;;) {
      const res = await request(api(`/webhooks/${webhook.id}/deliveries?limit=100`), { headers: auth() });
      assert.equal(res.status, 200, res.text);
      const pending = res.json<{ deliveries: { status: string; attempts: number }[] }>().deliveries.filter((d) => d.status === 'pending');
      if (pending.length === 2 && pending.every((d) => d.attempts >= 1)) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    outputs.push(server.output());
    server.process.kill('SIGKILL');
    assert.equal((await server.stop()).signal, 'SIGKILL');
    await receiver.start();
    server = await start();
    await receiver.waitFor((events) => rotations(events) >= 2, 'the two rotations after the SIGKILL restart');
  });
});
