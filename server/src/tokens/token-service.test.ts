import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { basic, freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { assertError } from '../../../test/helpers/assert.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const without = (body: Record<string, unknown>, field: string): Record<string, unknown> =>
  Object.fromEntries(Object.entries(body).filter(([k]) => k !== field));

describe('token host: POST /v1/tokens, GET /health, GET /.well-known/jwks.json', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let limited: Customer;
  let jwks: JSONWebKeySet;

  const tokens = (auth: string | undefined, body: unknown, options: { host?: string; headers?: Record<string, string> } = {}): Promise<HttpResult> =>
    server.request(`${options.host ?? server.token}/v1/tokens`, {
      headers: { ...(auth !== undefined && { authorization: auth }), ...options.headers }, body, localAddress: freshAddress(),
    });
  const bodyFor = (who: Customer, extra: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ app_id: who.appId, user_id: 'user-9', room_id: 'room-9', role: 'participant', ...extra });

  before(async () => {
    server = await startInProcess();
    [customer, limited] = await Promise.all([createCustomer(server), createCustomer(server, { max_ttl_seconds: 120 })]);
    const res = await server.request(`${server.token}/.well-known/jwks.json`);
    assert.equal(res.status, 200, res.text);
    jwks = res.json<JSONWebKeySet>();
  });
  after(async () => {
    await server.close();
  });

  describe('POST /v1/tokens', () => {
    it('issues a token response: 200, no-store, every field', async () => {
      const res = await tokens(customer.auth, bodyFor(customer, { ttl_sec: 90 }));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const t = res.json<TokenResponse>();
      assert.deepEqual(Object.keys(t).sort(), ['app_id', 'expires_at', 'issued_at', 'media', 'project_id', 'publish_streams', 'role', 'room_id',
        'subscribe_room', 'subscribe_streams', 'user_id']);
      assert.equal(t.project_id, customer.projectId);
      assert.equal(t.app_id, customer.appId);
      assert.equal(t.room_id, 'room-9');
      assert.equal(t.user_id, 'user-9');
      assert.equal(t.role, 'participant');
      assert.deepEqual(t.publish_streams, []);
      assert.deepEqual(t.subscribe_streams, []);
      assert.equal(t.subscribe_room, false);
      assert.ok(Number.isInteger(t.issued_at));
      assert.equal(t.expires_at - t.issued_at, 90);
      assert.deepEqual(Object.keys(t.media).sort(), ['encryption', 'grant', 'key', 'revocation_handle', 'sfu_host', 'sfu_port']);
      assert.equal(t.media.encryption, 'aes-256-gcm');
      assert.match(t.media.key, /^[A-Za-z0-9_-]{43}$/);
      assert.match(t.media.revocation_handle, /^rvk_/);
    });

    it('signs a grant that verifies against the JWKS with the request in its claims', async () => {
      const t = (await tokens(customer.auth, bodyFor(customer))).json<TokenResponse>();
      const { payload } = await jwtVerify(t.media.grant, createLocalJWKSet(jwks), { currentDate: new Date(server.clock.nowMs()), audience: 'rtc-media', typ: 'rtc-grant+jwt', algorithms: ['EdDSA'] });
      assert.equal(payload['prj'], customer.projectId);
      assert.equal(payload['app'], customer.appId);
      assert.equal(payload['room'], 'room-9');
      assert.equal(payload.sub, 'user-9');
      assert.equal(payload['role'], 'participant');
      assert.equal(payload.exp, t.expires_at);
    });

    it('defaults ttl_sec to 600 seconds', async () => {
      const t = (await tokens(customer.auth, bodyFor(customer))).json<TokenResponse>();
      assert.equal(t.expires_at - t.issued_at, 600);
    });

    it('gives a revocation handle that the token API revokes', async () => {
      const t = (await tokens(customer.auth, bodyFor(customer))).json<TokenResponse>();
      const res = await server.request(`${server.token}/v1/rtc/tokens/revoke`, {
        headers: { authorization: customer.auth }, body: { revocation_handle: t.media.revocation_handle },
      });
      assert.deepEqual([res.status, res.json()], [200, { revoked: true }]);
    });

    it('rejects an app_id other than the authenticated App ID with 400', async () => {
      const other = await createCustomer(server);
      assertError(await tokens(customer.auth, bodyFor(customer, { app_id: other.appId })), 400, 'invalid_request', /app_id must be the App ID/);
      assertError(await tokens(customer.auth, bodyFor(customer, { app_id: 'app_AAAAAAAAAAAAAAAAAAAAAA' })), 400, 'invalid_request', /app_id/);
      assertError(await tokens(customer.auth, bodyFor(customer, { app_id: customer.appId.toUpperCase() })), 400, 'invalid_request', /app_id/);
    });

    const INVALID: readonly (readonly [string, Record<string, unknown> | ((c: Customer) => Record<string, unknown>), RegExp])[] = [
      ['a missing app_id', (c) => without(bodyFor(c), 'app_id'), /^app_id is required$/],
      ['a missing user_id', (c) => without(bodyFor(c), 'user_id'), /^user_id is required$/],
      ['a missing room_id', (c) => without(bodyFor(c), 'room_id'), /^room_id is required$/],
      ['a missing role', (c) => without(bodyFor(c), 'role'), /^role is required$/],
      ['a bad role', { role: 'owner' }, /^role must be one of/],
      ['a room_id with a space', { room_id: 'a b' }, /^room_id must be 1-128 printable ASCII characters without spaces$/],
      ['ttl_sec 0', { ttl_sec: 0 }, /^ttl_sec must be an integer from 1 to 3600$/],
      ['ttl_sec 3601', { ttl_sec: 3601 }, /^ttl_sec must be at most 3600/],
      ['ttl_sec 1.5', { ttl_sec: 1.5 }, /^ttl_sec must be an integer from 1 to 3600$/],
      ['ttl_sec as a string', { ttl_sec: '60' }, /^ttl_sec must be an integer from 1 to 3600$/],
      ['ttl_seconds, a field of the other endpoint', { ttl_seconds: 60 }, /^unknown field "ttl_seconds" is not allowed$/],
      ['publish_streams', { publish_streams: [1] }, /^unknown field "publish_streams" is not allowed$/],
      ['an unknown field', { project_id: 'prj_x' }, /^unknown field "project_id" is not allowed$/],
    ];
    for (const [what, change, message] of INVALID) {
      it(`rejects ${what} with 400 naming the rule`, async () => {
        const body = typeof change === 'function' ? change(customer) : bodyFor(customer, change);
        assertError(await tokens(customer.auth, body), 400, 'invalid_request', message);
      });
    }

    it('rejects ttl_sec above the credential limit with 400 naming ttl_sec and the limit', async () => {
      assertError(await tokens(limited.auth, bodyFor(limited, { ttl_sec: 121 })), 400, 'invalid_request',
        /^ttl_sec must be at most 120, the limit set on this credential$/);
      const ok = await tokens(limited.auth, bodyFor(limited, { ttl_sec: 120 }));
      assert.equal(ok.status, 200, ok.text);
    });

    it('rejects a body that is not an object', async () => {
      const res = await server.request(`${server.token}/v1/tokens`, {
        headers: { authorization: customer.auth, 'content-type': 'application/json' }, body: '[]',
      });
      assertError(res, 400, 'invalid_request', /JSON object/);
    });

    it('needs HTTP Basic: 401 with WWW-Authenticate for no, wrong or Bearer credentials', async () => {
      for (const auth of [undefined, basic(customer.appId, 'sk_wrong'), `Bearer ${customer.accessToken}`]) {
        const res = await tokens(auth, bodyFor(customer));
        assertError(res, 401, 'invalid_credentials');
        assert.equal(res.headers['www-authenticate'], 'Basic realm="rtc"');
      }
    });

    it('answers 401 rather than 400 to bad credentials with a bad body', async () => {
      assertError(await tokens(basic(customer.appId, 'sk_wrong'), { nonsense: true }), 401, 'invalid_credentials');
    });

    it('refuses a browser Origin with 403 server_side_only', async () => {
      assertError(await tokens(customer.auth, bodyFor(customer), { headers: { origin: 'https://app.example' } }), 403, 'server_side_only');
    });

    it('applies the IP allowlist', async () => {
      const fenced = await createCustomer(server, { ip_allowlist: ['192.0.2.0/24'] });
      assertError(await tokens(fenced.auth, bodyFor(fenced)), 403, 'ip_not_allowed');
    });

    it('answers 413 to a body over 8 KB', async () => {
      assertError(await tokens(customer.auth, bodyFor(customer, { user_id: 'u'.repeat(9000) })), 413, 'invalid_request');
    });

    it('is served on the token host only', async () => {
      assertError(await tokens(customer.auth, bodyFor(customer), { host: server.api }), 404, 'not_found');
    });
  });

  describe('GET /health', () => {
    it('answers 200 {"status":"ok"} without authentication', async () => {
      const res = await server.request(`${server.token}/health`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), { status: 'ok' });
      assert.match(String(res.headers['content-type']), /^application\/json/);
    });
  });

  describe('GET /.well-known/jwks.json', () => {
    it('publishes Ed25519 public keys only, with kid, alg and use', () => {
      assert.ok(Array.isArray(jwks.keys) && jwks.keys.length >= 1);
      for (const key of jwks.keys) {
        assert.equal(key.kty, 'OKP');
        assert.equal(key.crv, 'Ed25519');
        assert.equal(key.alg, 'EdDSA');
        assert.equal(key.use, 'sig');
        assert.equal(typeof key.kid, 'string');
        assert.match(String(key.x), /^[A-Za-z0-9_-]{43}$/);
        assert.equal(key.d, undefined, 'no private key material');
      }
    });

    it('publishes the same keys on the api host, cacheable', async () => {
      const res = await server.request(`${server.api}/.well-known/jwks.json`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json(), jwks);
      assert.match(String(res.headers['cache-control']), /public/);
    });

    it('names the key of every grant of both token endpoints and verifies it; an altered grant fails', async () => {
      const fromApi = (await server.request(`${server.api}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth }, body: { room_id: 'r', user_id: 'u', role: 'host', publish_streams: [1] },
      })).json<TokenResponse>();
      const fromToken = (await tokens(customer.auth, bodyFor(customer))).json<TokenResponse>();
      const keySet = createLocalJWKSet(jwks);
      for (const t of [fromApi, fromToken]) {
        const { kid } = decodeProtectedHeader(t.media.grant);
        assert.ok(jwks.keys.some((k) => k.kid === kid), 'the grant names a published key');
        await jwtVerify(t.media.grant, keySet, { currentDate: new Date(server.clock.nowMs()), audience: 'rtc-media', algorithms: ['EdDSA'] });
        const [header, payload, signature] = t.media.grant.split('.') as [string, string, string];
        const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), room: 'elsewhere' })).toString('base64url');
        await assert.rejects(jwtVerify(`${header}.${forged}.${signature}`, keySet, { currentDate: new Date(server.clock.nowMs()), audience: 'rtc-media' }));
      }
    });
  });
});
