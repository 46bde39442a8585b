import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { SignalingClient, SignalingError, type SignalingEvent } from '../../../sdk/app/src/signaling.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request, type HttpResult } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { collect, issueSignalingToken, joinRoom, type Participant } from '../../../test/helpers/signaling.ts';

const UNAUTHENTICATED = { error: 'unauthenticated', message: 'the signaling token is invalid, expired or revoked' };

const isLeaveOf = (user: string) => (e: SignalingEvent) => e.type === 'leave' && e.user_id === user;

function assertRefused(res: HttpResult, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.text}`);
  assert.deepEqual(res.json(), UNAUTHENTICATED, what);
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="rtc"', what);
}

/** Every endpoint, with the token where the protocol puts it. */
async function everyEndpoint(url: string, token: string): Promise<[string, HttpResult][]> {
  const bearer = { authorization: `Bearer ${token}` };
  return Promise.all([
    request(`${url}/v1/signaling/join`, { body: { token } }).then((r) => ['join', r] as [string, HttpResult]),
    request(`${url}/v1/signaling/leave`, { body: { token } }).then((r) => ['leave', r] as [string, HttpResult]),
    request(`${url}/v1/signaling/messages`, { body: { token, data: 1 } }).then((r) => ['messages', r] as [string, HttpResult]),
    request(`${url}/v1/signaling/participants`, { headers: bearer }).then((r) => ['participants', r] as [string, HttpResult]),
    request(`${url}/v1/signaling/events`, { headers: bearer }).then((r) => ['events', r] as [string, HttpResult]),
  ]);
}

async function revoke(server: ServedPlatform, customer: Customer, token: TokenResponse): Promise<void> {
  const res = await request(`${server.token}/v1/rtc/tokens/revoke`, {
    headers: { authorization: customer.auth }, body: { revocation_handle: token.media.revocation_handle },
  });
  assert.equal(res.status, 200, res.text);
}

describe('signaling: tokens, revocation and limits', () => {
  let server: ServedPlatform;
  let customer: Customer;
  let url: string;
  const clients: SignalingClient[] = [];
  const join = async (room: string, user: string, extra: { ttl_seconds?: number } = {}): Promise<Participant> => {
    const p = await joinRoom(server.token, customer, { room_id: room, user_id: user, ...extra });
    clients.push(p.client);
    return p;
  };

  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'signaling'] });
    customer = await createCustomer(server);
    url = server.urls['signaling']!;
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.stop();
  });

  it('ends a revoked user\'s stream within a second, tells the room, and refuses the token', async () => {
    const alice = await join('r-revoke', 'alice');
    const bob = await join('r-revoke', 'bob');
    const started = performance.now();
    await revoke(server, customer, bob.token);
    const revoked = await bob.inbox.waitFor((e) => e.type === 'revoked', 1000, 'the revoked event');
    assert.equal(await bob.inbox.ended, undefined);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 1000, `the stream ended ${elapsed.toFixed(0)} ms after the revocation`);
    assert.equal(bob.inbox.events.at(-1), revoked);

    const left = await alice.inbox.waitFor(isLeaveOf('bob'), 1000, 'bob leaving');
    assert.equal(left.type === 'leave' && left.reason, 'revoked');
    for (const [what, res] of await everyEndpoint(url, bob.token.signaling.token)) assertRefused(res, what);
    // alice is unaffected
    await alice.client.send({ still: 'here' });
    assert.deepEqual((await alice.client.participants()).map((p) => p.user_id), ['alice']);
  });

  it('ends the SDK\'s iteration with the 401 when a revoked token cannot be renewed', async () => {
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-revoke-sdk', user_id: 'bob' });
    let asked = 0;
    const bob = new SignalingClient({
      url: t.signaling.url, token: t.signaling.token, reconnect: { minMs: 20, maxMs: 50 },
      renewToken: async () => {
        asked += 1;
        throw new Error('this user was cut off');
      },
    });
    clients.push(bob);
    await bob.join();
    // revoked while no stream was open: the next opening is refused, and renewal is refused too
    await revoke(server, customer, t);
    const inbox = collect(bob);
    const err = await inbox.ended;
    assert.ok(err instanceof SignalingError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.code, 'unauthenticated');
    assert.equal(asked, 1);
  });

  it('ends an expired token\'s stream with an expired event and refuses it afterwards', async () => {
    const alice = await join('r-expiry', 'alice');
    const bob = await join('r-expiry', 'bob', { ttl_seconds: 2 });
    await bob.inbox.waitFor((e) => e.type === 'expired', 4000, 'the expired event');
    assert.equal(await bob.inbox.ended, undefined);
    const left = await alice.inbox.waitFor(isLeaveOf('bob'), 1000, 'bob leaving');
    assert.equal(left.type === 'leave' && left.reason, 'expired');
    assert.ok(Date.now() / 1000 >= bob.token.expires_at);
    for (const [what, res] of await everyEndpoint(url, bob.token.signaling.token)) assertRefused(res, what);
  });

  it('refuses a media grant (audience rtc-media) as a signaling token', async () => {
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-aud', user_id: 'u' });
    for (const [what, res] of await everyEndpoint(url, t.media.grant)) assertRefused(res, what);
    // the same claims re-labelled as a signaling token break the signature
    const [, grantPayload] = t.media.grant.split('.');
    const [sigHeader, , sigSignature] = t.signaling.token.split('.');
    for (const [what, res] of await everyEndpoint(url, `${sigHeader}.${grantPayload}.${sigSignature}`)) assertRefused(res, what);
  });

  it('answers one 401 for a missing, malformed or altered token', async () => {
    const t = await issueSignalingToken(server.token, customer, { room_id: 'r-bad', user_id: 'u' });
    const token = t.signaling.token;
    const flipped = `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.at(-1)}`;
    for (const bad of ['', 'garbage', 'a.b.c', flipped, `${token}x`]) {
      for (const [what, res] of await everyEndpoint(url, bad)) assertRefused(res, `${what} with ${JSON.stringify(bad.slice(0, 12))}`);
    }
    assertRefused(await request(`${url}/v1/signaling/participants`), 'no Authorization header');
    assertRefused(await request(`${url}/v1/signaling/events`, { headers: { authorization: `Basic ${token}` } }), 'a Basic header');
    assertRefused(await request(`${url}/v1/signaling/join`, { body: {} }), 'no token field');
    assertRefused(await request(`${url}/v1/signaling/join`, { body: { token: 42 } }), 'a numeric token');
    assertRefused(await request(`${url}/v1/signaling/join`, { body: '[1]', headers: { 'content-type': 'application/json' } }), 'an array body');
    // a POST token in a header instead of the body is not accepted
    assertRefused(await request(`${url}/v1/signaling/join`, { body: {}, headers: { authorization: `Bearer ${token}` } }), 'a header on POST');
  });

  it('refuses oversized and malformed messages with the rule they break', async () => {
    const alice = await join('r-limits', 'alice');
    const bob = await join('r-limits', 'bob');
    const token = alice.token.signaling.token;
    const send = (body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> =>
      request(`${url}/v1/signaling/messages`, { body, headers });

    // data is measured as JSON: a string of n characters is n + 2 bytes
    const fits = await send({ token, data: 'x'.repeat(16_382) });
    assert.equal(fits.status, 200, fits.text);
    const over = await send({ token, data: 'x'.repeat(16_383) });
    assert.equal(over.status, 413);
    assert.deepEqual(over.json(), { error: 'invalid_request', message: 'data exceeds 16384 bytes of JSON' });
    const multibyte = await send({ token, data: 'é'.repeat(8_192) });
    assert.equal(multibyte.status, 413, 'UTF-8 bytes count, not characters');
    const huge = await send({ token, data: 'x'.repeat(70_000) });
    assert.equal(huge.status, 413);
    assert.equal(huge.json()['error'], 'invalid_request');

    const cases: [string, unknown, RegExp][] = [
      ['missing data', { token }, /^data is required/],
      ['null data', { token, data: null }, /^data is required/],
      ['an unknown field', { token, data: 1, room_id: 'elsewhere' }, /^unknown field "room_id" is not allowed$/],
      ['a recipient with a space', { token, data: 1, to: 'bob smith' }, /^to must be 1-128 printable ASCII characters/],
      ['a numeric recipient', { token, data: 1, to: 7 }, /^to must be a string$/],
      ['a recipient too long', { token, data: 1, to: 'b'.repeat(129) }, /^to must be 1-128/],
    ];
    for (const [what, body, message] of cases) {
      const res = await send(body);
      assert.equal(res.status, 400, `${what}: ${res.text}`);
      assert.equal(res.json()['error'], 'invalid_request', what);
      assert.match(String(res.json()['message']), message, what);
    }
    const notJson = await send(`{"token":"${token}","data":`, { 'content-type': 'application/json' });
    assert.equal(notJson.status, 400);
    assert.deepEqual(notJson.json(), { error: 'invalid_request', message: 'the request body is not valid JSON' });
    const notJsonType = await send(JSON.stringify({ token, data: 1 }), { 'content-type': 'text/plain' });
    assert.equal(notJsonType.status, 415);
    assert.equal(notJsonType.json()['error'], 'invalid_request');

    // nothing refused was delivered: bob saw exactly the one message that fitted
    await alice.client.send({ last: true });
    await bob.inbox.waitFor((e) => e.type === 'message' && (e.data as { last?: boolean }).last === true, 5000, 'the last message');
    assert.deepEqual(bob.inbox.messages().map((m) => typeof m.data === 'string' ? m.data.length : m.data), [16_382, { last: true }]);
  });

  it('rate limits a flooding token without slowing the others', async () => {
    const flooder = await join('r-flood', 'flooder');
    const calm = await join('r-flood', 'calm');
    const reader = await join('r-flood', 'reader');
    const started = performance.now();
    // 150 connections at once, spread over four source addresses: one address may hold 128
    // connections to the signaling port (RTC_MAX_CONNECTIONS_PER_ADDRESS), and this is about the per-token limit
    const results = await Promise.all(Array.from({ length: 150 }, (_, n) =>
      request(`${url}/v1/signaling/messages`, {
        body: { token: flooder.token.signaling.token, data: { n } }, localAddress: `127.0.4.${1 + (n % 4)}`,
      })));
    const elapsedMs = performance.now() - started;
    const accepted = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    assert.equal(accepted.length + limited.length, results.length, results.map((r) => r.status).join(','));
    // 50 a second per window; the joins above opened the first one before the flood began, and a loaded
    // machine may spread the flood over more: each window it overlaps admits 50 at most
    const windows = Math.ceil(elapsedMs / 1000) + 1;
    assert.ok(accepted.length <= 50 * windows, `${accepted.length} of 150 accepted in ${elapsedMs.toFixed(0)} ms`);
    assert.ok(limited.length >= 150 - 50 * windows, `${limited.length} of 150 were rate limited`);
    for (const r of limited) {
      assert.equal(r.json()['error'], 'rate_limited');
      assert.ok(Number(r.headers['retry-after']) >= 1);
    }

    // the others in the room send and receive as usual meanwhile
    for (let i = 0; i < 10; i += 1) assert.equal((await calm.client.send({ calm: i })).id.includes('.'), true);
    await reader.inbox.waitFor((e) => e.type === 'message' && (e.data as { calm?: number }).calm === 9, 5000, 'the calm messages');
    const fromFlooder = reader.inbox.messages().filter((m) => m.from === 'flooder');
    assert.equal(fromFlooder.length, accepted.length);
    assert.deepEqual(reader.inbox.messages().filter((m) => m.from === 'calm').map((m) => m.data), [...Array(10).keys()].map((i) => ({ calm: i })));
  });
});

describe('signaling: a revoked token after a restart', () => {
  it('stays refused once the platform restarts on the same data', async () => {
    let server = await serveInProcess({ roles: ['api', 'token', 'signaling'] });
    try {
      const customer = await createCustomer(server);
      const t = await issueSignalingToken(server.token, customer, { room_id: 'r-restart', user_id: 'u' });
      const kept = await issueSignalingToken(server.token, customer, { room_id: 'r-restart', user_id: 'v' });
      await revoke(server, customer, t);
      await server.stop();
      server = await serveInProcess({ roles: ['api', 'token', 'signaling'], dataDir: server.dataDir });
      const signalingUrl = server.urls['signaling']!;
      for (const [what, res] of await everyEndpoint(signalingUrl, t.signaling.token)) assertRefused(res, what);
      // a token that was not revoked still works on the restarted service (its own URL changed with port 0)
      const joined = await request(`${signalingUrl}/v1/signaling/join`, { body: { token: kept.signaling.token } });
      assert.equal(joined.status, 200, joined.text);
    } finally {
      await server.stop();
    }
  });
});

describe('signaling: a process of its own', () => {
  it('ends a revoked stream within a second when the revocation is made by another process', async () => {
    const signaling = await serveInProcess({ roles: ['signaling'] });
    const signalingUrl = signaling.urls['signaling']!;
    const api = await serveInProcess({ roles: ['api', 'token'], dataDir: signaling.dataDir, env: { RTC_SIGNALING_PUBLIC_URL: signalingUrl } });
    const clients: SignalingClient[] = [];
    try {
      const customer = await createCustomer(api);
      const alice = await joinRoom(api.token, customer, { room_id: 'r-split', user_id: 'alice' });
      const bob = await joinRoom(api.token, customer, { room_id: 'r-split', user_id: 'bob' });
      clients.push(alice.client, bob.client);
      assert.equal(bob.token.signaling.url, signalingUrl);
      const started = performance.now();
      await revoke(api, customer, bob.token);
      await bob.inbox.waitFor((e) => e.type === 'revoked', 1000, 'the revoked event');
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 1000, `the stream ended ${elapsed.toFixed(0)} ms after the revocation`);
      await alice.inbox.waitFor(isLeaveOf('bob'), 1000, 'bob leaving');
      for (const [what, res] of await everyEndpoint(signalingUrl, bob.token.signaling.token)) assertRefused(res, what);
    } finally {
      for (const c of clients) c.close();
      await api.stop();
      await signaling.stop();
    }
  });
});
