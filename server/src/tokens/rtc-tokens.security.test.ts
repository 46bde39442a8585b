import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { basic, freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { assertError } from '../../../test/helpers/assert.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;

/** Headers that differ between any two responses, whatever they answer. */
const PER_RESPONSE_HEADERS = new Set(['date', 'x-request-id']);
const stableHeaders = (res: HttpResult): Record<string, unknown> =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_RESPONSE_HEADERS.has(name)).sort());

describe('token API security: authentication, Origin, scopes, archived projects, IP allowlist', () => {
  let server: InProcessPlatform;
  let customer: Customer;

  const post = (path: string, auth: string | undefined, body: unknown, options: { host?: string; localAddress?: string; headers?: Record<string, string> } = {}): Promise<HttpResult> =>
    server.request(`${options.host ?? server.api}${path}`, {
      headers: { ...(auth !== undefined && { authorization: auth }), ...options.headers },
      body,
      localAddress: options.localAddress ?? freshAddress(),
    });
  const issue = (auth: string | undefined, body: unknown = VALID, options: { host?: string; localAddress?: string; headers?: Record<string, string> } = {}) =>
    post('/v1/rtc/tokens', auth, body, options);
  const consoleCall = (who: Customer, path: string): Promise<HttpResult> =>
    server.request(`${server.api}${path}`, { method: 'POST', headers: { authorization: `Bearer ${who.accessToken}` } });

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });

  describe('one byte-identical 401 for every authentication failure', () => {
    let reference: HttpResult;

    before(async () => {
      reference = await issue(basic('app_AAAAAAAAAAAAAAAAAAAAAA', 'sk_nope'));
    });

    const assertSame401 = (res: HttpResult): void => {
      assert.equal(res.status, 401, res.text);
      assert.equal(res.text, reference.text);
      assert.deepEqual(stableHeaders(res), stableHeaders(reference));
    };

    it('answers an unknown App ID with invalid_credentials and WWW-Authenticate: Basic realm="rtc"', () => {
      assertError(reference, 401, 'invalid_credentials');
      assert.equal(reference.headers['www-authenticate'], 'Basic realm="rtc"');
      assert.equal(reference.headers['cache-control'], 'no-store');
    });

    it('answers a wrong secret identically', async () => {
      assertSame401(await issue(basic(customer.appId, `${customer.appSecret.slice(0, -1)}x`)));
    });

    it('answers an empty secret identically', async () => {
      assertSame401(await issue(basic(customer.appId, '')));
    });

    it("answers another credential's secret identically", async () => {
      const other = await createCustomer(server);
      assertSame401(await issue(basic(customer.appId, other.appSecret)));
      assertSame401(await issue(basic(other.appId, customer.appSecret)));
    });

    it('answers a revoked credential identically', async () => {
      const victim = await createCustomer(server);
      assert.equal((await issue(victim.auth)).status, 200);
      const revoked = await consoleCall(victim, `/v1/projects/${victim.projectId}/credentials/${victim.appId}/revoke`);
      assert.equal(revoked.status, 200, revoked.text);
      assertSame401(await issue(victim.auth));
    });

    it('answers the old secret of a rotated credential identically, and accepts the new one', async () => {
      const victim = await createCustomer(server);
      const rotated = await consoleCall(victim, `/v1/projects/${victim.projectId}/credentials/${victim.appId}/rotate`);
      assert.equal(rotated.status, 200, rotated.text);
      const newSecret = rotated.json<{ app_secret: string }>().app_secret;
      assert.notEqual(newSecret, victim.appSecret);
      assertSame401(await issue(victim.auth));
      assert.equal((await issue(basic(victim.appId, newSecret))).status, 200);
    });

    const MALFORMED: readonly (readonly [string, string])[] = [
      ['a bare Basic scheme', 'Basic'],
      ['Basic with an empty value', 'Basic '],
      ['Basic with invalid base64', 'Basic !!!***'],
      ['Basic without a colon', `Basic ${Buffer.from('app_AAAAAAAAAAAAAAAAAAAAAA').toString('base64')}`],
      ['an App ID in the wrong format', basic('not-an-app-id', 'sk_x')],
      ['another scheme', 'Digest username="app"'],
      ['the credential sent without a scheme', Buffer.from('app_AAAAAAAAAAAAAAAAAAAAAA:sk').toString('base64')],
      ['an oversized header', `Basic ${'A'.repeat(2000)}`],
    ];
    for (const [what, header] of MALFORMED) {
      it(`answers a malformed Authorization header (${what}) identically`, async () => {
        assertSame401(await issue(header));
      });
    }

    it('answers a console Bearer session token identically', async () => {
      assertSame401(await issue(`Bearer ${customer.accessToken}`));
    });

    it('answers a missing Authorization header identically', async () => {
      assertSame401(await issue(undefined));
    });

    it('answers identically on the token host and on revoke', async () => {
      assertSame401(await issue(basic(customer.appId, 'sk_wrong'), VALID, { host: server.token }));
      assertSame401(await post('/v1/rtc/tokens/revoke', basic(customer.appId, 'sk_wrong'), { revocation_handle: 'rvk_x' }));
      assertSame401(await post('/v1/rtc/tokens/revoke', undefined, { revocation_handle: 'rvk_x' }, { host: server.token }));
    });

    it('accepts the Basic scheme in any letter case', async () => {
      const res = await issue(customer.auth.replace(/^Basic/, 'bAsIc'));
      assert.equal(res.status, 200, res.text);
    });
  });

  describe('browser Origin (403 server_side_only)', () => {
    it('refuses a request carrying an Origin header', async () => {
      assertError(await issue(customer.auth, VALID, { headers: { origin: 'https://app.example' } }), 403, 'server_side_only');
    });

    it('refuses Origin: null', async () => {
      assertError(await issue(customer.auth, VALID, { headers: { origin: 'null' } }), 403, 'server_side_only');
    });

    it('serves a server-side fetch that sends Sec-Fetch-Mode but no Origin (as Node fetch does)', async () => {
      const res = await issue(customer.auth, VALID, { headers: { 'sec-fetch-mode': 'cors' } });
      assert.equal(res.status, 200, res.text);
    });

    it('refuses an Origin before authentication: bad credentials still get 403', async () => {
      assertError(await issue(basic(customer.appId, 'sk_wrong'), VALID, { headers: { origin: 'https://app.example' } }), 403, 'server_side_only');
      assertError(await issue(undefined, VALID, { headers: { origin: 'https://app.example' } }), 403, 'server_side_only');
    });

    it('does not count refused browser requests as authentication failures', async () => {
      const address = freshAddress();
      for (let i = 0; i < 25; i++) {
        assertError(await issue(basic(customer.appId, 'sk_wrong'), VALID, { localAddress: address, headers: { origin: 'https://x.example' } }),
          403, 'server_side_only');
      }
      assert.equal((await issue(customer.auth, VALID, { localAddress: address })).status, 200);
    });

    it('refuses an Origin on the token host and on revoke', async () => {
      const headers = { origin: 'https://app.example' };
      assertError(await issue(customer.auth, VALID, { host: server.token, headers }), 403, 'server_side_only');
      assertError(await post('/v1/rtc/tokens/revoke', customer.auth, { revocation_handle: 'rvk_x' }, { headers }), 403, 'server_side_only');
      assertError(await post('/v1/rtc/tokens/revoke', customer.auth, { revocation_handle: 'rvk_x' }, { host: server.token, headers }),
        403, 'server_side_only');
    });
  });

  describe('scopes (403 scope_denied)', () => {
    let subscriberOnly: Customer;
    let publisherOnly: Customer;
    let noScopes: Customer;

    before(async () => {
      [subscriberOnly, publisherOnly, noScopes] = await Promise.all([
        createCustomer(server, { scopes: ['subscriber'] }),
        createCustomer(server, { scopes: ['publisher'] }),
        createCustomer(server, { scopes: [] }),
      ]);
    });

    it('refuses publish_streams without the publisher scope', async () => {
      assertError(await issue(subscriberOnly.auth, { ...VALID, publish_streams: [1] }), 403, 'scope_denied', /publisher scope/);
    });

    it('refuses subscribe_streams without the subscriber scope', async () => {
      assertError(await issue(publisherOnly.auth, { ...VALID, subscribe_streams: [1] }), 403, 'scope_denied', /subscriber scope/);
    });

    it('refuses subscribe_room without the subscriber scope', async () => {
      assertError(await issue(publisherOnly.auth, { ...VALID, subscribe_room: true }), 403, 'scope_denied',
        /subscribe_room needs the subscriber scope/);
    });

    it('grants what each scope allows', async () => {
      assert.equal((await issue(publisherOnly.auth, { ...VALID, publish_streams: [1, 2] })).status, 200);
      assert.equal((await issue(subscriberOnly.auth, { ...VALID, subscribe_streams: [1, 2] })).status, 200);
      assert.equal((await issue(subscriberOnly.auth, { ...VALID, subscribe_room: true })).status, 200);
    });

    it('needs no scope for empty stream lists', async () => {
      const res = await issue(noScopes.auth, { ...VALID, publish_streams: [], subscribe_streams: [], subscribe_room: false });
      assert.equal(res.status, 200, res.text);
      assertError(await issue(noScopes.auth, { ...VALID, publish_streams: [7] }), 403, 'scope_denied');
      assertError(await issue(noScopes.auth, { ...VALID, subscribe_streams: [7] }), 403, 'scope_denied');
    });

    it('applies scopes on the token host too', async () => {
      assertError(await issue(subscriberOnly.auth, { ...VALID, publish_streams: [1] }, { host: server.token }), 403, 'scope_denied');
    });
  });

  describe('archived project (403 project_archived)', () => {
    it('refuses every token-API call of an archived project and serves it again once unarchived', async () => {
      const owner = await createCustomer(server);
      const issued = await issue(owner.auth);
      assert.equal(issued.status, 200, issued.text);
      const handle = issued.json<TokenResponse>().media.revocation_handle;

      const archived = await consoleCall(owner, `/v1/projects/${owner.projectId}/archive`);
      assert.equal(archived.status, 200, archived.text);
      assertError(await issue(owner.auth), 403, 'project_archived');
      assertError(await issue(owner.auth, VALID, { host: server.token }), 403, 'project_archived');
      assertError(await post('/v1/rtc/tokens/revoke', owner.auth, { revocation_handle: handle }), 403, 'project_archived');

      const unarchived = await consoleCall(owner, `/v1/projects/${owner.projectId}/unarchive`);
      assert.equal(unarchived.status, 200, unarchived.text);
      assert.equal((await issue(owner.auth)).status, 200);
      const revoked = await post('/v1/rtc/tokens/revoke', owner.auth, { revocation_handle: handle });
      assert.equal(revoked.status, 200, revoked.text);
    });

    it('answers 401, not 403, to bad credentials of an archived project', async () => {
      const owner = await createCustomer(server);
      assert.equal((await consoleCall(owner, `/v1/projects/${owner.projectId}/archive`)).status, 200);
      assertError(await issue(basic(owner.appId, 'sk_wrong')), 401, 'invalid_credentials');
    });
  });

  describe('secrets stay out of the logs', () => {
    it('never writes the App Secret, the media key or the Authorization header to the output', async () => {
      const res = await issue(customer.auth, { ...VALID, user_id: 'user-logged' });
      assert.equal(res.status, 200, res.text);
      const key = res.json<TokenResponse>().media.key;
      assertError(await issue(basic(customer.appId, 'sk_log_probe_wrong_secret')), 401, 'invalid_credentials');
      const output = server.output();
      assert.ok(output.includes('"status":200'), 'requests are logged at all');
      for (const secret of [customer.appSecret, key, customer.auth.slice(6), 'sk_log_probe_wrong_secret', customer.accessToken]) {
        assert.equal(output.includes(secret), false, 'a secret reached the output');
      }
    });
  });

  describe('IPv4 allowlist (403 ip_not_allowed)', () => {
    let fenced: Customer;

    before(async () => {
      fenced = await createCustomer(server, { ip_allowlist: ['127.77.0.0/16', '127.78.1.1/32', '2001:db8::/32'] });
    });

    it('admits addresses inside a CIDR of the allowlist', async () => {
      for (const localAddress of ['127.77.0.1', '127.77.255.254', '127.78.1.1']) {
        const res = await issue(fenced.auth, VALID, { localAddress });
        assert.equal(res.status, 200, `${localAddress}: ${res.text}`);
      }
    });

    it('refuses addresses outside the allowlist', async () => {
      for (const localAddress of ['127.0.0.1', '127.76.255.255', '127.79.0.1', '127.78.1.2']) {
        assertError(await issue(fenced.auth, VALID, { localAddress }), 403, 'ip_not_allowed', /allowlist/);
      }
    });

    it('refuses revoke from outside the allowlist', async () => {
      const res = await post('/v1/rtc/tokens/revoke', fenced.auth, { revocation_handle: 'rvk_x' }, { localAddress: '127.79.0.2' });
      assertError(res, 403, 'ip_not_allowed');
    });

    it('applies the allowlist on the token host', async () => {
      assertError(await issue(fenced.auth, VALID, { host: server.token, localAddress: '127.79.0.3' }), 403, 'ip_not_allowed');
      assert.equal((await issue(fenced.auth, VALID, { host: server.token, localAddress: '127.77.9.9' })).status, 200);
    });

    it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      const spoofed = await issue(fenced.auth, VALID, { localAddress: '127.79.0.4', headers: { 'x-forwarded-for': '127.77.0.1' } });
      assertError(spoofed, 403, 'ip_not_allowed');
      const v6 = await issue(fenced.auth, VALID, { localAddress: '127.79.0.5', headers: { 'x-forwarded-for': '2001:db8::1' } });
      assertError(v6, 403, 'ip_not_allowed');
      const inside = await issue(fenced.auth, VALID, { localAddress: '127.77.0.2', headers: { 'x-forwarded-for': '192.0.2.1' } });
      assert.equal(inside.status, 200, inside.text);
    });

    it('admits any address when the allowlist is empty', async () => {
      for (const localAddress of ['127.79.1.1', '127.200.0.1']) {
        assert.equal((await issue(customer.auth, VALID, { localAddress })).status, 200);
      }
    });
  });
});
