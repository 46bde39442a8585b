import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';

describe('signaling: the token response', () => {
  let server: ServedPlatform;
  let customer: Customer;

  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'signaling'] });
    customer = await createCustomer(server);
  });
  after(async () => {
    await server.stop();
  });

  for (const host of ['api', 'token'] as const) {
    it(`carries a signaling token and the signaling role's URL on the ${host} host`, async () => {
      const res = await request(`${server.urls[host]}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth },
        body: { room_id: 'room-s', user_id: 'user-s', role: 'cohost', signaling: true, ttl_seconds: 300 },
      });
      assert.equal(res.status, 200, res.text);
      const t = res.json<TokenResponse>();
      assert.equal(t.signaling?.url, server.urls['signaling']);
      assert.equal(t.turn, undefined);

      const jwks = createLocalJWKSet((await request(`${server.token}/.well-known/jwks.json`)).json());
      const { payload, protectedHeader } = await jwtVerify(t.signaling!.token, jwks, {
        audience: 'rtc-signaling', typ: 'rtc-signaling+jwt', algorithms: ['EdDSA'],
      });
      assert.equal(protectedHeader.typ, 'rtc-signaling+jwt');
      // one grant: the media grant and the signaling token share jti and lifetime
      const grant = decodeJwt(t.media.grant);
      assert.equal(payload.jti, grant.jti);
      assert.equal(payload.exp, t.expires_at);
      assert.equal(payload.iat, t.issued_at);
      assert.equal(payload['prj'], customer.projectId);
      assert.equal(payload['room'], 'room-s');
      assert.equal(payload['sub'], 'user-s');
      assert.equal(payload['role'], 'cohost');
      assert.equal(grant.aud, 'rtc-media');
      // and the media grant is no signaling token
      await assert.rejects(jwtVerify(t.media.grant, jwks, { audience: 'rtc-signaling' }));
    });
  }

  it('answers the signaling service\'s health check', async () => {
    const res = await request(`${server.urls['signaling']}/health`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
    const unknown = await request(`${server.urls['signaling']}/v1/signaling/nothing`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json()['error'], 'not_found');
  });

  it('allows browsers: CORS preflight and headers', async () => {
    const url = server.urls['signaling']!;
    const preflight = await request(`${url}/v1/signaling/events`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, last-event-id' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], '*');
    assert.match(String(preflight.headers['access-control-allow-headers']), /authorization/);
    assert.match(String(preflight.headers['access-control-allow-headers']), /last-event-id/);
    const refused = await request(`${url}/v1/signaling/participants`, { headers: { origin: 'https://app.example' } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['access-control-allow-origin'], '*');
  });
});

describe('signaling: where the service is not configured', () => {
  it('answers 502 signaling_unavailable without a signaling role or public URL', async () => {
    const server = await serveInProcess({ roles: ['api', 'token'] });
    try {
      const customer = await createCustomer(server);
      const res = await request(`${server.token}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth }, body: { room_id: 'r', user_id: 'u', role: 'host', signaling: true },
      });
      assert.equal(res.status, 502);
      assert.equal(res.json()['error'], 'signaling_unavailable');
    } finally {
      await server.stop();
    }
  });

  it('points at RTC_SIGNALING_PUBLIC_URL when it is set', async () => {
    const server = await serveInProcess({ roles: ['api', 'token'], env: { RTC_SIGNALING_PUBLIC_URL: 'https://signal.example.test' } });
    try {
      const customer = await createCustomer(server);
      const res = await request(`${server.token}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth }, body: { room_id: 'r', user_id: 'u', role: 'host', signaling: true },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json<TokenResponse>().signaling?.url, 'https://signal.example.test');
    } finally {
      await server.stop();
    }
  });
});
