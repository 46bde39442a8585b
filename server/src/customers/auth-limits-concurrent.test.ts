/**
 * Password guessing limits of POST /v1/auth/login, in files of their own: every attempt costs a real
 * scrypt hash, and on a loaded machine a few dozen of them take most of the time a file may run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerAccount } from '../../../test/helpers/customer.ts';
import { freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { useInProcess } from '../../../test/helpers/inproc.ts';

describe('POST /v1/auth/login: the limit of an e-mail address', () => {
  const platform = useInProcess();
  const login = (email: string, password: string, localAddress: string): Promise<HttpResult> =>
    platform().request(`${platform().api}/v1/auth/login`, { body: { email, password }, localAddress });

  it('checks at most 20 passwords of one e-mail address in a window, also when the attempts arrive at once', async () => {
    const guesses = Array.from({ length: 30 }, (_, i) => `wrong-password-${i}`);
    // from one address, and from a new address each: neither the address nor the e-mail block can be outrun
    const single = freshAddress();
    for (const addressOf of [() => single, () => freshAddress()]) {
      const victim = await registerAccount(platform());
      const results = await Promise.all(guesses.map((guess) => login(victim.email, guess, addressOf())));
      const checked = results.filter((res) => res.status === 401).length;
      assert.ok(checked <= 20, `${checked} passwords were checked`);
      for (const res of results) assert.ok(res.status === 401 || res.status === 429, res.text);
    }
  });
});
