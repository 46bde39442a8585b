/**
 * Password guessing limits of POST /v1/auth/login, in files of their own: every attempt costs a real
 * scrypt hash, and on a loaded machine a few dozen of them take most of the time a file may run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerAccount } from '../../../test/helpers/customer.ts';
import { freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { useInProcess } from '../../../test/helpers/inproc.ts';

describe('POST /v1/auth/login: the block of an address', () => {
  const platform = useInProcess();
  const login = (email: string, password: string, localAddress: string): Promise<HttpResult> =>
    platform().request(`${platform().api}/v1/auth/login`, { body: { email, password }, localAddress });

  it('blocks an address after 20 failures, for the right password too (429 with Retry-After), for five minutes', async () => {
    const server = platform();
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
      // the window opened with the first failure, and the platform clock has not moved since
      assert.equal(res.headers['retry-after'], '300');
    }
    // the block is the address's: another address still signs the bystander in
    const elsewhere = await login(bystander.email, bystander.password, freshAddress());
    assert.equal(elsewhere.status, 200, elsewhere.text);
    // and it ends five minutes after the first failure
    server.clock.advance(299_000);
    assert.equal((await login(victim.email, victim.password, address)).headers['retry-after'], '1');
    server.clock.advance(1_000);
    const res = await login(victim.email, victim.password, address);
    assert.equal(res.status, 200, res.text);
  });
});
