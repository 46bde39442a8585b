import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import type { WebhookEvent } from '../../../sdk/server/src/index.ts';
import { bearer, createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { makeCertificate } from '../../../test/helpers/tls.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.ts';
import { join } from '../../../test/helpers/media-session.ts';
import { issue, useTempDirs } from '../../../test/helpers/grant-checks.ts';

interface WebhookBody { id: string; secret: string }
interface DeliveryBody {
  id: string; event_id: string; event_type: string; status: string; attempts: number; last_status_code: number | null;
  last_error: string | null; next_attempt_at: number | null; delivered_at: number | null;
}

/**
 * The platform, served in this process, delivering to a real HTTPS receiver with a self-signed
 * certificate (trusted through RTC_WEBHOOK_CA_FILE), which verifies every delivery with the server
 * SDK. A restart after SIGKILL is test/e2e/webhooks-kill.test.ts.
 */
describe('webhooks: signed events from a real platform to a real HTTPS receiver, at least once', () => {
  const tempDir = useTempDirs();
  let tls: { certFile: string; keyFile: string };
  let receiver: WebhookReceiver;
  let server: ServedPlatform;
  let dataDir: string;
  let customer: Customer;
  let webhook: WebhookBody;
  const outputs: string[] = [];

  // the media role too: its participant and room events go out as webhooks (docs/reference/webhooks.md)
  const start = async (): Promise<ServedPlatform> => serveInProcess({
    dataDir,
    roles: ['api', 'token', 'media'],
    env: { RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: tls.certFile, RTC_WEBHOOK_RETRY_BASE_MS: '100', RTC_LOG_LEVEL: 'trace' },
  });
  const api = (path: string): string => `${server.api}/v1/projects/${customer.projectId}${path}`;
  const auth = (): Record<string, string> => bearer(customer.accessToken);
  const rotate = async (): Promise<void> => {
    const res = await request(api(`/credentials/${customer.appId}/rotate`), { method: 'POST', headers: auth() });
    assert.equal(res.status, 200, res.text);
  };
  const rotations = (events: readonly WebhookEvent[]): number => events.filter((e) => e.type === 'credential.rotated').length;
  const deliveries = async (): Promise<DeliveryBody[]> => {
    const res = await request(api(`/webhooks/${webhook.id}/deliveries?limit=100`), { headers: auth() });
    assert.equal(res.status, 200, res.text);
    return res.json<{ deliveries: DeliveryBody[] }>().deliveries;
  };
  /** Until the delivery log shows every delivery attempted at least `n` times, by polling the API. */
  const attempted = async (n: number): Promise<DeliveryBody[]> => {
    for (;;) {
      const list = await deliveries();
      if (list.filter((d) => d.status === 'pending').every((d) => d.attempts >= n)) return list;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  before(async () => {
    tls = makeCertificate(tempDir());
    dataDir = tempDir();
    receiver = await startWebhookReceiver(tls);
    server = await start();
    customer = await createCustomer(server);
    const created = await request(api('/webhooks'), { headers: auth(), body: { url: receiver.url, description: 'test receiver' } });
    assert.equal(created.status, 201, created.text);
    webhook = created.json<WebhookBody>();
    receiver.secrets = [webhook.secret];
  });
  after(async () => {
    outputs.push(server?.output() ?? '');
    await server?.stop();
    await receiver?.stop();
    const all = outputs.join('');
    assert.ok(!all.includes(webhook.secret), 'the webhook secret is never logged');
  });

  it('delivers the test event through the outbox, and the delivery log shows it delivered', async () => {
    const res = await request(api(`/webhooks/${webhook.id}/test`), { method: 'POST', headers: auth() });
    assert.equal(res.status, 202, res.text);
    const { event_id: eventId } = res.json<{ event_id: string }>();
    await receiver.waitFor((events) => events.some((e) => e.id === eventId && e.type === 'webhook.test'), 'the test event');
    const delivered = receiver.deliveries.find((d) => d.event.id === eventId)!;
    assert.equal(delivered.headers['rtc-webhook-id'], eventId);
    assert.equal(delivered.event.project_id, customer.projectId);
    for (;;) {
      const entry = (await deliveries()).find((d) => d.event_id === eventId);
      if (entry?.status === 'delivered') {
        assert.equal(entry.attempts, 1);
        assert.equal(entry.last_status_code, 204);
        assert.equal(entry.next_attempt_at, null);
        assert.ok(entry.delivered_at !== null);
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('names no media node in participant and room events of a single node (media_node null)', async () => {
    const grant: TokenResponse = await issue(server.token, customer);
    const session = await join(grant);
    try {
      const of = (events: readonly WebhookEvent[]) => ({
        joined: events.find((e) => e.type === 'participant.joined' && e.data.room_id === grant.room_id),
        started: events.find((e) => e.type === 'room.started' && e.data.room_id === grant.room_id),
      });
      await receiver.waitFor((events) => { const found = of(events); return found.joined !== undefined && found.started !== undefined; },
        'participant.joined and room.started');
      const { joined, started } = of(receiver.deliveries.map((d) => d.event));
      assert.ok(joined?.type === 'participant.joined' && started?.type === 'room.started');
      assert.equal(joined.data.media_node, null);
      assert.equal(started.data.media_node, null);
      assert.equal(joined.data.participant_id, session.participantId);
    } finally {
      await session.close();
    }
  });

  it('signs token.revoked and credential.rotated events that the receiver verifies with the SDK', async () => {
    const grant: TokenResponse = await issue(server.token, customer);
    const revoked = await request(`${server.token}/v1/rtc/tokens/revoke`, {
      headers: { authorization: customer.auth }, body: { revocation_handle: grant.media.revocation_handle },
    });
    assert.equal(revoked.status, 200, revoked.text);
    await rotate();
    await receiver.waitFor((events) => events.some((e) => e.type === 'token.revoked') && rotations(events) >= 1,
      'token.revoked and credential.rotated');
    const event = receiver.deliveries.find((d) => d.event.type === 'token.revoked')!.event;
    assert.ok(event.type === 'token.revoked' && typeof event.data.grant_id === 'string' && event.data.expires_at > 0);
    const rotated = receiver.deliveries.find((d) => d.event.type === 'credential.rotated')!.event;
    assert.ok(rotated.type === 'credential.rotated' && rotated.data.app_id === customer.appId);
    // the rotation changed the App Secret: later calls of this customer use the new one
    customer = await createCustomer(server);
  });

  it('retries while the receiver is down and delivers every event once it is back on the same port', async () => {
    // the new customer's project gets its own endpoint
    const created = await request(api('/webhooks'), { headers: auth(), body: { url: receiver.url, event_types: ['credential.rotated'] } });
    assert.equal(created.status, 201, created.text);
    webhook = created.json<WebhookBody>();
    receiver.secrets.push(webhook.secret);
    const before = rotations(receiver.deliveries.map((d) => d.event));
    await receiver.stop();
    for (let i = 0; i < 3; i++) await rotate();
    const failed = await attempted(2);
    assert.equal(failed.length, 3);
    for (const d of failed) {
      assert.equal(d.status, 'pending');
      assert.match(d.last_error ?? '', /connection failed/);
      assert.equal(d.last_status_code, null);
      assert.ok(d.next_attempt_at !== null);
    }
    await receiver.start();
    await receiver.waitFor((events) => rotations(events) >= before + 3, 'the three rotations after the receiver came back');
  });

  it('loses no event when the platform is stopped with undelivered events and restarted on the same data', async () => {
    const before = rotations(receiver.deliveries.map((d) => d.event));
    await receiver.stop();
    for (let i = 0; i < 2; i++) await rotate();
    await attempted(1);
    outputs.push(server.output());
    await server.stop();
    await receiver.start();
    server = await start();
    await receiver.waitFor((events) => rotations(events) >= before + 2, 'the two rotations after the restart');
  });

  it('delivers project.archived, and every delivery carried a valid signature', async () => {
    const res = await request(api('/archive'), { method: 'POST', headers: auth() });
    assert.equal(res.status, 200, res.text);
    // this endpoint only wants rotations: the first project's endpoint got nothing from this project
    const created = await createCustomer(server);
    customer = created;
    const hook = await request(api('/webhooks'), { headers: auth(), body: { url: receiver.url, event_types: ['project.archived'] } });
    assert.equal(hook.status, 201, hook.text);
    receiver.secrets.push(hook.json<WebhookBody>().secret);
    const archived = await request(api('/archive'), { method: 'POST', headers: auth() });
    assert.equal(archived.status, 200, archived.text);
    await receiver.waitFor((events) => events.some((e) => e.type === 'project.archived' && e.project_id === customer.projectId),
      'project.archived');
    assert.equal(receiver.refused, 0);
  });
});
