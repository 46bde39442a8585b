/**
 * What only a real socket shows: the HTTP parser's refusals and the address of the peer. The apps
 * run in this process and listen on loopback; every other HTTP test goes through inject().
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../helpers/assert.ts';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { httpResult, request, type HttpResult } from '../helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../helpers/inproc.ts';

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;
const PROXY = '127.0.0.2';

/** Writes `raw` on a new connection and reads the answer until the connection closes. */
function sendRaw(url: string, raw: string): Promise<HttpResult> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.end(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve(httpResult(Number(statusLine.split(' ')[1]), headers, body));
    });
  });
}

describe('HTTP over real sockets', () => {
  let server: InProcessPlatform;
  let api: string;
  let fenced: Customer;

  before(async () => {
    server = await startInProcess({ env: { RTC_TRUST_PROXY: `${PROXY}/32` } });
    api = await server.listen('api');
    fenced = await createCustomer(server, { ip_allowlist: ['198.51.100.0/24'] });
  });
  after(async () => {
    await server.close();
  });

  it('answers a request that is not valid HTTP with 400 in the error format and closes the connection', async () => {
    const response = await sendRaw(api, 'GET / HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n');
    assertError(response, 400, 'invalid_request', /not valid HTTP/);
    assert.equal(response.headers['connection'], 'close');
    assert.match(String(response.headers['x-request-id']), /^req_/);
  });

  it('answers headers over 16 KB with 431 in the error format', async () => {
    const response = await sendRaw(api, `GET /health HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assertError(response, 431, 'invalid_request', /headers are too large/);
  });

  it('believes X-Forwarded-For only from the socket address of a trusted proxy', async () => {
    const issue = (localAddress: string): Promise<HttpResult> => request(`${api}/v1/rtc/tokens`, {
      headers: { authorization: fenced.auth, 'x-forwarded-for': '198.51.100.7' }, body: VALID, localAddress,
    });
    assert.equal((await issue(PROXY)).status, 200);
    assertError(await issue('127.0.0.3'), 403, 'ip_not_allowed');
  });
});
