import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createCustomer, type Customer, newLogin, registerAccount, type SessionBody } from '../../../test/helpers/customer.ts';
import { basic, type HttpResult } from '../../../test/helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { newId } from '../core/ids.ts';
import { createPasswordHasher } from '../core/password.ts';

const TOKEN_BODY = { room_id: 'room-1', user_id: 'user-1', role: 'participant' };

describe('customer API: accounts and console sessions', () => {
  let server: InProcessPlatform;
  let customer: Customer;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}, localAddress?: string): Promise<HttpResult> =>
    server.request(`${server.api}${path}`, { body, headers, ...(localAddress !== undefined && { localAddress }) });
  const account = (token: string): Promise<HttpResult> => server.request(`${server.api}/v1/account`, { headers: bearer(token) });
  const login = (email: string, password: string, localAddress?: string): Promise<HttpResult> =>
    post('/v1/auth/login', { email, password }, {}, localAddress);
  const refresh = (token: string): Promise<HttpResult> => post('/v1/auth/refresh', { refresh_token: token });

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });

  describe('POST /v1/auth/register', () => {
    it('creates an account and opens a session (201, account and token pair)', async () => {
      const { email, password } = newLogin();
      const res = await post('/v1/auth/register', { email, password });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json<SessionBody>();
      assert.deepEqual(Object.keys(body).sort(), ['access_token', 'account', 'expires_in', 'refresh_token', 'token_type']);
      assert.deepEqual(Object.keys(body.account).sort(), ['created_at', 'email', 'id']);
      assert.match(body.account.id, /^acc_[A-Za-z0-9_-]{22}$/);
      assert.equal(body.account.email, email);
      assert.ok(Number.isInteger(body.account.created_at));
      assert.match(body.access_token, /^cs_[A-Za-z0-9_-]{43}$/);
      assert.match(body.refresh_token, /^rt_[A-Za-z0-9_-]{43}$/);
      assert.equal(body.token_type, 'Bearer');
      assert.ok(Number.isInteger(body.expires_in) && body.expires_in > 0);
      assert.ok(!res.text.includes(password));

      const me = await account(body.access_token);
      assert.equal(me.status, 200, me.text);
      assert.deepEqual(me.json(), body.account);
    });

    it('refuses an e-mail address that is taken (409 conflict)', async () => {
      const res = await post('/v1/auth/register', { email: customer.email, password: 'another-password-1' });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json()['error'], 'conflict');
      assert.equal(typeof res.json()['message'], 'string');
    });

    it('treats e-mail addresses case-insensitively', async () => {
      const { email, password } = newLogin();
      const mixed = email.replace('user', 'User').replace('example', 'EXAMPLE');
      const created = await post('/v1/auth/register', { email: mixed, password });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.json<SessionBody>().account.email, email);

      const again = await post('/v1/auth/register', { email: email.toUpperCase(), password });
      assert.equal(again.status, 409, again.text);
      const signedIn = await login(email.toUpperCase(), password);
      assert.equal(signedIn.status, 200, signedIn.text);
      assert.equal(signedIn.json<SessionBody>().account.id, created.json<SessionBody>().account.id);
    });

    const invalid: [string, unknown, RegExp][] = [
      ['a malformed e-mail address', { email: 'not-an-address', password: 'long-enough-pw' }, /email must be an e-mail address/],
      ['an e-mail address with a control character', { email: 'a\u0000b@example.com', password: 'long-enough-pw' }, /email must be an e-mail address/],
      ['a password under 10 characters', { email: 'short@example.test', password: 'short' }, /password must be at least 10 characters/],
      ['an unknown field', { email: 'x@example.test', password: 'long-enough-pw', plan: 'pro' }, /unknown field "plan"/],
      ['a missing password', { email: 'x@example.test' }, /password is required/],
      ['a body that is not an object', [1, 2], /JSON object/],
    ];
    for (const [what, body, rule] of invalid) {
      it(`answers ${what} with 400 invalid_request naming the rule`, async () => {
        const res = await post('/v1/auth/register', body);
        assert.equal(res.status, 400, res.text);
        assert.equal(res.json()['error'], 'invalid_request');
        assert.match(String(res.json()['message']), rule);
      });
    }
  });

  describe('POST /v1/auth/login', () => {
    it('opens a new session for the right password (200)', async () => {
      const res = await login(customer.email, customer.password);
      assert.equal(res.status, 200, res.text);
      const body = res.json<SessionBody>();
      assert.equal(body.account.email, customer.email);
      assert.notEqual(body.access_token, customer.accessToken);
      assert.notEqual(body.refresh_token, customer.refreshToken);
      assert.equal((await account(body.access_token)).status, 200);
      // the session opened at registration is still valid: logins do not end each other
      assert.equal((await account(customer.accessToken)).status, 200);
    });

    it('gives a wrong password and an unknown e-mail address the same 401 body', async () => {
      const wrong = await login(customer.email, 'wrong-password-123');
      const unknown = await login(`nobody-${Date.now()}@example.test`, 'wrong-password-123');
      assert.equal(wrong.status, 401, wrong.text);
      assert.equal(unknown.status, 401, unknown.text);
      assert.equal(wrong.json()['error'], 'invalid_credentials');
      assert.equal(wrong.text, unknown.text);
    });

    it('hashes a password stored at an earlier cost again at sign-in, and it keeps working', async () => {
      const { email, password } = newLogin();
      const earlier = await createPasswordHasher({ N: 2048, r: 8, p: 2 }).hash(password);
      const id = newId('account');
      assert.equal(await server.deps.store.insertAccount({ id, email, passwordHash: earlier, createdAt: server.clock.nowMs() }), true);
      assert.equal(server.deps.passwords.needsRehash(earlier), true);

      assert.equal((await login(email, 'not-the-password-1')).status, 401);
      assert.equal((await server.deps.store.getAccount(id))?.passwordHash, earlier, 'a failed sign-in changes nothing');
      const res = await login(email, password);
      assert.equal(res.status, 200, res.text);
      const stored = (await server.deps.store.getAccount(id))!.passwordHash;
      assert.notEqual(stored, earlier);
      assert.equal(server.deps.passwords.needsRehash(stored), false);
      assert.equal((await login(email, password)).status, 200);
      assert.equal((await server.deps.store.getAccount(id))?.passwordHash, stored, 'hashed again once');
      assert.equal((await login(email, 'not-the-password-1')).status, 401);
    });
  });

  describe('POST /v1/auth/refresh', () => {
    it('rotates the pair: the old access token stops working, the new one works', async () => {
      const acc = await registerAccount(server);
      const res = await refresh(acc.refreshToken);
      assert.equal(res.status, 200, res.text);
      const next = res.json<SessionBody>();
      assert.equal(next.account.id, acc.accountId);
      assert.notEqual(next.access_token, acc.accessToken);
      assert.notEqual(next.refresh_token, acc.refreshToken);
      assert.equal((await account(acc.accessToken)).status, 401);
      assert.equal((await account(next.access_token)).status, 200);
      const again = await refresh(next.refresh_token);
      assert.equal(again.status, 200, again.text);
    });

    it('answers reuse of a spent refresh token with 401 and ends the whole session family', async () => {
      const acc = await registerAccount(server);
      const first = await refresh(acc.refreshToken);
      assert.equal(first.status, 200, first.text);
      const newest = first.json<SessionBody>();
      assert.equal((await account(newest.access_token)).status, 200);

      const reuse = await refresh(acc.refreshToken);
      assert.equal(reuse.status, 401, reuse.text);
      assert.equal(reuse.json()['error'], 'unauthenticated');
      assert.equal((await account(newest.access_token)).status, 401);
      assert.equal((await refresh(newest.refresh_token)).status, 401);
      // a separate login of the same account is another family and survives
      const other = await login(acc.email, acc.password);
      assert.equal((await account(other.json<SessionBody>().access_token)).status, 200);
    });

    it('refuses an unknown refresh token with 401', async () => {
      const res = await refresh(`rt_${'A'.repeat(43)}`);
      assert.equal(res.status, 401, res.text);
      assert.equal(res.json()['error'], 'unauthenticated');
    });
  });

  describe('POST /v1/auth/logout', () => {
    it('ends the session: its access and refresh tokens are refused', async () => {
      const acc = await registerAccount(server);
      const res = await server.request(`${server.api}/v1/auth/logout`, { method: 'POST', headers: bearer(acc.accessToken) });
      assert.equal(res.status, 204, res.text);
      assert.equal(res.text, '');
      assert.equal((await account(acc.accessToken)).status, 401);
      assert.equal((await refresh(acc.refreshToken)).status, 401);
      const again = await server.request(`${server.api}/v1/auth/logout`, { method: 'POST', headers: bearer(acc.accessToken) });
      assert.equal(again.status, 401);
    });
  });

  describe('bearer authentication', () => {
    it('refuses a console session token on the token API (401 invalid_credentials)', async () => {
      const viaBearer = await server.request(`${server.api}/v1/rtc/tokens`, { headers: bearer(customer.accessToken), body: TOKEN_BODY });
      const wrongSecret = await server.request(`${server.api}/v1/rtc/tokens`, {
        headers: { authorization: basic(customer.appId, `sk_${'x'.repeat(43)}`) }, body: TOKEN_BODY,
      });
      assert.equal(viaBearer.status, 401, viaBearer.text);
      assert.equal(viaBearer.json()['error'], 'invalid_credentials');
      assert.equal(viaBearer.headers['www-authenticate'], 'Basic realm="rtc"');
      assert.equal(viaBearer.text, wrongSecret.text);
      // nor as a Basic password beside the account's e-mail address
      const asBasic = await server.request(`${server.token}/v1/rtc/tokens`, {
        headers: { authorization: basic(customer.email, customer.accessToken) }, body: TOKEN_BODY,
      });
      assert.equal(asBasic.status, 401);
      assert.equal(asBasic.text, wrongSecret.text);
    });

    const refused: [string, () => Record<string, string>][] = [
      ['no Authorization header', () => ({})],
      ['a garbage bearer token', () => bearer('not-a-token')],
      ['an unknown session token', () => bearer(`cs_${'A'.repeat(43)}`)],
      ['a refresh token as bearer', () => bearer(customer.refreshToken)],
      ['the App Secret as bearer', () => bearer(customer.appSecret)],
      ['HTTP Basic credentials', () => ({ authorization: customer.auth })],
      ['a bare scheme', () => ({ authorization: 'Bearer' })],
    ];
    for (const [what, headersOf] of refused) {
      it(`answers ${what} with 401 unauthenticated and WWW-Authenticate: Bearer`, async () => {
        const sent = headersOf();
        for (const res of [
          await server.request(`${server.api}/v1/projects`, { headers: sent }),
          await server.request(`${server.api}/v1/account`, { headers: sent }),
          await server.request(`${server.api}/v1/projects`, { headers: sent, body: { name: 'x' } }),
        ]) {
          assert.equal(res.status, 401, res.text);
          assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
          assert.equal(res.json()['error'], 'unauthenticated');
          assert.match(String(res.headers['www-authenticate']), /^Bearer\b/);
        }
      });
    }
  });

  // last: it moves the platform clock past the lifetime of every session opened so far
  describe('session lifetimes, on the platform clock', () => {
    it('refuses an access token once expires_in has passed; its refresh token still opens a new session', async () => {
      const acc = await registerAccount(server);
      server.clock.advance(899_000);
      assert.equal((await account(acc.accessToken)).status, 200);
      server.clock.advance(2_000);
      assert.equal((await account(acc.accessToken)).status, 401);
      const res = await refresh(acc.refreshToken);
      assert.equal(res.status, 200, res.text);
      assert.equal((await account(res.json<SessionBody>().access_token)).status, 200);
    });
  });
});
