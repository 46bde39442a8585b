import { MEDIA_PATH } from '@rtc/protocol';
import { mediaKeyOf } from './connection.ts';
import { MediaSession } from './session.ts';
import type { SessionSettings } from './session/types.ts';
import type { ConnectOptions, MediaToken, WebSocketConstructor } from './types.ts';

/**
 * Joins a room on the media server with a token from the customer's server: proves possession of
 * the media key without sending it, then renews before expiry and reconnects after a network
 * loss through `getToken`. Rejects with a `MediaError` when the join fails (`unauthorized`,
 * `expired`, `revoked`, ...), and with a `TypeError` for invalid options.
 *
 * @example
 * ```ts
 * import WebSocket from 'ws'; // browsers: leave the option out
 * import { connect } from '@rtc/app-sdk';
 *
 * const getToken = () => fetch('/my-backend/rtc-token').then((r) => r.json());
 * const session = await connect({ token: await getToken(), getToken, WebSocket });
 * session.on('frame', (frame) => render(frame));
 * const mic = await session.publish(1, 'audio');
 * await mic.send(packet);
 * ```
 */
export async function connect(options: ConnectOptions): Promise<MediaSession> {
  if (typeof options !== 'object' || options === null) throw new TypeError('connect needs an options object');
  const { getToken } = options;
  if (getToken !== undefined && typeof getToken !== 'function') throw new TypeError('getToken must be a function');
  if (options.token === undefined && getToken === undefined) throw new TypeError('connect needs a token or getToken');
  const WebSocketClass = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (typeof WebSocketClass !== 'function') throw new TypeError('no WebSocket class: pass the WebSocket option (in Node 20, the ws package)');
  const reconnect = options.reconnect === false ? undefined : {
    maxAttempts: positive(typeof options.reconnect === 'object' ? options.reconnect.maxAttempts : undefined, 10, 'reconnect.maxAttempts'),
    initialDelayMs: positive(typeof options.reconnect === 'object' ? options.reconnect.initialDelayMs : undefined, 250, 'reconnect.initialDelayMs'),
    maxDelayMs: positive(typeof options.reconnect === 'object' ? options.reconnect.maxDelayMs : undefined, 5000, 'reconnect.maxDelayMs'),
  };
  if (options.renewBeforeSeconds !== undefined && !(options.renewBeforeSeconds >= 0)) throw new TypeError('renewBeforeSeconds must be 0 or more');
  const { webrtc } = options;
  if (webrtc !== undefined && typeof webrtc !== 'boolean') {
    if (typeof webrtc !== 'object' || webrtc === null) throw new TypeError('webrtc must be a boolean or an object');
    if (webrtc.iceTransportPolicy !== undefined && webrtc.iceTransportPolicy !== 'all' && webrtc.iceTransportPolicy !== 'relay') {
      throw new TypeError('webrtc.iceTransportPolicy must be "all" or "relay"');
    }
    if (webrtc.iceServers !== undefined && !Array.isArray(webrtc.iceServers)) throw new TypeError('webrtc.iceServers must be an array');
  }
  if (options.adaptiveStream !== undefined && typeof options.adaptiveStream !== 'boolean') throw new TypeError('adaptiveStream must be a boolean');
  const fixedUrl = options.url === undefined ? undefined : mediaUrl(options.url);
  const secure = options.secure ?? true;
  const settings: SessionSettings = {
    getToken,
    urlFor: (token) => fixedUrl ?? urlOfToken(token, secure),
    WebSocket: WebSocketClass,
    renewBeforeSeconds: options.renewBeforeSeconds,
    reconnect,
    connectTimeoutMs: positive(options.connectTimeoutMs, 10_000, 'connectTimeoutMs'),
    keepaliveIntervalMs: positive(options.keepaliveIntervalMs, 15_000, 'keepaliveIntervalMs'),
    keepaliveTimeoutMs: positive(options.keepaliveTimeoutMs, 30_000, 'keepaliveTimeoutMs'),
    webrtc,
    adaptiveStream: options.adaptiveStream ?? false,
  };
  const token = options.token ?? (await getToken!());
  // checked before any socket opens: a bad token is a caller mistake
  mediaKeyOf(token).fill(0);
  const session = new MediaSession(settings, token);
  await session.start();
  return session;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0)) throw new TypeError(`${name} must be a positive number`);
  return value;
}

/** A ws:/wss: URL; the media path is added when the URL names none. */
function mediaUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('url must be an absolute ws: or wss: URL');
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new TypeError('url must be a ws: or wss: URL');
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = MEDIA_PATH;
  return parsed.toString();
}

function urlOfToken(token: MediaToken, secure: boolean): string {
  const { sfu_host: host, sfu_port: port } = token.media;
  if (typeof host !== 'string' || host === '' || !Number.isInteger(port)) throw new TypeError('the token names no media server');
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${secure ? 'wss' : 'ws'}://${bracketed}:${port}${MEDIA_PATH}`;
}
