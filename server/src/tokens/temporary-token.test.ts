import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import { bearer, createCustomer, createProject, type Customer } from '../../../test/helpers/customer.ts';
import { basic, type HttpResult } from '../../../test/helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const TOKEN_FIELDS = [
  'app_id', 'expires_at', 'issued_at', 'media', 'project_id', 'publish_streams', 'role', 'room_id', 'subscribe_room',
  'subscribe_streams', 'user_id',
];

describe('POST /v1/projects/{id}/temporary-token', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let stranger: Customer;

  const temporary = (projectId: string, body: unknown, token = customer.accessToken): Promise<HttpResult> =>
    server.request(`${server.api}/v1/projects/${projectId}/temporary-token`, { headers: bearer(token), body });

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    stranger = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });

  it('issues a console test token (200) with the token response shape', async () => {
    const res = await temporary(customer.projectId, {
      room_id: 'demo-room', user_id: 'console-user', role: 'host', publish_streams: [1], subscribe_room: true,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(String(res.headers['x-request-id']), /^req_/);
    const t = res.json<TokenResponse>();
    assert.deepEqual(Object.keys(t).sort(), TOKEN_FIELDS);
    assert.equal(t.project_id, customer.projectId);
    assert.equal(t.room_id, 'demo-room');
    assert.equal(t.user_id, 'console-user');
    assert.equal(t.role, 'host');
    assert.deepEqual(t.publish_streams, [1]);
    assert.deepEqual(t.subscribe_streams, []);
    assert.equal(t.subscribe_room, true);
    assert.equal(t.expires_at - t.issued_at, 600);
    assert.equal(t.media.encryption, 'aes-256-gcm');
    assert.match(t.media.key, /^[A-Za-z0-9_-]{43}$/);
    assert.match(t.media.revocation_handle, /^rvk_/);

    const jwks = await server.request(`${server.token}/.well-known/jwks.json`);
    const { payload } = await jwtVerify(t.media.grant, createLocalJWKSet(jwks.json()), {
      currentDate: new Date(server.clock.nowMs()), audience: 'rtc-media', typ: 'rtc-grant+jwt', algorithms: ['EdDSA'],
    });
    assert.equal(payload['prj'], customer.projectId);
    assert.equal(payload['app'], t.app_id);
    assert.equal(payload.exp, t.expires_at);
  });

  it('names the project\'s console App ID: stable for the project, no customer credential\'s', async () => {
    const body = { room_id: 'r', user_id: 'u', role: 'audience' };
    const a = (await temporary(customer.projectId, body)).json<TokenResponse>();
    const b = (await temporary(customer.projectId, body)).json<TokenResponse>();
    assert.match(a.app_id, /^app_[A-Za-z0-9_-]{22}$/);
    assert.equal(a.app_id, b.app_id);
    assert.notEqual(a.app_id, customer.appId);

    const otherProject = await createProject(server, customer.accessToken, 'second');
    const c = await temporary(otherProject, body);
    assert.equal(c.status, 200, c.text);
    assert.equal(c.json<TokenResponse>().project_id, otherProject);
    assert.notEqual(c.json<TokenResponse>().app_id, a.app_id);

    const listed = await server.request(`${server.api}/v1/projects/${customer.projectId}/credentials`, { headers: bearer(customer.accessToken) });
    assert.ok(!listed.text.includes(a.app_id));
    // no secret exists for the console App ID: it cannot authenticate on the token API
    const asApp = await server.request(`${server.api}/v1/rtc/tokens`, { headers: { authorization: basic(a.app_id, customer.appSecret) }, body });
    assert.equal(asApp.status, 401, asApp.text);
  });

  it('gives a handle that the project\'s credentials can revoke', async () => {
    const t = (await temporary(customer.projectId, { room_id: 'r', user_id: 'u', role: 'host' })).json<TokenResponse>();
    const revoke = (auth: string) => server.request(`${server.token}/v1/rtc/tokens/revoke`, {
      headers: { authorization: auth }, body: { revocation_handle: t.media.revocation_handle },
    });
    const foreign = await revoke(stranger.auth);
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(foreign.json()['error'], 'unknown_handle');
    const own = await revoke(customer.auth);
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.json(), { revoked: true });
  });

  it('accepts ttl_seconds up to 600 and refuses more with 400 naming the limit', async () => {
    const ok = await temporary(customer.projectId, { room_id: 'r', user_id: 'u', role: 'host', ttl_seconds: 600 });
    assert.equal(ok.status, 200, ok.text);
    const short = await temporary(customer.projectId, { room_id: 'r', user_id: 'u', role: 'host', ttl_seconds: 30 });
    assert.equal(short.json<TokenResponse>().expires_at - short.json<TokenResponse>().issued_at, 30);
    const res = await temporary(customer.projectId, { room_id: 'r', user_id: 'u', role: 'host', ttl_seconds: 601 });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json()['error'], 'invalid_request');
    assert.match(String(res.json()['message']), /ttl_seconds must be at most 600\b/);
  });

  it('validates the body like the token API (400 naming the rule)', async () => {
    for (const [body, rule] of [
      [{ room_id: 'r', user_id: 'u', role: 'host', project_id: customer.projectId }, /unknown field "project_id"/],
      [{ room_id: 'r', user_id: 'u' }, /role is required/],
      [{ room_id: 'has space', user_id: 'u', role: 'host' }, /room_id must be/],
      [{ room_id: 'r', user_id: 'u', role: 'audience', publish_streams: [1] }, /audience/],
      [{ room_id: 'r', user_id: 'u', role: 'host', subscribe_room: true, subscribe_streams: [1] }, /subscribe_room/],
    ] as const) {
      const res = await temporary(customer.projectId, body);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json()['error'], 'invalid_request');
      assert.match(String(res.json()['message']), rule);
    }
  });

  it('refuses an archived project (403 project_archived)', async () => {
    const pid = await createProject(server, customer.accessToken, 'archived');
    const archive = await server.request(`${server.api}/v1/projects/${pid}/archive`, { method: 'POST', headers: bearer(customer.accessToken) });
    assert.equal(archive.status, 200, archive.text);
    const res = await temporary(pid, { room_id: 'r', user_id: 'u', role: 'host' });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.json()['error'], 'project_archived');
  });

  it('answers another account\'s project with 404 (never 403)', async () => {
    const res = await temporary(stranger.projectId, { room_id: 'r', user_id: 'u', role: 'host' });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.json()['error'], 'not_found');
    const missing = await temporary(`prj_${'M'.repeat(22)}`, { room_id: 'r', user_id: 'u', role: 'host' });
    assert.equal(missing.text, res.text);
  });

  it('needs a console session (401 unauthenticated without a bearer, or with an App Secret)', async () => {
    const body = { room_id: 'r', user_id: 'u', role: 'host' };
    const url = `${server.api}/v1/projects/${customer.projectId}/temporary-token`;
    for (const headers of [{}, { authorization: customer.auth }, bearer(customer.appSecret)]) {
      const res = await server.request(url, { headers, body });
      assert.equal(res.status, 401, res.text);
      assert.equal(res.json()['error'], 'unauthenticated');
      assert.match(String(res.headers['www-authenticate']), /^Bearer\b/);
    }
  });
});
