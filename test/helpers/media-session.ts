/** Pieces the media tests share: tokens over HTTP, SDK sessions and their events, a TCP proxy. */
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import WebSocket from 'ws';
import type { TokenRequest, TokenResponse } from '@rtc/protocol';
import { connect, type ConnectOptions, type MediaSession, type MediaSessionEvents, type ReceivedFrame } from '../../sdk/app/src/index.ts';
import { createCustomer, type Customer } from './customer.ts';
import { request } from './http.ts';

/** A token request whose role may be any string, so that tests can send invalid ones. */
export type TokenBody = Omit<TokenRequest, 'role'> & { readonly role: string };

/** A customer of the platform that issues and revokes tokens over HTTP. */
export class TokenIssuer {
  readonly customer: Customer;
  private readonly api: () => string;

  private constructor(customer: Customer, api: () => string) {
    this.customer = customer;
    this.api = api;
  }

  /** `api` is read on every call, so a restarted server on another port is followed. */
  static async create(api: () => string): Promise<TokenIssuer> {
    return new TokenIssuer(await createCustomer({ api: api(), token: api(), request }), api);
  }

  async issue(body: TokenBody): Promise<TokenResponse> {
    const res = await request(`${this.api()}/v1/rtc/tokens`, { headers: { authorization: this.customer.auth }, body });
    if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
    return res.json<TokenResponse>();
  }

  async revoke(token: TokenResponse): Promise<void> {
    const res = await request(`${this.api()}/v1/rtc/tokens/revoke`, {
      headers: { authorization: this.customer.auth }, body: { revocation_handle: token.media.revocation_handle },
    });
    if (res.status !== 200) throw new Error(`revocation: ${res.status} ${res.text}`);
  }
}

/** The SDK's `connect` over `ws` (Node 20 has no WebSocket), without TLS. */
export function join(token: TokenResponse, options: Omit<ConnectOptions, 'token'> = {}): Promise<MediaSession> {
  return connect({ token, WebSocket, secure: false, ...options });
}

/** Resolves with the next event of that type (rejects after `timeoutMs`). */
export function nextEvent<K extends keyof MediaSessionEvents>(session: MediaSession, type: K, timeoutMs = 5000,
  match: (payload: MediaSessionEvents[K]) => boolean = () => true): Promise<MediaSessionEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${String(type)} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = session.on(type, (payload) => {
      if (!match(payload)) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}

/** Collects every frame a session receives, as `streamId:text`. */
export function collectFrames(session: MediaSession): { frames: ReceivedFrame[]; texts(): string[] } {
  const frames: ReceivedFrame[] = [];
  session.on('frame', (f) => frames.push(f));
  return { frames, texts: () => frames.map((f) => `${f.streamId}:${new TextDecoder().decode(f.payload)}`) };
}

/** Polls until `check` is true (rejects after `timeoutMs`). */
export async function until(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Waits until Date.now() is past `expiresAt` (seconds) by `marginMs`. */
export async function waitPastExpiry(expiresAt: number, marginMs = 50): Promise<void> {
  const wait = expiresAt * 1000 + marginMs - Date.now();
  if (wait > 0) await sleep(wait);
}

/**
 * A TCP proxy in front of the media server that records every byte in both directions and can
 * cut (reset) or freeze (stop forwarding, keep open) its connections, like a network would.
 */
export class TcpProxy {
  readonly server: Server;
  readonly upstream: { host: string; port: number };
  /** Every byte, per connection: client to server and server to client. */
  readonly captures: { up: Buffer[]; down: Buffer[] }[] = [];
  private readonly pairs = new Set<[Socket, Socket]>();
  connections = 0;

  private constructor(server: Server, upstream: { host: string; port: number }) {
    this.server = server;
    this.upstream = upstream;
  }

  static async start(target: string): Promise<TcpProxy> {
    const url = new URL(target);
    const server = createServer();
    const proxy = new TcpProxy(server, { host: url.hostname, port: Number(url.port) });
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    const address = this.server.address();
    if (typeof address !== 'object' || address === null) throw new Error('proxy not listening');
    return address.port;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  private accept(client: Socket): void {
    this.connections += 1;
    const upstream = tcpConnect(this.upstream.port, this.upstream.host);
    const capture = { up: [] as Buffer[], down: [] as Buffer[] };
    this.captures.push(capture);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      capture.up.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      capture.down.push(chunk);
      client.write(chunk);
    });
    const end = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  }

  /** Resets every open connection (a lost network: both ends see the socket die). */
  cut(): void {
    for (const [client, upstream] of this.pairs) {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    }
    this.pairs.clear();
  }

  /** Stops forwarding on the open connections, both directions, without closing anything (a silent network). */
  freeze(): void {
    for (const [client, upstream] of this.pairs) {
      client.pause();
      upstream.pause();
    }
  }

  /** Stops reading from the server on every connection (a subscriber that reads nothing). */
  stall(): void {
    for (const [, upstream] of this.pairs) upstream.pause();
  }

  resume(): void {
    for (const [client, upstream] of this.pairs) {
      client.resume();
      upstream.resume();
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The payloads of every WebSocket frame in a captured byte stream (after the HTTP upgrade),
 * unmasked, so what each side sent can be searched.
 */
export function websocketPayloads(stream: Buffer): Buffer[] {
  const headerEnd = stream.indexOf('\r\n\r\n');
  if (headerEnd < 0) return [];
  const payloads: Buffer[] = [];
  let offset = headerEnd + 4;
  while (offset + 2 <= stream.length) {
    const second = stream[offset + 1]!;
    let length = second & 0x7f;
    let pos = offset + 2;
    if (length === 126) {
      length = stream.readUInt16BE(pos);
      pos += 2;
    } else if (length === 127) {
      length = Number(stream.readBigUInt64BE(pos));
      pos += 8;
    }
    const masked = (second & 0x80) !== 0;
    const mask = masked ? stream.subarray(pos, pos + 4) : undefined;
    if (masked) pos += 4;
    if (pos + length > stream.length) break;
    const payload = Buffer.from(stream.subarray(pos, pos + length));
    if (mask) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ mask[i % 4]!;
    payloads.push(payload);
    offset = pos + length;
  }
  return payloads;
}
