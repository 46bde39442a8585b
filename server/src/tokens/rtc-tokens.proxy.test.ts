import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { basic, type HttpResult } from '../../../test/helpers/http.ts';
import { assertError } from '../../../test/helpers/assert.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;

describe('token API behind a trusted reverse proxy (RTC_TRUST_PROXY): IPv6 and IPv4 allowlists', () => {
  let server: InProcessPlatform;
  let fenced: Customer;

  const issue = (auth: string, forwardedFor: string | undefined, host?: string): Promise<HttpResult> =>
    server.request(`${host ?? server.api}/v1/rtc/tokens`, {
      headers: { authorization: auth, ...(forwardedFor !== undefined && { 'x-forwarded-for': forwardedFor }) },
      body: VALID,
    });

  before(async () => {
    server = await startInProcess({ env: { RTC_TRUST_PROXY: '127.0.0.0/8' } });
    fenced = await createCustomer(server, { ip_allowlist: ['2001:db8:aa::/48', '2001:db8:cc::1', '198.51.100.0/24'] });
  });
  after(async () => {
    await server.close();
  });

  const ADMITTED: readonly (readonly [string, string])[] = [
    ['an IPv6 address inside a /48', '2001:db8:aa::7'],
    ['the last IPv6 address of the /48', '2001:db8:aa:ffff:ffff:ffff:ffff:ffff'],
    ['an IPv6 address written in full and in capitals', '2001:0DB8:00AA:0000:0000:0000:0000:0007'],
    ['an IPv6 address listed without a prefix', '2001:db8:cc::1'],
    ['an IPv4 address inside a /24', '198.51.100.9'],
    ['an IPv4-mapped IPv6 form of an allowed IPv4 address', '::ffff:198.51.100.10'],
    ['the right-most untrusted hop of a chain', '2001:db8:ab::1, 2001:db8:aa::7'],
    ['a client behind two trusted proxies', '2001:db8:aa::8, 127.0.0.2, 127.0.0.3'],
  ];
  for (const [what, forwardedFor] of ADMITTED) {
    it(`admits ${what}`, async () => {
      const res = await issue(fenced.auth, forwardedFor);
      assert.equal(res.status, 200, res.text);
    });
  }

  const REFUSED: readonly (readonly [string, string | undefined])[] = [
    ['an IPv6 address outside every range', '2001:db8:ab::1'],
    ['the IPv6 neighbour of a single listed address', '2001:db8:cc::2'],
    ['an IPv4 address outside every range', '198.51.101.1'],
    ['a chain whose right-most untrusted hop is outside (a client cannot prepend its way in)', '2001:db8:aa::7, 2001:db8:ab::1'],
    ['a garbled X-Forwarded-For (the proxy itself is the client)', 'unknown'],
    ['a chain with a garbled hop (the proxy itself is the client)', '2001:db8:aa::7, not-an-address'],
    ['a request without X-Forwarded-For (the proxy itself is the client)', undefined],
  ];
  for (const [what, forwardedFor] of REFUSED) {
    it(`refuses ${what} with 403 ip_not_allowed`, async () => {
      assertError(await issue(fenced.auth, forwardedFor), 403, 'ip_not_allowed');
    });
  }

  it('applies the same allowlist on the token host', async () => {
    assert.equal((await issue(fenced.auth, '2001:db8:aa::9', server.token)).status, 200);
    assertError(await issue(fenced.auth, '2001:db8:ab::9', server.token), 403, 'ip_not_allowed');
  });

  it('counts failed authentications per forwarded client address', async () => {
    const blocked = '2001:db8:dd::1';
    for (let i = 0; i < 20; i++) assertError(await issue(basic(fenced.appId, 'sk_wrong'), blocked), 401, 'invalid_credentials');
    const res = await issue(fenced.auth, blocked);
    assertError(res, 429, 'rate_limited');
    assert.match(String(res.headers['retry-after']), /^\d+$/);
    // another client behind the same proxy is unaffected (it is then refused by the allowlist, not blocked)
    assertError(await issue(fenced.auth, '2001:db8:dd::2'), 403, 'ip_not_allowed');
    assert.equal((await issue(fenced.auth, '2001:db8:aa::10')).status, 200);
  });
});
