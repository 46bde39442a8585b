import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, createCustomer, registerAccount } from '../../../test/helpers/customer.ts';
import type { HttpResult } from '../../../test/helpers/http.ts';
import { useInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

interface WebhookBody {
  id: string; project_id: string; url: string; description: string; event_types: string[]; enabled: boolean;
  created_at: number; updated_at: number; previous_secret_expires_at: number | null; secret?: string;
}

const PUBLIC_URL = 'https://203.0.113.10/hook';

const calls = (server: () => InProcessPlatform, token: () => string) =>
  (method: string, path: string, body?: unknown): Promise<HttpResult> =>
    server().request(`${server().api}${path}`, { method, headers: bearer(token()), ...(body !== undefined && { body }) });

describe('customer API: webhook endpoints', () => {
  const server = useInProcess();

  it('creates an endpoint and shows its secret only in the create response', async () => {
    const c = await createCustomer(server());
    const call = calls(server, () => c.accessToken);
    const created = await call('POST', `/v1/projects/${c.projectId}/webhooks`,
      { url: PUBLIC_URL, event_types: ['token.revoked'], description: 'backend' });
    assert.equal(created.status, 201, created.text);
    const body = created.json<WebhookBody>();
    assert.match(body.id, /^wh_[A-Za-z0-9_-]{22}$/);
    assert.match(body.secret ?? '', /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual([body.url, body.event_types, body.description, body.enabled, body.project_id],
      [PUBLIC_URL, ['token.revoked'], 'backend', true, c.projectId]);
    const listed = await call('GET', `/v1/projects/${c.projectId}/webhooks`);
    assert.equal(listed.status, 200);
    const { secret, ...view } = body;
    assert.ok(secret);
    assert.deepEqual(listed.json<{ webhooks: WebhookBody[] }>().webhooks, [view]);
    assert.ok(!listed.text.includes(secret));
    const got = await call('GET', `/v1/projects/${c.projectId}/webhooks/${body.id}`);
    assert.deepEqual(got.json(), view);
  });

  it('refuses non-https URLs, URLs with credentials and, by default, private targets', async () => {
    const c = await createCustomer(server());
    const call = calls(server, () => c.accessToken);
    for (const url of ['http://203.0.113.10/hook', 'https://user:pw@203.0.113.10/hook', 'https://127.0.0.1/hook',
      'https://10.0.0.5/hook', 'https://[::1]/hook', 'https://169.254.169.254/latest', 'https://localhost:8443/hook', 'ftp://x']) {
      const res = await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url });
      assert.equal(res.status, 400, `${url}: ${res.text}`);
      assert.equal(res.json<{ error: string }>().error, 'invalid_request');
    }
    const unknownType = await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL, event_types: ['nope'] });
    assert.equal(unknownType.status, 400);
    const created = (await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL })).json<WebhookBody>();
    const moved = await call('PATCH', `/v1/projects/${c.projectId}/webhooks/${created.id}`, { url: 'https://127.0.0.1/x' });
    assert.equal(moved.status, 400, 'an update is checked like a create');
  });

  it('updates, rotates the secret with a grace period, and deletes', async () => {
    const c = await createCustomer(server());
    const call = calls(server, () => c.accessToken);
    const created = (await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL })).json<WebhookBody>();
    const path = `/v1/projects/${c.projectId}/webhooks/${created.id}`;
    const updated = await call('PATCH', path, { enabled: false, event_types: ['project.archived'], description: 'off' });
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual([updated.json<WebhookBody>().enabled, updated.json<WebhookBody>().event_types], [false, ['project.archived']]);
    const rotated = await call('POST', `${path}/rotate-secret`);
    assert.equal(rotated.status, 200, rotated.text);
    const r = rotated.json<WebhookBody>();
    assert.ok(r.secret && r.secret !== created.secret);
    const now = Math.floor(server().clock.nowMs() / 1000);
    assert.ok(r.previous_secret_expires_at !== null && r.previous_secret_expires_at >= now + 86_399);
    assert.equal((await call('GET', path)).json<WebhookBody>().previous_secret_expires_at, r.previous_secret_expires_at);
    assert.equal((await call('DELETE', path)).status, 204);
    assert.equal((await call('GET', path)).status, 404);
    assert.equal((await call('DELETE', path)).status, 404);
  });

  it('keeps endpoints to their project: another account gets 404, an archived project none new, at most 10', async () => {
    const c = await createCustomer(server());
    const call = calls(server, () => c.accessToken);
    const created = (await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL })).json<WebhookBody>();
    const stranger = await registerAccount(server());
    const other = calls(server, () => stranger.accessToken);
    for (const [method, suffix] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/test'], ['POST', '/rotate-secret'], ['GET', '/deliveries']] as const) {
      const res = await other(method, `/v1/projects/${c.projectId}/webhooks/${created.id}${suffix}`, method === 'PATCH' ? { enabled: false } : undefined);
      assert.equal(res.status, 404, `${method} ${suffix}`);
    }
    for (let i = 1; i < 10; i++) assert.equal((await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL })).status, 201);
    const eleventh = await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL });
    assert.equal(eleventh.status, 409, eleventh.text);
    assert.equal((await call('POST', `/v1/projects/${c.projectId}/archive`)).status, 200);
    const archived = await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL });
    assert.equal(archived.status, 403);
  });

  it('records events for the endpoints that want them, and pages the delivery log', async () => {
    const c = await createCustomer(server());
    const call = calls(server, () => c.accessToken);
    const every = (await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL })).json<WebhookBody>();
    const archives = (await call('POST', `/v1/projects/${c.projectId}/webhooks`,
      { url: PUBLIC_URL, event_types: ['project.archived'] })).json<WebhookBody>();
    const disabled = (await call('POST', `/v1/projects/${c.projectId}/webhooks`, { url: PUBLIC_URL })).json<WebhookBody>();
    await call('PATCH', `/v1/projects/${c.projectId}/webhooks/${disabled.id}`, { enabled: false });
    for (let i = 0; i < 3; i++) assert.equal((await call('POST', `/v1/projects/${c.projectId}/credentials/${c.appId}/rotate`)).status, 200);
    assert.equal((await call('POST', `/v1/projects/${c.projectId}/credentials/${c.appId}/revoke`)).status, 200);
    assert.equal((await call('POST', `/v1/projects/${c.projectId}/credentials/${c.appId}/revoke`)).status, 200, 'idempotent: no second event');
    const test = await call('POST', `/v1/projects/${c.projectId}/webhooks/${disabled.id}/test`);
    assert.equal(test.status, 202, test.text);
    const log = (id: string, query = 'limit=100') => call('GET', `/v1/projects/${c.projectId}/webhooks/${id}/deliveries?${query}`)
      .then((r) => r.json<{ deliveries: { event_id: string; event_type: string; status: string; attempts: number }[]; next_cursor: string | null }>());
    const all = await log(every.id);
    assert.deepEqual(all.deliveries.map((d) => d.event_type),
      ['credential.revoked', 'credential.rotated', 'credential.rotated', 'credential.rotated']);
    assert.ok(all.deliveries.every((d) => d.status === 'pending' && d.attempts === 0));
    assert.equal(new Set(all.deliveries.map((d) => d.event_id)).size, 4);
    assert.deepEqual((await log(archives.id)).deliveries, []);
    assert.deepEqual((await log(disabled.id)).deliveries.map((d) => [d.event_type, d.event_id]),
      [['webhook.test', test.json<{ event_id: string }>().event_id]]);

    const first = await log(every.id, 'limit=3');
    assert.equal(first.deliveries.length, 3);
    assert.ok(first.next_cursor);
    const second = await log(every.id, `limit=3&cursor=${encodeURIComponent(first.next_cursor)}`);
    assert.deepEqual([...first.deliveries, ...second.deliveries], all.deliveries);
    assert.equal(second.next_cursor, null);
    const foreign = await call('GET', `/v1/projects/${c.projectId}/webhooks/${archives.id}/deliveries?cursor=${encodeURIComponent(first.next_cursor)}`);
    assert.equal(foreign.status, 400, 'a cursor of another endpoint');

    assert.equal((await call('POST', `/v1/projects/${c.projectId}/archive`)).status, 200);
    assert.deepEqual((await log(archives.id)).deliveries.map((d) => d.event_type), ['project.archived']);
  });
});
