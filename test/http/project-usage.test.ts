import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { basic } from '../helpers/http.ts';
import { startInProcess, testClock, type InProcessPlatform } from '../helpers/inproc.ts';

interface Usage { tokens_per_day: { day: string; tokens: number }[] }

describe('GET /v1/projects/{id}/usage', () => {
  // 2026-11-24T23:59:00Z: a minute before a UTC day ends
  const clock = testClock(Date.UTC(2026, 10, 24, 23, 59));
  let server: InProcessPlatform;
  let customer: Customer;
  let stranger: Customer;

  const usage = (projectId: string, token = customer.accessToken) =>
    server.request(`${server.api}/v1/projects/${projectId}/usage`, { method: 'GET', headers: bearer(token) });
  const issue = () => server.request(`${server.token}/v1/rtc/tokens`, {
    headers: { authorization: basic(customer.appId, customer.appSecret) }, body: { room_id: 'r', user_id: 'u', role: 'speaker' },
  });

  before(async () => {
    server = await startInProcess({ clock });
    customer = await createCustomer(server);
    stranger = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });

  it('counts the tokens issued per UTC day over the last 14 days, temporary tokens included', async () => {
    const empty = await usage(customer.projectId);
    assert.equal(empty.status, 200, empty.text);
    const days = empty.json<Usage>().tokens_per_day;
    assert.equal(days.length, 14);
    assert.equal(days.at(-1)!.day, '2026-11-24');
    assert.equal(days[0]!.day, '2026-11-11');
    assert.ok(days.every((d) => d.tokens === 0));

    for (let i = 0; i < 3; i++) assert.equal((await issue()).status, 200);
    const temporary = await server.request(`${server.api}/v1/projects/${customer.projectId}/temporary-token`, {
      headers: bearer(customer.accessToken), body: { room_id: 'r', user_id: 'console', role: 'host' },
    });
    assert.equal(temporary.status, 200);
    // refused requests are not tokens
    assert.equal((await server.request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: basic(customer.appId, 'wrong') }, body: { room_id: 'r', user_id: 'u', role: 'speaker' },
    })).status, 401);
    assert.deepEqual((await usage(customer.projectId)).json<Usage>().tokens_per_day.at(-1), { day: '2026-11-24', tokens: 4 });

    // past midnight UTC the count starts again; yesterday keeps its figure
    clock.advance(2 * 60_000);
    assert.equal((await issue()).status, 200);
    const next = (await usage(customer.projectId)).json<Usage>().tokens_per_day;
    assert.deepEqual(next.slice(-2), [{ day: '2026-11-24', tokens: 4 }, { day: '2026-11-25', tokens: 1 }]);
    // another project of another account counts nothing of these
    assert.ok((await usage(stranger.projectId, stranger.accessToken)).json<Usage>().tokens_per_day.every((d) => d.tokens === 0));
  });

  it('shows a project only to its account, and only with a console session', async () => {
    assert.equal((await usage(customer.projectId, stranger.accessToken)).status, 404);
    const credential = await server.request(`${server.api}/v1/projects/${customer.projectId}/usage`, {
      method: 'GET', headers: { authorization: basic(customer.appId, customer.appSecret) },
    });
    assert.equal(credential.status, 401);
  });
});
