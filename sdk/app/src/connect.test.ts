import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from './connect.ts';
import type { MediaToken, WebSocketConstructor } from './types.ts';

const token: MediaToken = {
  media: { grant: 'a.b.c', key: Buffer.alloc(32, 1).toString('base64url'), sfu_host: '127.0.0.1', sfu_port: 9 },
  expires_at: 2_000_000_000,
};
// every case fails before a socket is opened: constructing one is a test failure
const NoSocket = function NoSocket() {
  throw new Error('no socket may be opened');
} as unknown as WebSocketConstructor;

describe('connect options', () => {
  const cases: [string, Parameters<typeof connect>[0]][] = [
    ['neither token nor getToken', { WebSocket: NoSocket }],
    ['a getToken that is not a function', { token, getToken: 'x' as unknown as () => Promise<MediaToken>, WebSocket: NoSocket }],
    ['a token without a 32-byte key', { token: { ...token, media: { ...token.media, key: 'AAAA' } }, WebSocket: NoSocket }],
    ['an http URL', { token, url: 'http://example.test', WebSocket: NoSocket }],
    ['a negative renewal lead', { token, renewBeforeSeconds: -1, WebSocket: NoSocket }],
    ['a zero keepalive', { token, keepaliveIntervalMs: 0, WebSocket: NoSocket }],
    ['reconnect attempts of zero', { token, reconnect: { maxAttempts: 0 }, WebSocket: NoSocket }],
  ];
  for (const [name, options] of cases) {
    it(`rejects ${name} with a TypeError`, async () => {
      await assert.rejects(connect(options), TypeError);
    });
  }

  it('needs a WebSocket class where the platform has none', async () => {
    const global = globalThis as { WebSocket?: unknown };
    const platformWebSocket = global.WebSocket;
    delete global.WebSocket;
    try {
      await assert.rejects(connect({ token }), /WebSocket/);
    } finally {
      if (platformWebSocket !== undefined) global.WebSocket = platformWebSocket;
    }
  });
});
