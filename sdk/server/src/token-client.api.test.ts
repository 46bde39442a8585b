import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  TokenApiError, TokenClient, TokenNetworkError, type FetchLike, type TokenClientEvent,
} from './index.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { clientFor, recordingClient, rejectsWith } from '../../../test/helpers/token-client.ts';

/** The draws of the jitter source, in order, repeating the list when it runs out. */
function draws(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}

/** Every text form of a value a developer might print or ship to a log. */
function renderings(value: unknown): string[] {
  const forms = [
    JSON.stringify(value) ?? '',
    String(value),
    inspect(value),
    inspect(value, { showHidden: true, depth: Number.POSITIVE_INFINITY, getters: true }),
    inspect(value, { customInspect: false, showHidden: true, depth: Number.POSITIVE_INFINITY }),
  ];
  if (value instanceof Error) forms.push(value.message, value.stack ?? '', inspect(value.cause, { depth: Number.POSITIVE_INFINITY }));
  return forms;
}

function assertNoSecret(value: unknown, secret: string): void {
  const basic = Buffer.from(`:${secret}`).toString('base64').slice(4);
  for (const form of renderings(value)) {
    assert.ok(!form.includes(secret), `the secret appears in: ${form.slice(0, 200)}`);
    assert.ok(!form.includes(basic.slice(0, 24)), 'the Basic credentials appear');
    assert.ok(!/authorization/i.test(form), `an Authorization header appears in: ${form.slice(0, 200)}`);
  }
}

/** A TCP port on loopback with nothing listening. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('server SDK: TokenClient against the real token API', () => {
  let server: ServedPlatform;
  let customer: Customer;

  before(async () => {
    server = await serveInProcess();
    customer = await createCustomer(server);
  });
  after(async () => {
    await server.stop();
  });

  describe('issue and revoke', () => {
    for (const host of ['api', 'token'] as const) {
      it(`issues a token on the ${host} host and revokes it`, async () => {
        const tokens = clientFor(customer, server.urls[host]!);
        const t = await tokens.issue({ room_id: 'room-1', user_id: `user-${host}`, role: 'speaker', publish_streams: [1], subscribe_streams: [2] });
        assert.equal(t.project_id, customer.projectId);
        assert.equal(t.app_id, customer.appId);
        assert.equal(t.room_id, 'room-1');
        assert.equal(t.user_id, `user-${host}`);
        assert.equal(t.role, 'speaker');
        assert.deepEqual(t.publish_streams, [1]);
        assert.deepEqual(t.subscribe_streams, [2]);
        assert.equal(t.expires_at - t.issued_at, 600);
        assert.equal(t.media.encryption, 'aes-256-gcm');
        assert.match(t.media.revocation_handle, /^rvk_/);
        await tokens.revoke(t.media.revocation_handle);
        // idempotent: revoking again succeeds too
        await tokens.revoke(t.media.revocation_handle);
      });
    }

    it('accepts a base URL with a trailing slash', async () => {
      const t = await clientFor(customer, `${server.token}/`).issue({ room_id: 'room-2', user_id: 'u', role: 'audience', subscribe_room: true, ttl_seconds: 60 });
      assert.equal(t.expires_at - t.issued_at, 60);
      assert.equal(t.subscribe_room, true);
    });
  });

  describe('typed errors carry the documented error codes and are not retried', () => {
    it('400 invalid_request', async () => {
      const { client, sleeps } = recordingClient({ baseUrl: server.token, appId: customer.appId, appSecret: customer.appSecret });
      const err = await rejectsWith(client.issue({ room_id: 'r', user_id: 'u', role: 'speaker', subscribe_room: true, subscribe_streams: [1] }), TokenApiError);
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.status, 400);
      assert.equal(err.attempts, 1);
      assert.equal(err.operation, 'issue');
      assert.match(err.message, /subscribe_room/);
      assert.match(String(err.requestId), /^req_/);
      assert.deepEqual(sleeps, []);
    });

    it('400 invalid_request names an unknown field', async () => {
      const bogus = JSON.parse('{"room_id":"r","user_id":"u","role":"host","project_id":"prj_x"}') as Parameters<TokenClient['issue']>[0];
      const err = await rejectsWith(clientFor(customer, server.token).issue(bogus), TokenApiError);
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, /project_id/);
    });

    it('401 invalid_credentials for a wrong secret, without revealing it', async () => {
      const wrongSecret = `sk_${randomBytes(32).toString('base64url')}`;
      const { client, sleeps, events } = recordingClient({ baseUrl: server.token, appId: customer.appId, appSecret: wrongSecret });
      const err = await rejectsWith(client.issue({ room_id: 'r', user_id: 'u', role: 'host' }), TokenApiError);
      assert.equal(err.code, 'invalid_credentials');
      assert.equal(err.status, 401);
      assert.equal(err.attempts, 1);
      assert.deepEqual(sleeps, []);
      assertNoSecret(err, wrongSecret);
      assertNoSecret(events, wrongSecret);
      assertNoSecret(client, wrongSecret);
    });

    it('403 scope_denied', async () => {
      const subscriberOnly = await createCustomer(server, { scopes: ['subscriber'] });
      const err = await rejectsWith(clientFor(subscriberOnly, server.api).issue({ room_id: 'r', user_id: 'u', role: 'host', publish_streams: [1] }), TokenApiError);
      assert.equal(err.code, 'scope_denied');
      assert.equal(err.status, 403);
    });

    it('403 ip_not_allowed', async () => {
      const fenced = await createCustomer(server, { ip_allowlist: ['192.0.2.0/24'] });
      const err = await rejectsWith(clientFor(fenced, server.token).issue({ room_id: 'r', user_id: 'u', role: 'host' }), TokenApiError);
      assert.equal(err.code, 'ip_not_allowed');
      assert.equal(err.status, 403);
    });

    it('403 project_archived', async () => {
      const archived = await createCustomer(server);
      const res = await request(`${server.api}/v1/projects/${archived.projectId}/archive`, {
        method: 'POST', headers: { authorization: `Bearer ${archived.accessToken}` },
      });
      assert.equal(res.status, 200, res.text);
      const err = await rejectsWith(clientFor(archived, server.token).issue({ room_id: 'r', user_id: 'u', role: 'host' }), TokenApiError);
      assert.equal(err.code, 'project_archived');
      assert.equal(err.status, 403);
    });

    it('403 server_side_only when a browser Origin reaches the token API', async () => {
      const withOrigin: FetchLike = (url, init) => fetch(url, { ...init, headers: { ...init.headers, origin: 'https://app.example' } });
      const err = await rejectsWith(clientFor(customer, server.token, { fetch: withOrigin }).issue({ room_id: 'r', user_id: 'u', role: 'host' }), TokenApiError);
      assert.equal(err.code, 'server_side_only');
      assert.equal(err.status, 403);
    });

    it('404 unknown_handle for an altered handle and for a handle of another project', async () => {
      const tokens = clientFor(customer, server.token);
      const t = await tokens.issue({ room_id: 'r', user_id: 'u', role: 'host' });
      const h = t.media.revocation_handle;
      const altered = `${h.slice(0, -3)}${h.at(-3) === 'A' ? 'B' : 'A'}${h.slice(-2)}`;
      const alteredErr = await rejectsWith(tokens.revoke(altered), TokenApiError);
      assert.equal(alteredErr.code, 'unknown_handle');
      assert.equal(alteredErr.status, 404);
      assert.equal(alteredErr.operation, 'revoke');

      const other = await createCustomer(server);
      const foreignErr = await rejectsWith(clientFor(other, server.token).revoke(h), TokenApiError);
      assert.equal(foreignErr.code, 'unknown_handle');
      assert.equal(foreignErr.status, 404);
    });
  });

  describe('502: retried with exponential backoff and full jitter, then surfaced', () => {
    // this platform runs no signaling role: signaling_unavailable is its real 502
    const unavailableRequest = { room_id: 'r', user_id: 'u', role: 'host', signaling: true } as const;

    it('does not retry turn_unavailable: without TURN configured every attempt gets the same answer', async () => {
      const { client, sleeps } = recordingClient({
        baseUrl: server.token, appId: customer.appId, appSecret: customer.appSecret, retry: { maxAttempts: 4 },
      });
      const err = await rejectsWith(client.issue({ room_id: 'r', user_id: 'u', role: 'host', turn: true }), TokenApiError);
      assert.equal(err.code, 'turn_unavailable');
      assert.equal(err.attempts, 1);
      assert.deepEqual(sleeps, []);
    });

    it('makes maxAttempts attempts with growing, jittered waits, then throws signaling_unavailable', async () => {
      const { client, sleeps, events } = recordingClient({
        baseUrl: server.token, appId: customer.appId, appSecret: customer.appSecret,
        retry: { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 10_000 },
        random: draws(0.8, 0.6, 0.9),
      });
      const err = await rejectsWith(client.issue(unavailableRequest), TokenApiError);
      assert.equal(err.code, 'signaling_unavailable');
      assert.equal(err.status, 502);
      assert.equal(err.attempts, 4);
      const responses = events.filter((e) => e.type === 'response');
      assert.equal(responses.length, 4);
      assert.ok(responses.every((e) => e.status === 502 && e.code === 'signaling_unavailable'));
      // full jitter: draw * min(maxDelayMs, base * 2^(n-1)) -> 0.8*200, 0.6*400, 0.9*800
      assert.deepEqual(sleeps, [160, 240, 720]);
      assert.ok(sleeps[0]! < sleeps[1]! && sleeps[1]! < sleeps[2]!, 'the waits grow');
      assert.deepEqual(events.filter((e) => e.type === 'retry').map((e) => e.type === 'retry' && e.basis), ['backoff', 'backoff', 'backoff']);
    });

    it('keeps every wait below its doubling ceiling with the default random source', async () => {
      const { client, sleeps } = recordingClient({
        baseUrl: server.api, appId: customer.appId, appSecret: customer.appSecret,
        retry: { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 500 },
      });
      const err = await rejectsWith(client.issue(unavailableRequest), TokenApiError);
      assert.equal(err.attempts, 5);
      assert.equal(sleeps.length, 4);
      sleeps.forEach((ms, i) => assert.ok(ms >= 0 && ms < Math.min(500, 100 * 2 ** i), `wait ${i + 1}: ${ms}`));
    });

    it('stops when the next wait would end past maxElapsedMs', async () => {
      const { client, sleeps } = recordingClient({
        baseUrl: server.token, appId: customer.appId, appSecret: customer.appSecret,
        retry: { maxAttempts: 10, baseDelayMs: 1000, maxDelayMs: 60_000, maxElapsedMs: 2500 },
        random: draws(0.999),
      });
      const err = await rejectsWith(client.issue(unavailableRequest), TokenApiError);
      // waits of 999 and 1998 ms: the second would end at 2997 ms, past the 2500 ms budget
      assert.deepEqual(sleeps, [999]);
      assert.equal(err.attempts, 2);
    });

    it('does not retry when maxAttempts is 1', async () => {
      const { client, sleeps } = recordingClient({ baseUrl: server.token, appId: customer.appId, appSecret: customer.appSecret, retry: { maxAttempts: 1 } });
      const err = await rejectsWith(client.issue(unavailableRequest), TokenApiError);
      assert.equal(err.attempts, 1);
      assert.deepEqual(sleeps, []);
    });

    it('stops at once when the caller aborts during a wait', async () => {
      const controller = new AbortController();
      const events: TokenClientEvent[] = [];
      const client = clientFor(customer, server.token, {
        logger: (e) => events.push(e),
        sleep: async (_ms, signal) => {
          controller.abort(new Error('the caller gave up'));
          signal?.throwIfAborted();
        },
      });
      await assert.rejects(client.issue(unavailableRequest, { signal: controller.signal }), /the caller gave up/);
      assert.equal(events.filter((e) => e.type === 'request').length, 1);
      // an aborted signal is refused before any request
      await assert.rejects(client.issue(unavailableRequest, { signal: controller.signal }), /the caller gave up/);
      assert.equal(events.filter((e) => e.type === 'request').length, 1);
    });
  });

  describe('network failures', () => {
    it('retries a refused connection, then throws a TokenNetworkError without the secret', async () => {
      const port = await closedPort();
      const { client, sleeps, events } = recordingClient({
        baseUrl: `http://127.0.0.1:${port}`, appId: customer.appId, appSecret: customer.appSecret,
        retry: { maxAttempts: 3, baseDelayMs: 100 }, random: draws(0.5),
      });
      const err = await rejectsWith(client.issue({ room_id: 'r', user_id: 'u', role: 'host' }), TokenNetworkError);
      assert.equal(err.reason, 'network');
      assert.equal(err.attempts, 3);
      assert.match(err.message, /ECONNREFUSED/);
      assert.deepEqual(sleeps, [50, 100]);
      assert.equal(events.filter((e) => e.type === 'network_error').length, 3);
      assertNoSecret(err, customer.appSecret);
      assertNoSecret(events, customer.appSecret);
    });

    it('gives up on an attempt after timeoutMs and retries it', async () => {
      const sockets = new Set<Socket>();
      const silent: Server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = silent.address() as { port: number };
        const { client, sleeps } = recordingClient({
          baseUrl: `http://127.0.0.1:${port}`, appId: customer.appId, appSecret: customer.appSecret,
          timeoutMs: 200, retry: { maxAttempts: 2 },
        });
        const err = await rejectsWith(client.revoke('rvk_x'), TokenNetworkError);
        assert.equal(err.reason, 'timeout');
        assert.equal(err.operation, 'revoke');
        assert.equal(err.attempts, 2);
        assert.equal(sleeps.length, 1);
        assertNoSecret(err, customer.appSecret);
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });
  });

  describe('the App Secret stays private', () => {
    it('never appears in JSON.stringify, util.inspect, String or the property list of the client', () => {
      const client = clientFor(customer, server.token);
      assertNoSecret(client, customer.appSecret);
      assertNoSecret({ nested: { client } }, customer.appSecret);
      assert.deepEqual(JSON.parse(JSON.stringify(client)), { baseUrl: server.token, appId: customer.appId });
      assert.deepEqual(Object.keys(client), []);
      assert.match(inspect(client), /^TokenClient \{ baseUrl: .*, appId: "app_/);
    });

    it('never reaches the logger, and a throwing logger does not break a call', async () => {
      const events: TokenClientEvent[] = [];
      const client = clientFor(customer, server.token, {
        logger: (e) => {
          events.push(e);
          throw new Error('logger failure');
        },
      });
      const t = await client.issue({ room_id: 'r', user_id: 'u', role: 'host' });
      await client.revoke(t.media.revocation_handle);
      assert.deepEqual(events.map((e) => e.type), ['request', 'response', 'request', 'response']);
      assertNoSecret(events, customer.appSecret);
      // the media key of the answer is not logged either
      assert.ok(!JSON.stringify(events).includes(t.media.key));
    });

    it('is not echoed by the option checks, even when passed in the wrong place', () => {
      const secret = customer.appSecret;
      for (const options of [
        { baseUrl: server.token, appId: secret, appSecret: secret },
        { baseUrl: server.token, appId: customer.appId, appSecret: `${secret} ` },
        { baseUrl: `http://${customer.appId}:${secret}@127.0.0.1:1`, appId: customer.appId, appSecret: secret },
        { baseUrl: `https://example.test/?key=${secret}`, appId: customer.appId, appSecret: secret },
      ]) {
        assert.throws(() => new TokenClient(options), (err: unknown) => {
          assert.ok(err instanceof TypeError);
          assertNoSecret(err, secret);
          return true;
        });
      }
    });
  });

  describe('option checks', () => {
    it('refuses plain http to a host other than loopback unless allowed', () => {
      const options = { baseUrl: 'http://token.rtc.example.com', appId: customer.appId, appSecret: customer.appSecret };
      assert.throws(() => new TokenClient(options), /https/);
      assert.equal(new TokenClient({ ...options, allowInsecureHttp: true }).baseUrl, 'http://token.rtc.example.com');
      for (const loopback of ['http://localhost:8081', 'http://127.0.0.1:8081', 'http://[::1]:8081']) {
        assert.equal(new TokenClient({ ...options, baseUrl: loopback }).baseUrl, loopback);
      }
    });

    it('refuses malformed options with a TypeError', () => {
      const ok = { baseUrl: server.token, appId: customer.appId, appSecret: customer.appSecret };
      for (const bad of [
        { ...ok, baseUrl: 'token.rtc.example.com' },
        { ...ok, baseUrl: 'ftp://token.rtc.example.com' },
        { ...ok, appId: 'not-an-app-id' },
        { ...ok, appSecret: '' },
        { ...ok, timeoutMs: 0 },
        { ...ok, retry: { maxAttempts: 0 } },
      ]) {
        assert.throws(() => new TokenClient(bad), TypeError);
      }
    });
  });

  describe('refuses to run in a browser', () => {
    for (const name of ['window', 'document'] as const) {
      it(`throws a TypeError when globalThis.${name} exists`, () => {
        Object.defineProperty(globalThis, name, { value: {}, configurable: true, writable: true });
        try {
          assert.throws(() => clientFor(customer, server.token), (err: unknown) =>
            err instanceof TypeError && /server/.test(err.message) && !err.message.includes(customer.appSecret));
        } finally {
          Reflect.deleteProperty(globalThis, name);
        }
        assert.ok(clientFor(customer, server.token));
      });
    }
  });
});
