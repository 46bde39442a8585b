import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Credential, TokenResponse } from '@rtc/protocol';
import { bearer, createProject, registerAccount, type Account } from '../../../test/helpers/customer.ts';
import { basic, freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

/** A credential, with its App Secret when created or rotated. */
type CredentialBody = Credential & { readonly app_secret?: string };

const VIEW_FIELDS = [
  'app_id', 'created_at', 'ip_allowlist', 'max_ttl_seconds', 'name', 'project_id', 'revoked_at', 'rotated_at',
  'scopes', 'status', 'updated_at',
];

describe('customer API: credentials', () => {
  let server: InProcessPlatform;
  let owner: Account;
  let projectId: string;
  let secretHashKey: Buffer;

  const base = (): string => `${server.api}/v1/projects/${projectId}/credentials`;
  const call = (method: string, url: string, body?: unknown): Promise<HttpResult> =>
    server.request(url, { method, headers: bearer(owner.accessToken), ...(body !== undefined && { body }) });
  const create = async (body: unknown, project = projectId): Promise<CredentialBody> => {
    const res = await call('POST', `${server.api}/v1/projects/${project}/credentials`, body);
    assert.equal(res.status, 201, res.text);
    return res.json<CredentialBody>();
  };
  const patch = (appId: string, body: unknown): Promise<HttpResult> => call('PATCH', `${base()}/${appId}`, body);
  const issue = (appId: string, secret: string, body: Record<string, unknown> = {}, localAddress?: string): Promise<HttpResult> =>
    server.request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: basic(appId, secret) },
      body: { room_id: 'room-1', user_id: 'user-1', role: 'speaker', ...body },
      ...(localAddress !== undefined && { localAddress }),
    });
  /** The stored form of a secret (HMAC-SHA-256 under the data directory's key). */
  const storedHash = (secret: string): string => createHmac('sha256', secretHashKey).update(secret).digest('base64url');

  before(async () => {
    server = await startInProcess();
    owner = await registerAccount(server);
    projectId = await createProject(server, owner.accessToken);
    const keys = JSON.parse(readFileSync(join(server.dataDir, 'keys.json'), 'utf8')) as { secret_hash_key: string };
    secretHashKey = Buffer.from(keys.secret_hash_key, 'base64url');
  });
  after(async () => {
    await server.close();
  });

  it('creates a credential with scopes, IP allowlist and TTL limit (201, secret shown once)', async () => {
    const res = await call('POST', base(), {
      name: 'backend', scopes: ['subscriber', 'publisher'], ip_allowlist: ['127.0.0.1/32', '2001:db8::/32', '10.1.2.3'],
      max_ttl_seconds: 900,
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers['cache-control'], 'no-store');
    const c = res.json<CredentialBody>();
    assert.deepEqual(Object.keys(c).sort(), [...VIEW_FIELDS, 'app_secret'].sort());
    assert.match(c.app_id, /^app_[A-Za-z0-9_-]{22}$/);
    assert.match(c.app_secret ?? '', /^sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(c.project_id, projectId);
    assert.equal(c.name, 'backend');
    assert.deepEqual(c.scopes, ['publisher', 'subscriber']);
    assert.deepEqual(c.ip_allowlist, ['127.0.0.1/32', '2001:db8::/32', '10.1.2.3']);
    assert.equal(c.max_ttl_seconds, 900);
    assert.equal(c.status, 'active');
    assert.equal(c.rotated_at, null);
    assert.equal(c.revoked_at, null);

    const token = await issue(c.app_id, c.app_secret ?? '', { ttl_seconds: 900, publish_streams: [1] });
    assert.equal(token.status, 200, token.text);
    assert.equal(token.json<TokenResponse>().app_id, c.app_id);
    assert.equal(token.json<TokenResponse>().project_id, projectId);
  });

  it('defaults the name, an open allowlist and the one-hour TTL limit', async () => {
    const c = await create({ scopes: [] });
    assert.equal(c.name, 'default');
    assert.deepEqual(c.scopes, []);
    assert.deepEqual(c.ip_allowlist, []);
    assert.equal(c.max_ttl_seconds, 3600);
    const token = await issue(c.app_id, c.app_secret ?? '', { ttl_seconds: 3600 }, freshAddress());
    assert.equal(token.status, 200, token.text);
  });

  it('never shows the secret or its stored hash in the list or the single view', async () => {
    const c = await create({ scopes: ['publisher'] });
    const secret = c.app_secret ?? '';
    const list = await call('GET', base());
    assert.equal(list.status, 200, list.text);
    const listed = list.json<{ credentials: CredentialBody[] }>().credentials;
    assert.ok(listed.some((x) => x.app_id === c.app_id));
    for (const item of listed) assert.deepEqual(Object.keys(item).sort(), VIEW_FIELDS);
    const one = await call('GET', `${base()}/${c.app_id}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(Object.keys(one.json()).sort(), VIEW_FIELDS);
    assert.equal(one.json<CredentialBody>().app_id, c.app_id);
    for (const res of [list, one]) {
      assert.ok(!res.text.includes(secret), 'the App Secret is shown');
      assert.ok(!res.text.includes(secret.slice(3)), 'the App Secret is shown without its prefix');
      assert.ok(!res.text.includes(storedHash(secret)), 'the stored hash is shown');
      assert.doesNotMatch(res.text, /secret|hash/i);
    }
  });

  it('lists the project\'s credentials in creation order', async () => {
    const pid = await createProject(server, owner.accessToken, 'ordered');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await create({ name: `c${i}`, scopes: ['subscriber'] }, pid)).app_id);
    const list = await call('GET', `${server.api}/v1/projects/${pid}/credentials`);
    assert.deepEqual(list.json<{ credentials: CredentialBody[] }>().credentials.map((c) => c.app_id), ids);
  });

  it('updates the scopes, with effect on the token API at once', async () => {
    const c = await create({ scopes: ['publisher', 'subscriber'] });
    const secret = c.app_secret ?? '';
    assert.equal((await issue(c.app_id, secret, { publish_streams: [1] })).status, 200);

    const res = await patch(c.app_id, { scopes: ['subscriber'] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json<CredentialBody>().scopes, ['subscriber']);
    assert.ok(!res.text.includes(secret));
    const denied = await issue(c.app_id, secret, { publish_streams: [1] });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.json()['error'], 'scope_denied');
    assert.equal((await issue(c.app_id, secret, { subscribe_streams: [2] })).status, 200);

    assert.equal((await patch(c.app_id, { scopes: ['publisher'] })).status, 200);
    assert.equal((await issue(c.app_id, secret, { publish_streams: [1] })).status, 200);
    assert.equal((await issue(c.app_id, secret, { subscribe_room: true })).json()['error'], 'scope_denied');
  });

  it('updates the IP allowlist, with effect on the token API at once', async () => {
    const c = await create({ scopes: ['publisher'] });
    const secret = c.app_secret ?? '';
    const caller = freshAddress();
    assert.equal((await issue(c.app_id, secret, {}, caller)).status, 200);

    const res = await patch(c.app_id, { ip_allowlist: ['192.0.2.0/24', 'fd00::/8'] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json<CredentialBody>().ip_allowlist, ['192.0.2.0/24', 'fd00::/8']);
    const outside = await issue(c.app_id, secret, {}, caller);
    assert.equal(outside.status, 403, outside.text);
    assert.equal(outside.json()['error'], 'ip_not_allowed');

    assert.equal((await patch(c.app_id, { ip_allowlist: [`${caller}/32`] })).status, 200);
    assert.equal((await issue(c.app_id, secret, {}, caller)).status, 200);
    assert.equal((await issue(c.app_id, secret, {}, freshAddress())).json()['error'], 'ip_not_allowed');

    assert.equal((await patch(c.app_id, { ip_allowlist: [] })).status, 200);
    assert.equal((await issue(c.app_id, secret, {}, freshAddress())).status, 200);
  });

  it('updates the TTL limit, with effect on the token API at once', async () => {
    const c = await create({ scopes: ['publisher'] });
    const secret = c.app_secret ?? '';
    assert.equal((await issue(c.app_id, secret, { ttl_seconds: 1200 })).status, 200);

    const res = await patch(c.app_id, { max_ttl_seconds: 300 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json<CredentialBody>().max_ttl_seconds, 300);
    const tooLong = await issue(c.app_id, secret, { ttl_seconds: 1200 });
    assert.equal(tooLong.status, 400, tooLong.text);
    assert.equal(tooLong.json()['error'], 'invalid_request');
    assert.match(String(tooLong.json()['message']), /300/);
    const within = await issue(c.app_id, secret, { ttl_seconds: 300 });
    assert.equal(within.status, 200, within.text);
    assert.equal(within.json<TokenResponse>().expires_at - within.json<TokenResponse>().issued_at, 300);
  });

  it('renames a credential and keeps every other field', async () => {
    const c = await create({ name: 'before', scopes: ['subscriber'], ip_allowlist: ['127.0.0.0/8'], max_ttl_seconds: 120 });
    const res = await patch(c.app_id, { name: 'after' });
    assert.equal(res.status, 200, res.text);
    const u = res.json<CredentialBody>();
    assert.equal(u.name, 'after');
    assert.deepEqual(u.scopes, ['subscriber']);
    assert.deepEqual(u.ip_allowlist, ['127.0.0.0/8']);
    assert.equal(u.max_ttl_seconds, 120);
    assert.equal((await call('GET', `${base()}/${c.app_id}`)).json<CredentialBody>().name, 'after');
  });

  it('rotates the secret: the new one works and the old one gets 401 at once', async () => {
    const c = await create({ scopes: ['publisher'] });
    const old = c.app_secret ?? '';
    assert.equal((await issue(c.app_id, old)).status, 200);
    const unknownApp = await issue(`app_${'Z'.repeat(22)}`, old);

    const res = await call('POST', `${base()}/${c.app_id}/rotate`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['cache-control'], 'no-store');
    const rotated = res.json<CredentialBody>();
    assert.match(rotated.app_secret ?? '', /^sk_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(rotated.app_secret, old);
    assert.equal(rotated.app_id, c.app_id);
    assert.ok(Number.isInteger(rotated.rotated_at));

    const refused = await issue(c.app_id, old);
    assert.equal(refused.status, 401, refused.text);
    assert.equal(refused.text, unknownApp.text);
    assert.equal((await issue(c.app_id, rotated.app_secret ?? '')).status, 200);
    const shown = await call('GET', `${base()}/${c.app_id}`);
    assert.ok(!shown.text.includes(rotated.app_secret ?? ''));
  });

  it('revokes a credential: 401 at once, identical to an unknown App ID', async () => {
    const c = await create({ scopes: ['publisher'] });
    const secret = c.app_secret ?? '';
    assert.equal((await issue(c.app_id, secret)).status, 200);
    const unknownApp = await issue(`app_${'Y'.repeat(22)}`, secret);

    const res = await call('POST', `${base()}/${c.app_id}/revoke`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json<CredentialBody>().status, 'revoked');
    assert.ok(Number.isInteger(res.json<CredentialBody>().revoked_at));
    assert.equal(res.json<CredentialBody>().app_secret, undefined);
    const refused = await issue(c.app_id, secret);
    assert.equal(refused.status, 401, refused.text);
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="rtc"');
    assert.equal(refused.text, unknownApp.text);
  });

  it('revokes idempotently', async () => {
    const c = await create({ scopes: ['publisher'] });
    const first = await call('POST', `${base()}/${c.app_id}/revoke`);
    const second = await call('POST', `${base()}/${c.app_id}/revoke`);
    assert.equal(first.status, 200, first.text);
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.json(), first.json());
  });

  it('refuses to update or rotate a revoked credential (409 conflict)', async () => {
    const c = await create({ scopes: ['publisher'] });
    assert.equal((await call('POST', `${base()}/${c.app_id}/revoke`)).status, 200);
    const updated = await patch(c.app_id, { scopes: ['publisher', 'subscriber'] });
    assert.equal(updated.status, 409, updated.text);
    assert.equal(updated.json()['error'], 'conflict');
    const rotated = await call('POST', `${base()}/${c.app_id}/rotate`);
    assert.equal(rotated.status, 409, rotated.text);
    assert.equal(rotated.json()['error'], 'conflict');
    assert.ok(!rotated.text.includes('sk_'));
    assert.equal((await call('GET', `${base()}/${c.app_id}`)).json<CredentialBody>().status, 'revoked');
  });

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['a CIDR prefix over 32', { scopes: [], ip_allowlist: ['10.0.0.0/33'] }, /ip_allowlist/],
    ['an IPv6 prefix over 128', { scopes: [], ip_allowlist: ['2001:db8::/129'] }, /ip_allowlist/],
    ['a host name in the allowlist', { scopes: [], ip_allowlist: ['example.com'] }, /ip_allowlist/],
    ['a CIDR without its prefix', { scopes: [], ip_allowlist: ['10.0.0.0/'] }, /ip_allowlist/],
    ['an allowlist that is not a list', { scopes: [], ip_allowlist: '10.0.0.0/8' }, /ip_allowlist/],
    ['a number in the allowlist', { scopes: [], ip_allowlist: [10] }, /ip_allowlist/],
    ['an unknown scope', { scopes: ['admin'] }, /scopes may hold only publisher and subscriber/],
    ['a repeated scope', { scopes: ['publisher', 'publisher'] }, /scopes must not repeat/],
    ['scopes as a string', { scopes: 'publisher' }, /scopes must be an array/],
    ['missing scopes', {}, /scopes is required/],
    ['a TTL limit of 0', { scopes: [], max_ttl_seconds: 0 }, /max_ttl_seconds/],
    ['a TTL limit over 3600', { scopes: [], max_ttl_seconds: 3601 }, /max_ttl_seconds must be at most 3600/],
    ['a fractional TTL limit', { scopes: [], max_ttl_seconds: 1.5 }, /max_ttl_seconds must be an integer/],
    ['an unknown field', { scopes: [], app_secret: 'sk_mine' }, /unknown field "app_secret"/],
  ];
  for (const [what, body, rule] of invalid) {
    it(`answers ${what} with 400 invalid_request naming the rule`, async () => {
      const created = await call('POST', base(), body);
      assert.equal(created.status, 400, created.text);
      assert.equal(created.json()['error'], 'invalid_request');
      assert.match(String(created.json()['message']), rule);
    });
  }

  it('applies the same rules to updates (400 naming the rule, nothing changed)', async () => {
    const c = await create({ scopes: ['publisher'], ip_allowlist: ['127.0.0.0/8'] });
    for (const [body, rule] of [
      [{ ip_allowlist: ['300.1.1.1/8'] }, /ip_allowlist/],
      [{ scopes: ['owner'] }, /scopes may hold only/],
      [{ max_ttl_seconds: 7200 }, /max_ttl_seconds/],
      [{ name: '' }, /name must not be empty/],
      [{ app_id: 'app_x' }, /unknown field "app_id"/],
    ] as const) {
      const res = await patch(c.app_id, body);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json()['error'], 'invalid_request');
      assert.match(String(res.json()['message']), rule);
    }
    const shown = (await call('GET', `${base()}/${c.app_id}`)).json<CredentialBody>();
    assert.deepEqual(shown.ip_allowlist, ['127.0.0.0/8']);
    assert.deepEqual(shown.scopes, ['publisher']);
    assert.equal(shown.max_ttl_seconds, 3600);
  });

  it('holds at most 50 active credentials per project; revoked ones make room (409 conflict beyond)', async () => {
    const pid = await createProject(server, owner.accessToken, 'full');
    const url = `${server.api}/v1/projects/${pid}/credentials`;
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push((await create({ scopes: [] }, pid)).app_id);
    const over = await call('POST', url, { scopes: [] });
    assert.equal(over.status, 409, over.text);
    assert.equal(over.json()['error'], 'conflict');
    assert.match(String(over.json()['message']), /50/);

    assert.equal((await call('POST', `${url}/${ids[0]}/revoke`)).status, 200);
    const again = await call('POST', url, { scopes: [] });
    assert.equal(again.status, 201, again.text);
    assert.equal((await call('POST', url, { scopes: [] })).status, 409);
  });

  it('refuses new credentials in an archived project (403 project_archived)', async () => {
    const pid = await createProject(server, owner.accessToken, 'to archive');
    assert.equal((await call('POST', `${server.api}/v1/projects/${pid}/archive`)).status, 200);
    const res = await call('POST', `${server.api}/v1/projects/${pid}/credentials`, { scopes: ['publisher'] });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.json()['error'], 'project_archived');
    assert.deepEqual((await call('GET', `${server.api}/v1/projects/${pid}/credentials`)).json(), { credentials: [] });
    assert.equal((await call('POST', `${server.api}/v1/projects/${pid}/unarchive`)).status, 200);
    assert.equal((await call('POST', `${server.api}/v1/projects/${pid}/credentials`, { scopes: ['publisher'] })).status, 201);
  });

  it('answers an unknown App ID, or one of another project of the account, with 404', async () => {
    const other = await createProject(server, owner.accessToken, 'other');
    const foreign = await create({ scopes: ['publisher'] }, other);
    for (const appId of [`app_${'Q'.repeat(22)}`, foreign.app_id, 'nonsense']) {
      for (const [method, url, body] of [
        ['GET', `${base()}/${appId}`],
        ['PATCH', `${base()}/${appId}`, { name: 'x' }],
        ['POST', `${base()}/${appId}/rotate`],
        ['POST', `${base()}/${appId}/revoke`],
      ] as const) {
        const res = await call(method, url, body);
        assert.equal(res.status, 404, `${method} ${url}: ${res.text}`);
        assert.equal(res.json()['error'], 'not_found');
      }
    }
    assert.equal((await issue(foreign.app_id, foreign.app_secret ?? '')).status, 200);
  });
});
