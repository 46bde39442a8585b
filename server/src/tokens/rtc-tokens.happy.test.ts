import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';

import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

describe('POST /v1/rtc/tokens: issuance on both hosts', () => {
  let server: InProcessPlatform;
  let customer: Customer;

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });

  for (const host of ['api', 'token'] as const) {
    it(`issues a token on the ${host} host with every response field`, async () => {
      const res = await server.request(`${server.urls[host]}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth },
        body: { room_id: 'room-1', user_id: 'user-1', role: 'speaker', publish_streams: [1, 2], subscribe_streams: [3] },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['x-request-id']), /^req_/);
      const t = res.json<TokenResponse>();
      assert.equal(t.project_id, customer.projectId);
      assert.equal(t.app_id, customer.appId);
      assert.equal(t.room_id, 'room-1');
      assert.equal(t.user_id, 'user-1');
      assert.equal(t.role, 'speaker');
      assert.deepEqual(t.publish_streams, [1, 2]);
      assert.deepEqual(t.subscribe_streams, [3]);
      assert.equal(t.subscribe_room, false);
      assert.equal(t.expires_at - t.issued_at, 600);
      assert.equal(t.issued_at, Math.floor(server.clock.nowMs() / 1000));
      assert.equal(t.media.encryption, 'aes-256-gcm');
      assert.equal(t.media.sfu_host, '127.0.0.1', 'the address the media role listens on');
      assert.equal(typeof t.media.sfu_port, 'number');
      assert.match(t.media.key, /^[A-Za-z0-9_-]{43}$/);
      assert.match(t.media.revocation_handle, /^rvk_[A-Za-z0-9_-]+$/);
      assert.equal(t.turn, undefined);
      assert.equal(t.signaling, undefined);
    });
  }

  it('signs a grant that an independent JOSE library verifies against the published JWKS', async () => {
    const res = await server.request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth },
      body: { room_id: 'room-2', user_id: 'user-2', role: 'audience', subscribe_room: true, ttl_seconds: 120 },
    });
    assert.equal(res.status, 200, res.text);
    const t = res.json<TokenResponse>();
    for (const host of [server.token, server.api]) {
      const jwks = await server.request(`${host}/.well-known/jwks.json`);
      assert.equal(jwks.status, 200);
      const { payload, protectedHeader } = await jwtVerify(t.media.grant, createLocalJWKSet(jwks.json()), {
        currentDate: new Date(server.clock.nowMs()), audience: 'rtc-media', typ: 'rtc-grant+jwt', algorithms: ['EdDSA'],
      });
      assert.equal(protectedHeader.alg, 'EdDSA');
      assert.equal(typeof protectedHeader.kid, 'string');
      assert.equal(payload['prj'], customer.projectId);
      assert.equal(payload['app'], customer.appId);
      assert.equal(payload['room'], 'room-2');
      assert.equal(payload['sub'], 'user-2');
      assert.equal(payload['role'], 'audience');
      assert.deepEqual(payload['pub'], []);
      assert.deepEqual(payload['subs'], []);
      assert.equal(payload['sub_room'], true);
      assert.equal(payload.exp, t.expires_at);
      assert.equal(payload.iat, t.issued_at);
      assert.match(String(payload.jti), /^[A-Za-z0-9_-]{22}$/);
      assert.equal(typeof (payload['cnf'] as { kid: string }).kid, 'string');
    }
  });

  it('gives every grant its own id and media key', async () => {
    const issue = () => server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: 'r', user_id: 'u', role: 'host' },
    }).then((r) => r.json<TokenResponse>());
    const [a, b] = await Promise.all([issue(), issue()]);
    assert.notEqual(a.media.key, b.media.key);
    assert.notEqual(a.media.grant, b.media.grant);
    assert.notEqual(a.media.revocation_handle, b.media.revocation_handle);
  });
});
