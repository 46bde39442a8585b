import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { type HttpResult } from '../../../test/helpers/http.ts';
import { assertError } from '../../../test/helpers/assert.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;

describe('POST /v1/rtc/tokens: turn and signaling on a deployment without TURN relay or signaling service', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let subscriberOnly: Customer;

  const issue = (body: unknown, who: Customer = customer, host = server.api): Promise<HttpResult> =>
    server.request(`${host}/v1/rtc/tokens`, { headers: { authorization: who.auth }, body });

  before(async () => {
    // neither TURN nor signaling: no signaling role, no public signaling URL, no TURN secret or URIs
    server = await startInProcess({
      env: { RTC_TURN_SECRET: '', RTC_TURN_URIS: '', RTC_SIGNALING_PUBLIC_URL: '' },
    });
    [customer, subscriberOnly] = await Promise.all([
      createCustomer(server), createCustomer(server, { scopes: ['subscriber'] }),
    ]);
  });
  after(async () => {
    await server.close();
  });

  for (const host of ['api', 'token'] as const) {
    it(`answers turn: true with 502 turn_unavailable on the ${host} host`, async () => {
      assertError(await issue({ ...VALID, turn: true }, customer, server.urls[host]), 502, 'turn_unavailable', /TURN/);
    });
    it(`answers signaling: true with 502 signaling_unavailable on the ${host} host`, async () => {
      assertError(await issue({ ...VALID, signaling: true }, customer, server.urls[host]), 502, 'signaling_unavailable', /signaling/);
    });
  }

  it('answers turn and signaling together with a 502 for one of them', async () => {
    const res = await issue({ ...VALID, turn: true, signaling: true });
    assert.equal(res.status, 502, res.text);
    assert.ok(['turn_unavailable', 'signaling_unavailable'].includes(res.json<{ error: string }>().error));
  });

  it('issues without turn and signaling when both are false or absent', async () => {
    for (const body of [VALID, { ...VALID, turn: false, signaling: false }]) {
      const res = await issue(body);
      assert.equal(res.status, 200, res.text);
      const t = res.json<TokenResponse>();
      assert.equal(t.turn, undefined);
      assert.equal(t.signaling, undefined);
    }
  });

  it('validates the request before answering 502', async () => {
    assertError(await issue({ ...VALID, turn: true, ttl_seconds: 0 }), 400, 'invalid_request');
    assertError(await issue({ ...VALID, signaling: true, extra: 1 }), 400, 'invalid_request');
  });

  it('checks scopes before answering 502', async () => {
    assertError(await issue({ ...VALID, turn: true, publish_streams: [1] }, subscriberOnly), 403, 'scope_denied');
    assertError(await issue({ ...VALID, signaling: true, publish_streams: [1] }, subscriberOnly), 403, 'scope_denied');
  });
});
