import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { basic, freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { assertError } from '../../../test/helpers/assert.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const B64U = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The handle with the character at `index` replaced by another base64url character. */
function flip(handle: string, index: number): string {
  const c = handle[index]!;
  return handle.slice(0, index) + B64U[(B64U.indexOf(c) + 1) % B64U.length]! + handle.slice(index + 1);
}

describe('POST /v1/rtc/tokens/revoke', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let other: Customer;

  const issue = async (who: Customer, host = server.api): Promise<string> => {
    const res = await server.request(`${host}/v1/rtc/tokens`, {
      headers: { authorization: who.auth }, body: { room_id: 'room-1', user_id: `user-${Math.random().toString(36).slice(2)}`, role: 'host' },
    });
    assert.equal(res.status, 200, res.text);
    return res.json<TokenResponse>().media.revocation_handle;
  };
  const revoke = (auth: string | undefined, body: unknown, host = server.api, localAddress?: string): Promise<HttpResult> =>
    server.request(`${host}/v1/rtc/tokens/revoke`, {
      headers: auth === undefined ? {} : { authorization: auth }, body, ...(localAddress !== undefined && { localAddress }),
    });

  before(async () => {
    server = await startInProcess();
    [customer, other] = await Promise.all([createCustomer(server), createCustomer(server)]);
  });
  after(async () => {
    await server.close();
  });

  for (const host of ['api', 'token'] as const) {
    it(`revokes a handle on the ${host} host: 200 {"revoked":true}, no-store`, async () => {
      const handle = await issue(customer, server.urls[host]);
      const res = await revoke(customer.auth, { revocation_handle: handle }, server.urls[host]);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), { revoked: true });
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['cache-control'], 'no-store');
    });

    it(`is idempotent on the ${host} host`, async () => {
      const handle = await issue(customer);
      for (let i = 0; i < 3; i++) {
        const res = await revoke(customer.auth, { revocation_handle: handle }, server.urls[host]);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json(), { revoked: true });
      }
    });
  }

  it('answers concurrent revocations of one handle with 200 each', async () => {
    const handle = await issue(customer);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      revoke(customer.auth, { revocation_handle: handle }, i % 2 === 0 ? server.api : server.token)));
    for (const res of answers) assert.deepEqual([res.status, res.json()], [200, { revoked: true }]);
  });

  it('revokes on one host a handle issued on the other', async () => {
    const handle = await issue(customer, server.token);
    const res = await revoke(customer.auth, { revocation_handle: handle }, server.api);
    assert.deepEqual([res.status, res.json()], [200, { revoked: true }]);
  });

  it('answers 404 unknown_handle to an altered handle (one character flipped)', async () => {
    const handle = await issue(customer);
    for (const index of [4, 5, 20, 40, handle.length - 2, handle.length - 1]) {
      const res = await revoke(customer.auth, { revocation_handle: flip(handle, index) });
      assertError(res, 404, 'unknown_handle', /not valid for this project/);
    }
    // the original still works, so the 404s were about the alteration
    assert.equal((await revoke(customer.auth, { revocation_handle: handle })).status, 200);
  });

  it('answers 404 unknown_handle to truncated, extended and re-prefixed handles', async () => {
    const handle = await issue(customer);
    for (const altered of [handle.slice(0, -1), `${handle}A`, `${handle}AAAA`, handle.slice(4), `rvx_${handle.slice(4)}`, handle.toUpperCase()]) {
      assertError(await revoke(customer.auth, { revocation_handle: altered }), 404, 'unknown_handle');
    }
  });

  it("answers 404 unknown_handle to another project's handle, and leaves it revocable by its owner", async () => {
    const foreign = await issue(other);
    const res = await revoke(customer.auth, { revocation_handle: foreign });
    assertError(res, 404, 'unknown_handle');
    const own = await revoke(other.auth, { revocation_handle: foreign });
    assert.deepEqual([own.status, own.json()], [200, { revoked: true }]);
  });

  it("answers another project's handle byte-identically to an altered one", async () => {
    const foreign = await revoke(customer.auth, { revocation_handle: await issue(other) });
    const altered = await revoke(customer.auth, { revocation_handle: flip(await issue(customer), 30) });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.text, altered.text);
  });

  it('revokes a handle issued through another credential of the same project (a handle belongs to its project)', async () => {
    const created = await server.request(`${server.api}/v1/projects/${customer.projectId}/credentials`, {
      headers: { authorization: `Bearer ${customer.accessToken}` }, body: { scopes: ['subscriber'] },
    });
    assert.equal(created.status, 201, created.text);
    const second = created.json<{ app_id: string; app_secret: string }>();
    const handle = await issue(customer);
    const res = await revoke(basic(second.app_id, second.app_secret), { revocation_handle: handle });
    assert.deepEqual([res.status, res.json()], [200, { revoked: true }]);
  });

  for (const garbage of ['', 'hello', 'rvk_', 'rvk_!!!', `rvk_${'A'.repeat(300)}`, 'prj_AAAAAAAAAAAAAAAAAAAAAA']) {
    it(`answers 404 unknown_handle to the garbage string ${JSON.stringify(garbage.slice(0, 24))}`, async () => {
      assertError(await revoke(customer.auth, { revocation_handle: garbage }), 404, 'unknown_handle');
    });
  }

  const INVALID: readonly (readonly [string, unknown, RegExp])[] = [
    ['a missing handle', {}, /^revocation_handle is required$/],
    ['a number', { revocation_handle: 42 }, /^revocation_handle must be a string$/],
    ['null', { revocation_handle: null }, /^revocation_handle must be a string$/],
    ['an array', { revocation_handle: ['rvk_x'] }, /^revocation_handle must be a string$/],
    ['a handle over 512 characters', { revocation_handle: 'r'.repeat(513) }, /^revocation_handle must be at most 512 characters$/],
    ['an unknown field', { revocation_handle: 'rvk_x', project_id: 'prj_x' }, /^unknown field "project_id" is not allowed$/],
    ['a JSON array body', [], /^the request body must be a JSON object$/],
  ];
  for (const [what, body, message] of INVALID) {
    it(`answers 400 invalid_request to ${what}`, async () => {
      assertError(await revoke(customer.auth, body), 400, 'invalid_request', message);
    });
  }

  it('answers 400 invalid_request to invalid JSON', async () => {
    const res = await server.request(`${server.api}/v1/rtc/tokens/revoke`, {
      headers: { authorization: customer.auth, 'content-type': 'application/json' }, body: '{"revocation_handle":',
    });
    assertError(res, 400, 'invalid_request', /not valid JSON/);
  });

  it('needs authentication: 401 without credentials, even for a valid handle', async () => {
    const handle = await issue(customer);
    for (const host of [server.api, server.token]) {
      const res = await revoke(undefined, { revocation_handle: handle }, host, freshAddress());
      assertError(res, 401, 'invalid_credentials');
      assert.equal(res.headers['www-authenticate'], 'Basic realm="rtc"');
    }
  });

  it("needs the handle's project credentials: 401 with a wrong secret", async () => {
    const handle = await issue(customer);
    const res = await revoke(basic(customer.appId, 'sk_wrong'), { revocation_handle: handle }, server.api, freshAddress());
    assertError(res, 401, 'invalid_credentials');
  });

  it('refuses a console Bearer token with 401', async () => {
    const handle = await issue(customer);
    const res = await revoke(`Bearer ${customer.accessToken}`, { revocation_handle: handle }, server.api, freshAddress());
    assertError(res, 401, 'invalid_credentials');
  });
});
