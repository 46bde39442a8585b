/**
 * Connection caps and HTTP timeouts of `rtc serve` (docs/operations/configuration.md, "Connections
 * and timeouts"), through real sockets against a child process: a flood of idle connections to
 * the media port must not take the file descriptors the token API of the same process needs, one
 * address gets only its share of a listener, and a client that sends slowly is disconnected.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { MEDIA_PATH } from '@rtc/protocol';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { issueSignalingToken } from '../helpers/signaling.ts';
import { TOKEN_BODY } from './serve-helpers.ts';

/** A raw TCP client: what it received, and whether the server closed it. */
class RawClient {
  readonly socket: Socket;
  readonly openedAt = Date.now();
  received = '';
  closedAt: number | undefined;
  /** Resolves when the connection is closed, with the time it had been open. */
  readonly closed: Promise<number>;
  private readonly waiters = new Set<() => void>();

  constructor(url: string, localAddress?: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect({ host: hostname, port: Number(port), ...(localAddress !== undefined && { localAddress }) });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.received += chunk;
      this.notify();
    });
    // a connection the server closes at accept can be reset rather than ended
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.once('close', () => {
      this.closedAt = Date.now();
      this.notify();
      resolve(this.closedAt - this.openedAt);
    }));
  }

  /** Resolves when what was received matches `pattern`; rejects if the connection closes first. */
  waitFor(pattern: RegExp, what: string): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const match = pattern.exec(this.received);
        if (match) {
          this.waiters.delete(check);
          resolve(match);
        } else if (this.closedAt !== undefined) {
          this.waiters.delete(check);
          reject(new Error(`closed before ${what}; received ${JSON.stringify(this.received)}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Sends a request and resolves with the status of the response it starts. */
  async ask(raw: string): Promise<number> {
    const from = this.received.length;
    this.socket.write(raw);
    const match = await this.waitFor(new RegExp(`^[\\s\\S]{${from}}[\\s\\S]*?HTTP/1\\.1 (\\d{3}) `), 'a response');
    return Number(match[1]);
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

const HEALTH = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
const MEDIA_PLAIN = `GET ${MEDIA_PATH} HTTP/1.1\r\nHost: x\r\n\r\n`;

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

describe('HTTP timeouts', () => {
  const HEADERS_MS = 300;
  const REQUEST_MS = 500;
  const KEEP_ALIVE_MS = 300;
  let server: RunningServer;
  let customer: Customer;

  before(async () => {
    server = await startServer({
      roles: ['api', 'token', 'signaling', 'media'],
      env: {
        RTC_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
        RTC_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
        RTC_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
      },
    });
    customer = await createCustomer(server);
  });
  after(async () => {
    await server.stop();
  });

  /** The body of a 408 answer in the platform's error format, from what a closed connection received. */
  const timeoutAnswer = (received: string): unknown => {
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.match(received, /\r\nconnection: close\r\n/i);
    return JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
  };

  it('disconnects a client that sends part of a request line and nothing more, after the headers timeout', async () => {
    const slow = new RawClient(server.token);
    slow.socket.write('GET /heal');
    const openMs = await slow.closed;
    assert.ok(openMs >= HEADERS_MS && openMs < 5_000, `closed after ${openMs} ms`);
    assert.deepEqual(timeoutAnswer(slow.received), { error: 'invalid_request', message: 'the request did not arrive in time' });
  });

  it('disconnects a client whose body does not arrive, after the request timeout', async () => {
    const slow = new RawClient(server.token);
    slow.socket.write('POST /v1/rtc/tokens HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"room');
    const openMs = await slow.closed;
    assert.ok(openMs >= REQUEST_MS && openMs < 5_000, `closed after ${openMs} ms`);
    assert.equal((timeoutAnswer(slow.received) as { error: string }).error, 'invalid_request');
  });

  // Node holds the socket a second past the keep-alive timeout it announces, so the client closes first
  it('closes a keep-alive connection that stays idle after its response', async () => {
    const idle = new RawClient(server.token);
    assert.equal(await idle.ask(HEALTH), 200);
    const answeredAt = Date.now();
    await idle.closed;
    const idleMs = idle.closedAt! - answeredAt;
    assert.ok(idleMs >= KEEP_ALIVE_MS - 20 && idleMs < 5_000, `closed after ${idleMs} ms idle`);
  });

  it('disconnects a media client that never sends its upgrade request; an upgraded socket is not held to it', async () => {
    const media = server.urls['media']!;
    const ws = new WebSocket(`${media}${MEDIA_PATH}`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    let wsClosed = false;
    ws.once('close', () => { wsClosed = true; });
    // opened after the WebSocket, so when the server closes it the WebSocket is older than the timeout
    const idle = new RawClient(media.replace(/^ws/, 'http'));
    const openMs = await idle.closed;
    // the media handshake itself allows 5 s: this is the headers timeout, earlier
    assert.ok(openMs >= HEADERS_MS && openMs < 4_000, `closed after ${openMs} ms`);
    // a round trip on the WebSocket after that: it is still open
    ws.ping();
    await new Promise((resolve) => ws.once('pong', resolve));
    assert.equal(wsClosed, false);
    ws.terminate();
  });

  it('lets a signaling event stream live past the request timeout', async () => {
    const signaling = server.urls['signaling']!;
    const reader = await issueSignalingToken(server.token, customer, { room_id: 'timeouts', user_id: 'reader' });
    const sender = await issueSignalingToken(server.token, customer, { room_id: 'timeouts', user_id: 'sender' });
    for (const t of [reader, sender]) {
      assert.equal((await request(`${signaling}/v1/signaling/join`, { body: { token: t.signaling.token } })).status, 200);
    }
    const stream = await new Promise<IncomingMessage>((resolve, reject) => {
      httpRequest(`${signaling}/v1/signaling/events`, { agent: false, headers: { authorization: `Bearer ${reader.signaling.token}` } }, resolve)
        .on('error', reject).end();
    });
    assert.equal(stream.statusCode, 200);
    stream.setEncoding('utf8');
    let events = '';
    let streamClosed = false;
    const arrived = new Promise<void>((resolve) => stream.on('data', (chunk: string) => {
      events += chunk;
      if (events.includes('"data":"after the timeout"')) resolve();
    }));
    stream.once('close', () => { streamClosed = true; });

    // a request whose body never ends, sent after the stream opened: closed at the request timeout
    const slow = new RawClient(signaling);
    slow.socket.write('POST /v1/signaling/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
    const openMs = await slow.closed;
    assert.ok(openMs >= REQUEST_MS, `closed after ${openMs} ms`);

    const sent = await request(`${signaling}/v1/signaling/messages`, { body: { token: sender.signaling.token, data: 'after the timeout' } });
    assert.equal(sent.status, 200, sent.text);
    await arrived;
    assert.equal(streamClosed, false);
    stream.destroy();
  });
});
