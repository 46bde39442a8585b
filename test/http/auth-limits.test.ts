/**
 * Password guessing limits of POST /v1/auth/login. Apart from the other session tests because every
 * attempt costs a real scrypt hash: together they took most of one file's time budget.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerAccount } from '../helpers/customer.ts';
import { freshAddress, type HttpResult } from '../helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../helpers/inproc.ts';

describe('POST /v1/auth/login: limits on password guessing', () => {
  let server: InProcessPlatform;

  const login = (email: string, password: string, localAddress: string): Promise<HttpResult> =>
    server.request(`${server.api}/v1/auth/login`, { body: { email, password }, localAddress });

  before(async () => {
    server = await startInProcess();
  });
  after(async () => {
    await server.close();
  });

  it('blocks an address after 20 failures, for the right password too (429 with Retry-After)', async () => {
    const address = freshAddress();
    const victim = await registerAccount(server);
    const bystander = await registerAccount(server);
    for (let i = 0; i < 20; i++) {
      const res = await login(victim.email, `wrong-password-${i}`, address);
      assert.equal(res.status, 401, `failure ${i + 1}: ${res.text}`);
    }
    for (const who of [victim, bystander]) {
      const res = await login(who.email, who.password, address);
      assert.equal(res.status, 429, res.text);
      assert.equal(res.json()['error'], 'rate_limited');
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 300, `Retry-After ${res.headers['retry-after']}`);
    }
    // the block is the address's: another address still signs the bystander in
    const elsewhere = await login(bystander.email, bystander.password, freshAddress());
    assert.equal(elsewhere.status, 200, elsewhere.text);
  });

  it('checks at most 20 passwords of one e-mail address in a window, also when the attempts arrive at once', async () => {
    const guesses = Array.from({ length: 30 }, (_, i) => `wrong-password-${i}`);
    // from one address, and from a new address each: neither the address nor the e-mail block can be outrun
    const single = freshAddress();
    for (const addressOf of [() => single, () => freshAddress()]) {
      const victim = await registerAccount(server);
      const results = await Promise.all(guesses.map((guess) => login(victim.email, guess, addressOf())));
      const checked = results.filter((res) => res.status === 401).length;
      assert.ok(checked <= 20, `${checked} passwords were checked`);
      for (const res of results) assert.ok(res.status === 401 || res.status === 429, res.text);
    }
  });

  it('lets the address in again five minutes after its first failure', async () => {
    const address = freshAddress();
    const victim = await registerAccount(server);
    for (let i = 0; i < 20; i++) assert.equal((await login(victim.email, `wrong-password-${i}`, address)).status, 401);
    assert.equal((await login(victim.email, victim.password, address)).status, 429);
    server.clock.advance(300_000);
    const res = await login(victim.email, victim.password, address);
    assert.equal(res.status, 200, res.text);
  });
});
