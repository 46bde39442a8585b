import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_TTL_SECONDS, type Project } from '@rtc/protocol';
import type { BusEvent } from '../core/ports.ts';
import { type Account, bearer, createCustomer, createProject, type Customer, registerAccount } from '../../../test/helpers/customer.ts';
import { type HttpResult } from '../../../test/helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

describe('customer API: projects', () => {
  let server: InProcessPlatform;
  let owner: Account;
  let stranger: Customer;

  const call = (method: string, path: string, token: string, body?: unknown): Promise<HttpResult> =>
    server.request(`${server.api}${path}`, { method, headers: bearer(token), ...(body !== undefined && { body }) });

  before(async () => {
    server = await startInProcess();
    owner = await registerAccount(server);
    stranger = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });

  it('creates a project (201) with a prj_ id and its fields', async () => {
    const res = await call('POST', '/v1/projects', owner.accessToken, { name: '  Launch demo  ' });
    assert.equal(res.status, 201, res.text);
    const p = res.json<Project>();
    assert.deepEqual(Object.keys(p).sort(), ['archived', 'archived_at', 'created_at', 'id', 'name', 'updated_at']);
    assert.match(p.id, /^prj_[A-Za-z0-9_-]{22}$/);
    assert.equal(p.name, 'Launch demo');
    assert.equal(p.archived, false);
    assert.equal(p.archived_at, null);
    assert.ok(Number.isInteger(p.created_at));
    assert.equal(p.updated_at, p.created_at);
  });

  it('lists only the account\'s own projects, oldest first', async () => {
    const acc = await registerAccount(server);
    const empty = await call('GET', '/v1/projects', acc.accessToken);
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.json(), { projects: [] });
    const a = await createProject(server, acc.accessToken, 'first');
    const b = await createProject(server, acc.accessToken, 'second');
    const res = await call('GET', '/v1/projects', acc.accessToken);
    assert.equal(res.status, 200, res.text);
    const list = res.json<{ projects: Project[] }>().projects;
    assert.deepEqual(list.map((p) => p.id), [a, b]);
    assert.deepEqual(list.map((p) => p.name), ['first', 'second']);
    assert.ok(!list.some((p) => p.id === stranger.projectId));
  });

  it('gets a project by id (200)', async () => {
    const id = await createProject(server, owner.accessToken, 'fetch me');
    const res = await call('GET', `/v1/projects/${id}`, owner.accessToken);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json<Project>().id, id);
    assert.equal(res.json<Project>().name, 'fetch me');
  });

  it('renames a project with PATCH (200) and keeps the new name', async () => {
    const id = await createProject(server, owner.accessToken, 'old name');
    const res = await call('PATCH', `/v1/projects/${id}`, owner.accessToken, { name: 'new name' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json<Project>().name, 'new name');
    assert.ok(res.json<Project>().updated_at >= res.json<Project>().created_at);
    const again = await call('GET', `/v1/projects/${id}`, owner.accessToken);
    assert.equal(again.json<Project>().name, 'new name');
  });

  it('archives and unarchives a project, each idempotently', async () => {
    const id = await createProject(server, owner.accessToken);
    const archived = await call('POST', `/v1/projects/${id}/archive`, owner.accessToken);
    assert.equal(archived.status, 200, archived.text);
    assert.equal(archived.json<Project>().archived, true);
    const at = archived.json<Project>().archived_at;
    assert.ok(Number.isInteger(at));

    const twice = await call('POST', `/v1/projects/${id}/archive`, owner.accessToken);
    assert.equal(twice.status, 200, twice.text);
    assert.equal(twice.json<Project>().archived, true);
    assert.equal(twice.json<Project>().archived_at, at);
    assert.equal((await call('GET', `/v1/projects/${id}`, owner.accessToken)).json<Project>().archived, true);

    const restored = await call('POST', `/v1/projects/${id}/unarchive`, owner.accessToken);
    assert.equal(restored.status, 200, restored.text);
    assert.equal(restored.json<Project>().archived, false);
    assert.equal(restored.json<Project>().archived_at, null);
    const restoredTwice = await call('POST', `/v1/projects/${id}/unarchive`, owner.accessToken);
    assert.equal(restoredTwice.status, 200, restoredTwice.text);
    assert.equal(restoredTwice.json<Project>().archived, false);
  });

  it('refuses tokens for an archived project\'s credentials and accepts them again once unarchived', async () => {
    const c = await createCustomer(server);
    const issue = () => server.request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: c.auth }, body: { room_id: 'r', user_id: 'u', role: 'host' },
    });
    assert.equal((await call('POST', `/v1/projects/${c.projectId}/archive`, c.accessToken)).status, 200);
    const refused = await issue();
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json()['error'], 'project_archived');
    assert.equal((await call('POST', `/v1/projects/${c.projectId}/unarchive`, c.accessToken)).status, 200);
    assert.equal((await issue()).status, 200);
  });

  // docs/decisions/customers.md, "Archiving ends live sessions"
  it('persists a cut-off at the archive time and publishes it once per archive; unarchiving keeps it', async () => {
    const c = await createCustomer(server);
    const events: BusEvent[] = [];
    const unsubscribe = server.deps.bus.subscribe((e) => {
      if (e.type === 'project.archived' && e.projectId === c.projectId) events.push(e);
    });
    try {
      const first = (await call('POST', `/v1/projects/${c.projectId}/archive`, c.accessToken)).json<Project>().archived_at!;
      const cutoff = { projectId: c.projectId, cutAt: first, expiresAt: first + MAX_TTL_SECONDS + 60 };
      assert.deepEqual(await server.deps.store.projectCutoff(c.projectId), cutoff);
      assert.deepEqual(events, [{ type: 'project.archived', ...cutoff }]);
      assert.equal((await call('POST', `/v1/projects/${c.projectId}/archive`, c.accessToken)).status, 200);
      assert.equal(events.length, 1, 'archiving an archived project cuts nothing more');

      server.clock.advance(5000);
      assert.equal((await call('POST', `/v1/projects/${c.projectId}/unarchive`, c.accessToken)).status, 200);
      assert.deepEqual(await server.deps.store.projectCutoff(c.projectId), cutoff, 'an unarchive does not revive old tokens');
      const second = (await call('POST', `/v1/projects/${c.projectId}/archive`, c.accessToken)).json<Project>().archived_at!;
      assert.equal(second, first + 5);
      assert.deepEqual(await server.deps.store.projectCutoff(c.projectId), { projectId: c.projectId, cutAt: second, expiresAt: second + MAX_TTL_SECONDS + 60 });
      assert.equal(events.length, 2);
    } finally {
      unsubscribe();
    }
  });

  const invalid: [string, unknown, RegExp][] = [
    ['a missing name', {}, /name is required/],
    ['an empty name', { name: '   ' }, /name must not be empty/],
    ['a name over 100 characters', { name: 'n'.repeat(101) }, /name must be at most 100 characters/],
    ['a name that is not a string', { name: 42 }, /name must be a string/],
    ['a name with control characters', { name: 'a\u0007b' }, /control characters/],
    ['an unknown field', { name: 'ok', owner: 'someone' }, /unknown field "owner"/],
    ['a body that is not JSON', '{"name":', /not valid JSON/],
  ];
  for (const [what, body, rule] of invalid) {
    it(`answers ${what} with 400 invalid_request naming the rule (create and rename)`, async () => {
      const id = await createProject(server, owner.accessToken);
      for (const [method, path] of [['POST', '/v1/projects'], ['PATCH', `/v1/projects/${id}`]] as const) {
        const res = await server.request(`${server.api}${path}`, {
          method, headers: { ...bearer(owner.accessToken), 'content-type': 'application/json' }, body,
        });
        assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
        assert.equal(res.json()['error'], 'invalid_request');
        assert.match(String(res.json()['message']), rule);
      }
    });
  }

  it('answers a body that is not application/json with 415 invalid_request', async () => {
    const res = await server.request(`${server.api}/v1/projects`, {
      headers: { ...bearer(owner.accessToken), 'content-type': 'text/plain' }, body: 'name=x',
    });
    assert.equal(res.status, 415, res.text);
    assert.equal(res.json()['error'], 'invalid_request');
  });

  it('answers every project and credential route of another account\'s project with 404 (never 403)', async () => {
    const pid = stranger.projectId;
    const aid = stranger.appId;
    const routes: [string, string, unknown?][] = [
      ['GET', `/v1/projects/${pid}`],
      ['PATCH', `/v1/projects/${pid}`, { name: 'taken over' }],
      ['POST', `/v1/projects/${pid}/archive`],
      ['POST', `/v1/projects/${pid}/unarchive`],
      ['POST', `/v1/projects/${pid}/temporary-token`, { room_id: 'r', user_id: 'u', role: 'host' }],
      ['POST', `/v1/projects/${pid}/credentials`, { scopes: ['publisher'] }],
      ['GET', `/v1/projects/${pid}/credentials`],
      ['GET', `/v1/projects/${pid}/credentials/${aid}`],
      ['PATCH', `/v1/projects/${pid}/credentials/${aid}`, { name: 'taken over' }],
      ['POST', `/v1/projects/${pid}/credentials/${aid}/rotate`],
      ['POST', `/v1/projects/${pid}/credentials/${aid}/revoke`],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(method, path, owner.accessToken, body);
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.json()['error'], 'not_found');
      assert.ok(!res.text.includes(stranger.appSecret));
    }
    // nothing changed: the owner still sees the project as it was and the credential still works
    const own = await call('GET', `/v1/projects/${pid}`, stranger.accessToken);
    assert.equal(own.json<Project>().name, 'test project');
    assert.equal(own.json<Project>().archived, false);
    const token = await server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: stranger.auth }, body: { room_id: 'r', user_id: 'u', role: 'host' },
    });
    assert.equal(token.status, 200, token.text);
  });

  it('gives another account\'s project and a project that does not exist the same 404 body', async () => {
    const theirs = await call('GET', `/v1/projects/${stranger.projectId}`, owner.accessToken);
    const missing = await call('GET', `/v1/projects/prj_${'A'.repeat(22)}`, owner.accessToken);
    assert.equal(theirs.status, 404);
    assert.equal(missing.status, 404);
    assert.equal(theirs.text, missing.text);
  });

  it('answers an unknown project id with 404 on every route', async () => {
    for (const id of [`prj_${'B'.repeat(22)}`, 'nonsense']) {
      for (const [method, path, body] of [
        ['GET', `/v1/projects/${id}`],
        ['PATCH', `/v1/projects/${id}`, { name: 'x' }],
        ['POST', `/v1/projects/${id}/archive`],
        ['POST', `/v1/projects/${id}/unarchive`],
        ['GET', `/v1/projects/${id}/credentials`],
      ] as const) {
        const res = await call(method, path, owner.accessToken, body);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(res.json()['error'], 'not_found');
      }
    }
  });
});
