/**
 * Connection caps of `rtc serve` (docs/operations/configuration.md, "Connections and timeouts"),
 * through real sockets against a child process whose open-file limit is lowered: a flood of idle
 * connections to the media port must not take the file descriptors the token API of the same
 * process needs, and one address gets only its share of a listener. The HTTP timeouts are
 * server/src/http/http-timeouts.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { HEALTH, MEDIA_PLAIN, RawClient } from '../helpers/raw-client.ts';
import { TOKEN_BODY } from '../helpers/grant-checks.ts';

describe('connection caps: a flood of idle connections', () => {
  // One process with the token API and the media role that may open 256 files, its caps sized
  // within that (64 + 64 + 32 and the reserve): without the media cap the 400 connections below
  // would take every descriptor it has, and the token API would drop its connections unanswered.
  const MEDIA_CAP = 32;
  const PER_ADDRESS = 8;
  const FLOOD_ADDRESSES = 50;
  let server: RunningServer;
  let customer: Customer;
  const clients: RawClient[] = [];

  before(async () => {
    server = await startServer({
      roles: ['api', 'token', 'media'],
      maxOpenFiles: 256,
      env: {
        RTC_API_MAX_CONNECTIONS: '64',
        RTC_TOKEN_MAX_CONNECTIONS: '64',
        RTC_MEDIA_MAX_CONNECTIONS: String(MEDIA_CAP),
        RTC_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
        // admitted connections stay open for the length of these tests
        RTC_HEADERS_TIMEOUT_MS: '60000',
        RTC_KEEP_ALIVE_TIMEOUT_MS: '60000',
      },
    });
    customer = await createCustomer(server);
  });
  after(async () => {
    for (const c of clients) c.socket.destroy();
    await server.stop();
  });

  it('closes every connection over the media cap at once, and the token API of the same process still answers', async () => {
    const media = server.urls['media']!.replace(/^ws/, 'http');
    const flood: RawClient[] = [];
    // PER_ADDRESS from each address: only the listener cap applies
    for (let a = 1; a <= FLOOD_ADDRESSES; a++) {
      for (let i = 0; i < PER_ADDRESS; i++) flood.push(new RawClient(media, `127.0.1.${a}`));
    }
    clients.push(...flood);
    const total = flood.length;
    assert.ok(total > 256, 'more connections than the process may open files');

    // every connection over the cap is closed by the server, without a byte of HTTP
    await new Promise<void>((resolve) => {
      let closed = 0;
      for (const c of flood) {
        void c.closed.then(() => {
          if (++closed === total - MEDIA_CAP) resolve();
        });
      }
    });
    const refused = flood.filter((c) => c.closedAt !== undefined);
    assert.equal(refused.length, total - MEDIA_CAP);
    assert.ok(refused.every((c) => c.received === ''), 'a refused connection got an answer');

    // the token API of the same process answers while the media port is full
    const token = await request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: TOKEN_BODY });
    assert.equal(token.status, 200, token.text);
    assert.equal((await request(`${server.token}/health`)).status, 200);

    // the admitted connections are served, and none of them was closed
    const admitted = flood.filter((c) => c.closedAt === undefined);
    assert.equal(admitted.length, MEDIA_CAP);
    assert.deepEqual(new Set(await Promise.all(admitted.map((c) => c.ask(MEDIA_PLAIN)))), new Set([426]));
    assert.equal(flood.filter((c) => c.closedAt !== undefined).length, total - MEDIA_CAP);
    // one connection more is still refused while they are open
    const late = new RawClient(media, '127.0.2.1');
    clients.push(late);
    await late.closed;
    assert.equal(late.received, '');
    assert.match(server.output(), /"role":"media".*"msg":"connections refused at a connection cap"/);
    assert.doesNotMatch(server.output(), /exceed its open-file limit/, 'the caps of this test fit in its 256 files');
  });

  it('refuses the connection over the per-address cap while another address connects', async () => {
    const from = (address: string): RawClient => {
      const c = new RawClient(server.token, address);
      clients.push(c);
      return c;
    };
    // each one answered: the server has admitted and counted it before the next one opens
    for (let i = 0; i < PER_ADDRESS; i++) assert.equal(await from('127.0.0.2').ask(HEALTH), 200);
    const over = from('127.0.0.2');
    await over.closed;
    assert.equal(over.received, '', 'the server answered the connection over the cap');
    assert.equal(await from('127.0.0.3').ask(HEALTH), 200);
  });
});
