/** The console's account operations (change password, sign out everywhere) and test-room invitations, through HTTP. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { freshAddress, type HttpResult } from '../helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../helpers/inproc.ts';

describe('account: change password and sign out everywhere', () => {
  let server: InProcessPlatform;
  before(async () => {
    server = await startInProcess();
  });
  after(async () => {
    await server.close();
  });
  const login = (email: string, password: string): Promise<HttpResult> =>
    server.request(`${server.api}/v1/auth/login`, { body: { email, password }, localAddress: freshAddress() });
  const account = (token: string): Promise<HttpResult> => server.request(`${server.api}/v1/account`, { method: 'GET', headers: bearer(token) });

  it('changes the password after checking the current one, and ends every other session but this one', async () => {
    const customer = await createCustomer(server);
    const other = (await login(customer.email, customer.password)).json<{ access_token: string; refresh_token: string }>();
    const change = (body: unknown, token = customer.accessToken): Promise<HttpResult> =>
      server.request(`${server.api}/v1/account/password`, { headers: bearer(token), body });

    const wrong = await change({ current_password: 'not the password', new_password: 'a brand new password' });
    assert.equal(wrong.status, 401, wrong.text);
    assert.equal(wrong.json<{ error: string }>().error, 'invalid_credentials');
    const short = await change({ current_password: customer.password, new_password: 'short' });
    assert.equal(short.status, 400, short.text);
    assert.match(short.json<{ message: string }>().message, /new_password must be at least 10 characters/);
    assert.equal((await change({ current_password: customer.password, new_password: 'x' }, 'cs_nonsense')).status, 401);

    const ok = await change({ current_password: customer.password, new_password: 'a brand new password' });
    assert.equal(ok.status, 204, ok.text);
    assert.equal(ok.text, '');
    assert.equal((await account(customer.accessToken)).status, 200, 'this session stays signed in');
    assert.equal((await account(other.access_token)).status, 401, 'another session is signed out');
    const refreshed = await server.request(`${server.api}/v1/auth/refresh`, { body: { refresh_token: other.refresh_token } });
    assert.equal(refreshed.status, 401, 'and cannot refresh');
    assert.equal((await login(customer.email, customer.password)).status, 401, 'the old password is refused');
    assert.equal((await login(customer.email, 'a brand new password')).status, 200, 'the new one works');
  });

  it('signs out every session of the account, this one included, and no other account\'s', async () => {
    const customer = await createCustomer(server);
    const stranger = await createCustomer(server);
    const second = (await login(customer.email, customer.password)).json<{ access_token: string }>();
    const res = await server.request(`${server.api}/v1/auth/logout-all`, { method: 'POST', headers: bearer(customer.accessToken) });
    assert.equal(res.status, 204, res.text);
    assert.equal((await account(customer.accessToken)).status, 401);
    assert.equal((await account(second.access_token)).status, 401);
    assert.equal((await account(stranger.accessToken)).status, 200);
    assert.equal((await server.request(`${server.api}/v1/auth/logout-all`, { method: 'POST', headers: bearer(customer.accessToken) })).status, 401);
  });
});

describe('test-room invitations', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let stranger: Customer;
  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    stranger = await createCustomer(server);
  });
  after(async () => {
    await server.close();
  });
  const invite = (projectId: string, token = customer.accessToken, room = 'test-room'): Promise<HttpResult> =>
    server.request(`${server.api}/v1/projects/${projectId}/invitations`, { headers: bearer(token), body: { room_id: room } });
  const redeem = (body: unknown): Promise<HttpResult> =>
    server.request(`${server.api}/v1/invitations/redeem`, { body, localAddress: freshAddress() });

  it('trades an invitation, once, for a speaker\'s temporary token of its room, holding no secret itself', async () => {
    const res = await invite(customer.projectId);
    assert.equal(res.status, 201, res.text);
    const { invitation, room_id: room, expires_at: expiresAt } = res.json<{ invitation: string; room_id: string; expires_at: number }>();
    assert.equal(room, 'test-room');
    assert.ok(expiresAt - Date.now() / 1000 <= 600 && expiresAt - Date.now() / 1000 > 590);
    assert.match(invitation, /^inv_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.ok(!invitation.includes(customer.appSecret), 'no App Secret in it');

    const first = await redeem({ invitation });
    assert.equal(first.status, 200, first.text);
    const token = first.json<TokenResponse>();
    assert.equal(token.project_id, customer.projectId);
    assert.equal(token.room_id, 'test-room');
    // the guest's identity and streams are the platform's (server/src/rooms/share-link-guests.test.ts)
    assert.match(token.user_id, /^guest_/);
    assert.equal(token.role, 'speaker');
    assert.equal(token.publish_streams.length, 2);
    assert.equal(token.subscribe_room, true);
    assert.ok(token.expires_at - token.issued_at <= 600);

    const again = await redeem({ invitation, user_id: 'someone-else' });
    assert.equal(again.status, 401, again.text);
    assert.equal(again.json<{ error: string }>().error, 'unauthenticated');
  });

  it('refuses an altered invitation, another account\'s project, and a bad body', async () => {
    const { invitation } = (await invite(customer.projectId)).json<{ invitation: string }>();
    const altered = `${invitation.slice(0, -2)}${invitation.at(-2) === 'A' ? 'B' : 'A'}${invitation.slice(-1)}`;
    for (const bad of [altered, 'inv_nothing', 'garbage', `${invitation}.x`]) {
      const res = await redeem({ invitation: bad, user_id: 'guest' });
      assert.equal(res.status, 401, `${bad}: ${res.text}`);
    }
    assert.equal((await invite(customer.projectId, stranger.accessToken)).status, 404);
    assert.equal((await redeem({ invitation, user_id: 'has space' })).status, 400);
    assert.equal((await redeem({ invitation, user_id: 'guest', publish_streams: [1, 2, 3] })).status, 400);
    // none of those used it up
    assert.equal((await redeem({ invitation, user_id: 'guest' })).status, 200);
  });

  it('refuses invitations of an archived project', async () => {
    const { invitation } = (await invite(customer.projectId)).json<{ invitation: string }>();
    const archive = await server.request(`${server.api}/v1/projects/${customer.projectId}/archive`, { method: 'POST', headers: bearer(customer.accessToken) });
    assert.equal(archive.status, 200, archive.text);
    try {
      assert.equal((await invite(customer.projectId)).json<{ error: string }>().error, 'project_archived');
      assert.equal((await redeem({ invitation, user_id: 'guest' })).json<{ error: string }>().error, 'project_archived');
    } finally {
      await server.request(`${server.api}/v1/projects/${customer.projectId}/unarchive`, { method: 'POST', headers: bearer(customer.accessToken) });
    }
  });
});
