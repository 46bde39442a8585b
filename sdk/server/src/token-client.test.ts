import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TokenApiError, TokenResponseError } from './errors.ts';
import { TokenClient } from './token-client.ts';

// What sits between a customer server and the platform can answer off the contract: a reverse
// proxy's HTML error page, a redirect. The platform itself is exercised in token-client.api.test.ts.
interface Seen {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

const APP_ID = 'app_AAAAAAAAAAAAAAAAAAAAAA';
const APP_SECRET = 'sk_this-is-a-test-secret-of-the-proxy-fixture';

describe('TokenClient facing answers off the token API contract', () => {
  let proxy: Server;
  let base: string;
  const seen: Seen[] = [];

  before(async () => {
    proxy = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      if (req.url?.startsWith('/html502/')) {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body></html>');
      } else if (req.url?.startsWith('/redirect/')) {
        res.writeHead(307, { location: `http://127.0.0.2:${(proxy.address() as AddressInfo).port}/elsewhere` }).end();
      } else if (req.url?.startsWith('/unknown-code/')) {
        res.writeHead(418, { 'content-type': 'application/json' }).end('{"error":"teapot","message":"short and stout"}');
      } else if (req.url?.startsWith('/not-a-token/')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
      } else if (req.url?.startsWith('/busy/')) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' })
          .end('{"error":"unavailable","message":"store unavailable"}');
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  after(async () => {
    proxy.closeAllConnections();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
  });

  function client(prefix: string, sleeps: number[]): TokenClient {
    return new TokenClient({
      baseUrl: `${base}/${prefix}`, appId: APP_ID, appSecret: APP_SECRET,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      retry: { maxAttempts: 3, baseDelayMs: 100 },
    });
  }

  it('retries a proxy HTML 502 with backoff, then throws a TokenResponseError without the body', async () => {
    const sleeps: number[] = [];
    const err = await client('html502', sleeps).issue({ room_id: 'r', user_id: 'u', role: 'host' }).then(
      () => assert.fail('expected a failure'), (e: unknown) => e);
    assert.ok(err instanceof TokenResponseError);
    assert.equal(err.status, 502);
    assert.equal(err.attempts, 3);
    assert.deepEqual(sleeps, [50, 100]);
    assert.ok(!err.message.includes('Bad Gateway'));
  });

  it('does not follow a redirect, so the credentials never reach another host', async () => {
    const before = seen.length;
    const err = await client('redirect', []).revoke('rvk_x').then(() => assert.fail('expected a failure'), (e: unknown) => e);
    assert.ok(err instanceof TokenResponseError);
    assert.equal(err.status, 307);
    assert.equal(err.attempts, 1);
    assert.deepEqual(seen.slice(before).map((s) => s.url), ['/redirect/v1/rtc/tokens/revoke']);
  });

  it('treats an error code outside the catalogue as off the contract', async () => {
    const err = await client('unknown-code', []).issue({ room_id: 'r', user_id: 'u', role: 'host' }).then(
      () => assert.fail('expected a failure'), (e: unknown) => e);
    assert.ok(err instanceof TokenResponseError);
    assert.equal(err.status, 418);
  });

  it('refuses a success body that is not a token response', async () => {
    const err = await client('not-a-token', []).issue({ room_id: 'r', user_id: 'u', role: 'host' }).then(
      () => assert.fail('expected a failure'), (e: unknown) => e);
    assert.ok(err instanceof TokenResponseError);
    assert.equal(err.status, 200);
    assert.equal(err.attempts, 1);
  });

  it('honours Retry-After on a 503', async () => {
    const sleeps: number[] = [];
    const err = await client('busy', sleeps).issue({ room_id: 'r', user_id: 'u', role: 'host' }).then(
      () => assert.fail('expected a failure'), (e: unknown) => e);
    assert.ok(err instanceof TokenApiError);
    assert.equal(err.code, 'unavailable');
    assert.equal(err.retryAfterSec, 2);
    assert.deepEqual(sleeps, [2000, 2000]);
  });

  it('sends HTTP Basic, JSON and no browser Origin', async () => {
    const before = seen.length;
    await client('busy', []).issue({ room_id: 'r', user_id: 'u', role: 'host' }, {}).catch(() => undefined);
    const first = seen[before];
    assert.ok(first);
    assert.equal(first.headers.authorization, `Basic ${Buffer.from(`${APP_ID}:${APP_SECRET}`).toString('base64')}`);
    assert.equal(first.headers['content-type'], 'application/json');
    assert.equal(first.headers.origin, undefined);
    assert.match(String(first.headers['user-agent']), /^rtc-server-sdk\//);
  });
});
