/**
 * HTTP timeouts of the platform's listeners (docs/operations/configuration.md, "Connections and
 * timeouts"), through real sockets against the roles served in this process: a client that sends
 * slowly is disconnected, with a 408 in the error format, and long-lived streams are not.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { MEDIA_PATH } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { request } from '../../../test/helpers/http.ts';
import { HEALTH, RawClient } from '../../../test/helpers/raw-client.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { issueSignalingToken } from '../../../test/helpers/signaling.ts';

describe('HTTP timeouts', () => {
  const HEADERS_MS = 300;
  const REQUEST_MS = 500;
  const KEEP_ALIVE_MS = 300;
  let server: ServedPlatform;
  let customer: Customer;

  before(async () => {
    server = await serveInProcess({
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
