import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { basic, freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

// The real limits of docs/reference/token-api.md (the platform runs with its defaults).
const APP_PER_MINUTE = 1200;
const ADDRESS_PER_MINUTE = 2400;
const FAILURES_PER_WINDOW = 20;
const BATCH = 40;
const OUTSIDE = '127.200.0.2'; // outside 127.0.0.0/9, where freshAddress() picks its addresses

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;

/** Runs `count` calls of `fn`, at most BATCH at a time, and returns the statuses in order. */
async function inBatches(count: number, fn: (i: number) => Promise<HttpResult>): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < count; start += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => fn(start + k));
    for (const res of await Promise.all(batch)) statuses.push(res.status);
  }
  return statuses;
}

function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

function assertRateLimited(res: HttpResult, maxRetryAfter: number): number {
  assert.equal(res.status, 429, res.text);
  assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
  assert.equal(res.json<{ error: string }>().error, 'rate_limited');
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^\d+$/, 'Retry-After is a whole number of seconds');
  const seconds = Number(retryAfter);
  assert.ok(seconds >= 1 && seconds <= maxRetryAfter, `Retry-After ${seconds} within 1..${maxRetryAfter}`);
  return seconds;
}

describe('token API rate limits', () => {
  let server: InProcessPlatform;

  const host = (i: number): string => (i % 2 === 0 ? server.api : server.token);
  const issue = (auth: string | undefined, localAddress: string, options: { base?: string; headers?: Record<string, string> } = {}) =>
    server.request(`${options.base ?? server.api}/v1/rtc/tokens`, {
      headers: { ...(auth !== undefined && { authorization: auth }), ...options.headers }, body: VALID, localAddress,
    });
  const revoke = (auth: string, localAddress: string, base = server.api) =>
    server.request(`${base}/v1/rtc/tokens/revoke`, { headers: { authorization: auth }, body: { revocation_handle: 'rvk_AAAA' }, localAddress });
  const shortForm = (who: Customer, localAddress: string) =>
    server.request(`${server.token}/v1/tokens`, {
      headers: { authorization: who.auth }, body: { app_id: who.appId, user_id: 'u', room_id: 'r', role: 'host' }, localAddress,
    });

  before(async () => {
    server = await startInProcess();
  });
  after(async () => {
    await server.close();
  });

  it(`allows ${APP_PER_MINUTE} requests a minute per App ID on both hosts together, then 429 with Retry-After`, async () => {
    const [limited, bystander] = await Promise.all([
      createCustomer(server, { ip_allowlist: ['127.0.0.0/9'] }), createCustomer(server),
    ]);
    const addresses = [freshAddress(), freshAddress(), freshAddress(), freshAddress()];
    const statuses = await inBatches(APP_PER_MINUTE, (i) => issue(limited.auth, addresses[i % addresses.length]!, { base: host(i) }));
    assert.deepEqual(tally(statuses), { 200: APP_PER_MINUTE });

    const address = freshAddress();
    assertRateLimited(await issue(limited.auth, address), 60);
    assertRateLimited(await issue(limited.auth, address, { base: server.token }), 60);
    assertRateLimited(await revoke(limited.auth, address), 60);
    assertRateLimited(await shortForm(limited, address), 60);
    // docs/reference/token-api.md, order of checks: the App ID's limit comes before the IP allowlist
    assertRateLimited(await issue(limited.auth, OUTSIDE), 60);
    // ... and after authentication: a wrong secret is still 401
    const wrong = await issue(basic(limited.appId, 'sk_wrong'), freshAddress());
    assert.equal(wrong.status, 401, wrong.text);
    // ... before validation of the body
    const invalid = await server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: limited.auth }, body: { nonsense: true }, localAddress: freshAddress(),
    });
    assertRateLimited(invalid, 60);
    // ... and before the archived state
    const archived = await server.request(`${server.api}/v1/projects/${limited.projectId}/archive`, {
      method: 'POST', headers: { authorization: `Bearer ${limited.accessToken}` },
    });
    assert.equal(archived.status, 200, archived.text);
    assertRateLimited(await issue(limited.auth, freshAddress()), 60);
    // other App IDs, from the same addresses, are unaffected
    for (const a of addresses) assert.equal((await issue(bystander.auth, a)).status, 200);
  });

  it(`allows ${ADDRESS_PER_MINUTE} requests a minute per client address whatever the App ID, then 429 with Retry-After`, async () => {
    const customers = await Promise.all([0, 1, 2, 3].map(() => createCustomer(server)));
    const senders = customers.slice(0, 3);
    const address = freshAddress();
    const statuses = await inBatches(ADDRESS_PER_MINUTE, (i) => issue(senders[i % senders.length]!.auth, address, { base: host(i) }));
    assert.deepEqual(tally(statuses), { 200: ADDRESS_PER_MINUTE });

    const fresh = customers[3]!;
    assertRateLimited(await issue(fresh.auth, address), 60);
    assertRateLimited(await issue(fresh.auth, address, { base: server.token }), 60);
    assertRateLimited(await revoke(fresh.auth, address), 60);
    // docs/reference/token-api.md, order of checks: the address limit comes first, before Origin and authentication
    assertRateLimited(await issue(fresh.auth, address, { headers: { origin: 'https://app.example' } }), 60);
    assertRateLimited(await issue(basic(fresh.appId, 'sk_wrong'), address), 60);
    assertRateLimited(await issue(undefined, address), 60);
    // another address is unaffected, with the same App IDs
    const elsewhere = freshAddress();
    for (const c of customers) assert.equal((await issue(c.auth, elsewhere)).status, 200);
  });

  describe('failed authentications', () => {
    let customer: Customer;

    before(async () => {
      customer = await createCustomer(server);
    });

    it(`blocks an address after ${FAILURES_PER_WINDOW} failures within five minutes, for every token-API request`, async () => {
      const address = freshAddress();
      const failures: (() => Promise<HttpResult>)[] = [
        () => issue(basic(customer.appId, 'sk_wrong'), address),
        () => issue(basic('app_AAAAAAAAAAAAAAAAAAAAAA', 'sk_x'), address, { base: server.token }),
        () => issue(undefined, address),
        () => issue(`Bearer ${customer.accessToken}`, address),
        () => revoke(basic(customer.appId, 'sk_wrong'), address, server.token),
      ];
      for (let i = 0; i < FAILURES_PER_WINDOW - 1; i++) {
        const res = await failures[i % failures.length]!();
        assert.equal(res.status, 401, `failure ${i + 1}: ${res.text}`);
      }
      // not blocked before the 20th failure
      assert.equal((await issue(customer.auth, address)).status, 200);
      assert.equal((await issue(basic(customer.appId, 'sk_wrong'), address)).status, 401);

      // blocked now, correct credentials included, on both hosts and every endpoint
      const seconds = assertRateLimited(await issue(customer.auth, address), 300);
      assert.ok(seconds > 60, `Retry-After ${seconds} points at the end of the five-minute window`);
      assertRateLimited(await issue(customer.auth, address, { base: server.token }), 300);
      assertRateLimited(await revoke(customer.auth, address), 300);
      assertRateLimited(await revoke(customer.auth, address, server.token), 300);
      assertRateLimited(await shortForm(customer, address), 300);
      assertRateLimited(await issue(customer.auth, address, { headers: { origin: 'https://app.example' } }), 300);
      assertRateLimited(await issue(basic(customer.appId, 'sk_wrong'), address), 300);
    });

    it('leaves other addresses unaffected', async () => {
      const blocked = freshAddress();
      for (let i = 0; i < FAILURES_PER_WINDOW; i++) assert.equal((await issue(basic(customer.appId, 'sk_wrong'), blocked)).status, 401);
      assertRateLimited(await issue(customer.auth, blocked), 300);
      const other = freshAddress();
      assert.equal((await issue(customer.auth, other)).status, 200);
      assert.equal((await issue(customer.auth, other, { base: server.token })).status, 200);
      // a few failures from another address do not block it
      for (let i = 0; i < 3; i++) assert.equal((await issue(basic(customer.appId, 'sk_wrong'), other)).status, 401);
      assert.equal((await issue(customer.auth, other)).status, 200);
    });

    it('does not count requests refused before authentication (Origin, oversized body)', async () => {
      const address = freshAddress();
      for (let i = 0; i < FAILURES_PER_WINDOW + 5; i++) {
        const res = await issue(basic(customer.appId, 'sk_wrong'), address, { headers: { origin: 'https://app.example' } });
        assert.equal(res.status, 403, res.text);
      }
      for (let i = 0; i < FAILURES_PER_WINDOW + 5; i++) {
        const res = await server.request(`${server.api}/v1/rtc/tokens`, {
          headers: { authorization: basic(customer.appId, 'sk_wrong') }, body: { ...VALID, user_id: 'u'.repeat(9000) }, localAddress: address,
        });
        assert.equal(res.status, 413, res.text);
      }
      assert.equal((await issue(customer.auth, address)).status, 200);
    });

    it('counts failures that arrive concurrently', async () => {
      const address = freshAddress();
      const statuses = await inBatches(FAILURES_PER_WINDOW, () => issue(basic(customer.appId, 'sk_wrong'), address));
      assert.deepEqual(tally(statuses), { 401: FAILURES_PER_WINDOW });
      assertRateLimited(await issue(customer.auth, address), 300);
    });
  });

  describe('windows, on the platform clock', () => {
    it('opens a new window for the App ID a minute after the first request of the full one', async () => {
      const customer = await createCustomer(server);
      const address = freshAddress();
      assert.deepEqual(tally(await inBatches(APP_PER_MINUTE, () => issue(customer.auth, address))), { 200: APP_PER_MINUTE });
      server.clock.advance(59_000);
      assert.equal(assertRateLimited(await issue(customer.auth, address), 60), 1);
      server.clock.advance(1_000);
      assert.equal((await issue(customer.auth, address)).status, 200);
    });

    it('opens a new window for the client address a minute after the first request of the full one', async () => {
      const customers = await Promise.all([0, 1].map(() => createCustomer(server)));
      const address = freshAddress();
      const statuses = await inBatches(ADDRESS_PER_MINUTE, (i) => issue(customers[i % 2]!.auth, address));
      assert.deepEqual(tally(statuses), { 200: ADDRESS_PER_MINUTE });
      server.clock.advance(30_000);
      assert.equal(assertRateLimited(await issue(customers[0]!.auth, address), 60), 30);
      server.clock.advance(30_000);
      assert.equal((await issue(customers[0]!.auth, address)).status, 200);
    });

    it('lifts the block of an address five minutes after its first failed authentication', async () => {
      const customer = await createCustomer(server);
      const address = freshAddress();
      for (let i = 0; i < FAILURES_PER_WINDOW; i++) assert.equal((await issue(basic(customer.appId, 'sk_wrong'), address)).status, 401);
      assert.equal(assertRateLimited(await issue(customer.auth, address), 300), 300);
      server.clock.advance(299_000);
      assert.equal(assertRateLimited(await issue(customer.auth, address), 300), 1);
      server.clock.advance(1_000);
      assert.equal((await issue(customer.auth, address)).status, 200);
    });
  });
});
