import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { connect } from './connect.ts';
import { MediaError } from './errors.ts';
import type { MediaToken } from './types.ts';

const tokenFor = (port: number): MediaToken => ({
  media: { grant: 'a.b.c', key: Buffer.alloc(32, 1).toString('base64url'), sfu_host: '127.0.0.1', sfu_port: port },
  expires_at: 2_000_000_000,
});

/** The rejection of `promise`, which must be a MediaError. */
async function failure(promise: Promise<unknown>): Promise<MediaError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof MediaError, String(err));
    return err;
  }
  assert.fail('the connection was expected to fail');
}

describe('connection errors name the URL, the close code and a likely cause', () => {
  // a plain TCP listener that answers a TLS hello with an HTTP error, as a media role without TLS does
  let plain: Server;
  let plainPort = 0;
  let refusedPort = 0;
  before(async () => {
    plain = createServer((socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    plainPort = (plain.address() as { port: number }).port;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    refusedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
  });
  after(async () => {
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  });

  it('wss:// (the default) to a platform without TLS: the URL, 1006, and secure: false as the fix', async () => {
    const error = await failure(connect({ token: tokenFor(plainPort), WebSocket, reconnect: false }));
    assert.equal(error.code, 'connection_failed');
    assert.equal(error.closeCode, 1006);
    assert.equal(error.message, `the media role at wss://127.0.0.1:${plainPort}/v1/media closed the connection (1006) before it opened: `
      + 'is it reachable, and does it serve TLS? pass secure: false for a platform without TLS');
  });

  it('ws:// to nothing: the URL and the question whether it is reachable', async () => {
    const error = await failure(connect({ token: tokenFor(refusedPort), WebSocket, reconnect: false, secure: false }));
    assert.equal(error.code, 'connection_failed');
    assert.equal(error.message, `the media role at ws://127.0.0.1:${refusedPort}/v1/media closed the connection (1006) before it opened: `
      + 'is it reachable, and does it serve TLS? a platform with TLS needs wss:// (leave secure out)');
  });
});
