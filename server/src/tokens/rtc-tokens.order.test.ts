import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { basic, freshAddress, type HttpResult, sendChunked } from '../../../test/helpers/http.ts';
import { assertError } from '../../../test/helpers/assert.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

// docs/reference/token-api.md, order of checks: address blocked or over its limit (429) -> Origin (403) -> body over 8 KB (413)
// -> authentication (401) -> App ID rate limit (429) -> IP allowlist (403) -> archived (403)
// -> body syntax and validation (400) -> scopes (403) -> issue (502 for missing TURN/signaling).
// The rate-limit steps are covered with the rate limits themselves.

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;
const OVERSIZED = Buffer.from(JSON.stringify({ ...VALID, user_id: 'u'.repeat(9000) }));
const OUTSIDE = '127.200.0.1'; // outside 127.0.0.0/9, where freshAddress() picks its addresses

describe('token API: the order of checks', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let subscriberOnly: Customer;
  let fenced: Customer;
  let archivedFenced: Customer;
  let archived: Customer;
  const wrong = (c: Customer): string => basic(c.appId, 'sk_wrong');

  const send = (auth: string | undefined, body: unknown, options: { headers?: Record<string, string>; localAddress?: string; path?: string } = {}): Promise<HttpResult> =>
    server.request(`${server.api}${options.path ?? '/v1/rtc/tokens'}`, {
      headers: { 'content-type': 'application/json', ...(auth !== undefined && { authorization: auth }), ...options.headers },
      body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      localAddress: options.localAddress ?? freshAddress(),
    });

  const archive = async (who: Customer): Promise<void> => {
    const res = await server.request(`${server.api}/v1/projects/${who.projectId}/archive`, {
      method: 'POST', headers: { authorization: `Bearer ${who.accessToken}` },
    });
    assert.equal(res.status, 200, res.text);
  };

  before(async () => {
    server = await startInProcess();
    [customer, subscriberOnly, fenced, archivedFenced, archived] = await Promise.all([
      createCustomer(server),
      createCustomer(server, { scopes: ['subscriber'], max_ttl_seconds: 300 }),
      createCustomer(server, { ip_allowlist: ['127.0.0.0/9'] }),
      createCustomer(server, { ip_allowlist: ['127.0.0.0/9'] }),
      createCustomer(server),
    ]);
    await archive(archivedFenced);
    await archive(archived);
  });
  after(async () => {
    await server.close();
  });

  describe('a blocked address comes first', () => {
    it('answers 429 to a blocked address even with an Origin header, an oversized body and good credentials', async () => {
      const address = freshAddress();
      for (let i = 0; i < 20; i++) assertError(await send(wrong(customer), VALID, { localAddress: address }), 401, 'invalid_credentials');
      assertError(await send(customer.auth, VALID, { localAddress: address, headers: { origin: 'https://app.example' } }), 429, 'rate_limited');
      assertError(await send(customer.auth, OVERSIZED, { localAddress: address }), 429, 'rate_limited');
      assertError(await send(undefined, 'not json', { localAddress: address }), 429, 'rate_limited');
    });
  });

  describe('Origin comes before the body size and authentication', () => {
    it('answers 403 server_side_only rather than 413', async () => {
      assertError(await send(customer.auth, OVERSIZED, { headers: { origin: 'https://app.example' } }), 403, 'server_side_only');
    });
    it('answers 403 server_side_only rather than 401', async () => {
      assertError(await send(wrong(customer), VALID, { headers: { origin: 'https://app.example' } }), 403, 'server_side_only');
      assertError(await send(undefined, { nonsense: true }, { headers: { origin: 'https://app.example' } }), 403, 'server_side_only');
    });
  });

  describe('the body size and media type come before authentication', () => {
    it('answers 413 rather than 401 to a declared Content-Length over 8 KB', async () => {
      assertError(await send(wrong(customer), OVERSIZED), 413, 'invalid_request');
      assertError(await send(undefined, OVERSIZED), 413, 'invalid_request');
    });
    it('answers 413 rather than 401 to a chunked body over 8 KB', async () => {
      assertError(await sendChunked(`${await server.listen('api')}/v1/rtc/tokens`, { 'content-type': 'application/json', authorization: wrong(customer) }, OVERSIZED),
        413, 'invalid_request');
    });
    it('answers 415 rather than 401 to a body that is not application/json (the header is checked as the body is read)', async () => {
      assertError(await send(wrong(customer), 'room_id=r', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
        415, 'invalid_request');
    });
    it('answers 413 on revoke before authentication', async () => {
      const big = Buffer.from(JSON.stringify({ revocation_handle: 'x'.repeat(9000) }));
      assertError(await send(undefined, big, { path: '/v1/rtc/tokens/revoke' }), 413, 'invalid_request');
    });
  });

  describe('authentication comes before everything about the body and the credential', () => {
    const BAD_BODIES: readonly (readonly [string, unknown])[] = [
      ['an unknown field', { ...VALID, nonsense: 1 }],
      ['a missing field', { room_id: 'r' }],
      ['invalid JSON', '{"room_id":'],
      ['a JSON array', '[]'],
      ['an empty body', ''],
      ['a bad stream id', { ...VALID, publish_streams: [0] }],
    ];
    for (const [what, body] of BAD_BODIES) {
      it(`answers 401 rather than 400 to bad credentials with ${what}`, async () => {
        assertError(await send(wrong(customer), body), 401, 'invalid_credentials');
      });
      it(`answers 401 rather than 400 to a missing Authorization header with ${what}`, async () => {
        assertError(await send(undefined, body), 401, 'invalid_credentials');
      });
    }
    it('answers 401 rather than 400 on revoke', async () => {
      assertError(await send(wrong(customer), { revocation_handle: 42 }, { path: '/v1/rtc/tokens/revoke' }), 401, 'invalid_credentials');
    });
    it('answers 401 rather than 403 ip_not_allowed to bad credentials from outside the allowlist', async () => {
      assertError(await send(wrong(fenced), VALID, { localAddress: OUTSIDE }), 401, 'invalid_credentials');
    });
    it('answers 401 rather than 403 project_archived to bad credentials of an archived project', async () => {
      assertError(await send(wrong(archived), VALID), 401, 'invalid_credentials');
    });
    it('answers 401 rather than 403 scope_denied', async () => {
      assertError(await send(wrong(subscriberOnly), { ...VALID, publish_streams: [1] }), 401, 'invalid_credentials');
    });
  });

  describe('the IP allowlist comes before the archived state and the body', () => {
    it('answers 403 ip_not_allowed rather than project_archived', async () => {
      assertError(await send(archivedFenced.auth, VALID, { localAddress: OUTSIDE }), 403, 'ip_not_allowed');
      assertError(await send(archivedFenced.auth, VALID), 403, 'project_archived');
    });
    it('answers 403 ip_not_allowed rather than 400', async () => {
      assertError(await send(fenced.auth, { ...VALID, nonsense: 1 }, { localAddress: OUTSIDE }), 403, 'ip_not_allowed');
      assertError(await send(fenced.auth, '{', { localAddress: OUTSIDE }), 403, 'ip_not_allowed');
    });
  });

  describe('the archived state comes before the body', () => {
    it('answers 403 project_archived rather than 400', async () => {
      assertError(await send(archived.auth, { ...VALID, nonsense: 1 }), 403, 'project_archived');
      assertError(await send(archived.auth, 'null'), 403, 'project_archived');
    });
    it('answers 403 project_archived on revoke rather than 400 or 404', async () => {
      assertError(await send(archived.auth, { revocation_handle: 42 }, { path: '/v1/rtc/tokens/revoke' }), 403, 'project_archived');
      assertError(await send(archived.auth, { revocation_handle: 'rvk_AAAA' }, { path: '/v1/rtc/tokens/revoke' }), 403, 'project_archived');
    });
  });

  describe('validation comes before scopes', () => {
    const CASES: readonly (readonly [string, unknown])[] = [
      ['an unknown field', { ...VALID, publish_streams: [1], nonsense: 1 }],
      ['a repeated stream id', { ...VALID, publish_streams: [1, 1] }],
      ['a stream id of 0', { ...VALID, publish_streams: [0] }],
      ['nine publish streams', { ...VALID, publish_streams: [1, 2, 3, 4, 5, 6, 7, 8, 9] }],
      ['a bad ttl_seconds', { ...VALID, publish_streams: [1], ttl_seconds: 0 }],
      ['ttl_seconds above the credential limit', { ...VALID, publish_streams: [1], ttl_seconds: 301 }],
      ['the audience role publishing', { ...VALID, role: 'audience', publish_streams: [1] }],
    ];
    for (const [what, body] of CASES) {
      it(`answers 400 rather than 403 scope_denied to ${what}`, async () => {
        assertError(await send(subscriberOnly.auth, body), 400, 'invalid_request');
      });
    }
    it('answers 400 rather than 403 scope_denied to subscribe_room with subscribe_streams', async () => {
      const publisherOnly = await createCustomer(server, { scopes: ['publisher'] });
      assertError(await send(publisherOnly.auth, { ...VALID, subscribe_room: true, subscribe_streams: [1] }), 400, 'invalid_request');
      assertError(await send(publisherOnly.auth, { ...VALID, subscribe_streams: [1] }), 403, 'scope_denied');
    });
  });

  describe('a valid, authorised request', () => {
    it('is issued once every check passes', async () => {
      const res = await send(fenced.auth, { ...VALID, publish_streams: [1], subscribe_streams: [2] });
      assert.equal(res.status, 200, res.text);
    });
  });
});
