/**
 * A stand-in for the media role's sealed control channel (docs/protocol/media.md, sections 3 to
 * 6 and 10), for tests of what the app SDK sends and how it takes what a server sends: the
 * handshake, `joined` with the streams a test chooses, `publish`, `rtc_offer` answered by a test's
 * function, `ping`, and any control message a test pushes (such as the `stream_layer` of a server
 * that forwards simulcast). Written from the document with node:crypto (media-wire.ts), not from the
 * server: it checks the proof and the sequence of every message, and records every control message
 * the client sent. Reachable in-process (`WebSocket`, a class for the SDK's `WebSocket` option) or
 * over a real socket (`listen`, for a browser page).
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { KIND_CODE, NONCE_LABEL, PROTOCOL_VERSION, type MediaKind, type RtcTrack } from '@rtc/protocol';
import { WebSocketServer, type WebSocket } from 'ws';
import { decodeHeader, openWire, sealWire, wireProof, wireSessionKeys, type Control } from './media-wire.ts';

/** A stream of another participant, as `joined` lists it; the server makes its key. */
export interface FakeStream {
  readonly streamId: number;
  readonly kind: MediaKind;
  readonly userId?: string;
}

/** What a test's server answers to an `rtc_offer`. */
export type OfferAnswerer = (offer: { readonly sdp: string; readonly tracks: readonly RtcTrack[] }) =>
  Promise<{ readonly sdp: string; readonly refused?: readonly string[] }> | { readonly sdp: string; readonly refused?: readonly string[] };

export interface FakeMediaServerOptions {
  /** The media key of the tokens the SDK connects with (base64url). */
  readonly key: string;
  /** Streams of others in `joined` (subscribed, each with a key). */
  readonly streams?: readonly FakeStream[];
  readonly publishStreams?: readonly number[];
  /** Answers `rtc_offer`; without it every offer is answered by `answerOf` with the RID extension. */
  readonly answer?: OfferAnswerer;
}

/** One client's connection to the fake server. */
export class FakeMediaConnection {
  /** Control messages the client sent, in order, as JSON objects. */
  readonly received: Control[] = [];
  /** When each one arrived (performance.now()). */
  readonly receivedAt: number[] = [];
  joined = false;
  closed: { code: number; reason: string } | undefined;
  private readonly server: FakeMediaServer;
  private readonly out: (data: string | Buffer) => void;
  private readonly end: (code: number, reason: string) => void;
  private readonly serverNonce = randomBytes(32);
  private keys: { c2s: Buffer; s2c: Buffer } | undefined;
  private sentSeq = 0;
  private receivedSeq = 0;
  private waiters: { match: (c: Control) => boolean; resolve: (c: Control) => void }[] = [];

  constructor(server: FakeMediaServer, out: (data: string | Buffer) => void, end: (code: number, reason: string) => void) {
    this.server = server;
    this.out = out;
    this.end = end;
  }

  /** The socket opened: the challenge goes first. */
  opened(): void {
    this.out(JSON.stringify({ type: 'challenge', version: PROTOCOL_VERSION, nonce: this.serverNonce.toString('base64url') }));
  }

  /** A message from the client. */
  receive(data: string | Buffer): void {
    if (this.closed) return;
    if (typeof data === 'string') return this.onJoin(data);
    const header = decodeHeader(data);
    if (!this.keys || header.kind !== KIND_CODE.control || header.seq !== this.receivedSeq + 1) return this.close(4004, 'protocol_error');
    const plain = openWire(this.keys.c2s, NONCE_LABEL.clientControl, data);
    if (!plain) return this.close(4004, 'protocol_error');
    this.receivedSeq = header.seq;
    const control = JSON.parse(plain.toString('utf8')) as Control;
    this.received.push(control);
    this.receivedAt.push(performance.now());
    void this.handle(control);
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) {
      if (w.match(control)) w.resolve(control);
      else this.waiters.push(w);
    }
  }

  /** The first control message from the client that matches, past or future. */
  next(match: (c: Control) => boolean, timeoutMs = 5000): Promise<Control> {
    const seen = this.received.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching control message within ${timeoutMs} ms: ${JSON.stringify(this.received)}`)), timeoutMs);
      this.waiters.push({ match, resolve: (c) => {
        clearTimeout(timer);
        resolve(c);
      } });
    });
  }

  /** Sends a control message, sealed under the server-to-client key. */
  send(control: Record<string, unknown>): void {
    if (!this.keys || this.closed) throw new Error('not joined');
    this.sentSeq += 1;
    this.out(sealWire(this.keys.s2c, NONCE_LABEL.serverControl, { kind: KIND_CODE.control, epoch: 0, streamId: 0, seq: this.sentSeq },
      Buffer.from(JSON.stringify(control))));
  }

  /** Closes the socket (4xxx a protocol code, 1006 cannot be sent: use `drop`). */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = { code, reason };
    this.end(code, reason);
  }

  private onJoin(text: string): void {
    const join = JSON.parse(text) as { type: string; grant: string; nonce: string; proof: string };
    const k = Buffer.from(this.server.options.key, 'base64url');
    const clientNonce = Buffer.from(join.nonce, 'base64url');
    if (join.type !== 'join' || !wireProof(k, join.grant, this.serverNonce, clientNonce).equals(Buffer.from(join.proof, 'base64url'))) {
      return this.close(4001, 'unauthorized');
    }
    this.keys = wireSessionKeys(k, join.grant, this.serverNonce, clientNonce);
    this.joined = true;
    const streams = (this.server.options.streams ?? []).map((s) => ({
      stream_id: s.streamId, kind: s.kind, participant_id: `p_${s.userId ?? 'other'}`, user_id: s.userId ?? 'other',
      subscribed: true, epoch: 1, key: this.server.streamKey(s.streamId),
    }));
    const participants = [...new Set(streams.map((s) => s.user_id))].map((u) => ({ participant_id: `p_${u}`, user_id: u, role: 'speaker' }));
    this.send({
      type: 'joined', participant_id: 'p_me', room_id: 'room', project_id: 'prj_test', user_id: 'me', server_time_ms: Date.now(),
      renew_nonce: randomBytes(32).toString('base64url'), participants, streams,
      limits: { max_message_bytes: 65536, replay_window: 1024, handshake_timeout_ms: 5000, idle_timeout_ms: 45000 },
      role: 'speaker', expires_at: Math.floor(Date.now() / 1000) + 3600,
      publish_streams: [...(this.server.options.publishStreams ?? [])], subscribe_streams: [], subscribe_room: true,
    });
  }

  private async handle(c: Control): Promise<void> {
    const id = c['id'];
    switch (c.type) {
      case 'publish':
        this.send({ type: 'published', id, stream_id: c['stream_id'], kind: c['kind'], epoch: 1, key: this.server.streamKey(c['stream_id'] as number) });
        return;
      case 'unpublish':
        this.send({ type: 'unpublished', id, stream_id: c['stream_id'] });
        return;
      case 'ping':
        this.send({ type: 'pong', id, server_time_ms: Date.now() });
        return;
      case 'rtc_offer': {
        const answerer: OfferAnswerer = this.server.options.answer ?? ((o) => ({ sdp: answerOf(o.sdp, { rid: true }) }));
        const answer = await answerer({ sdp: c['sdp'] as string, tracks: c['tracks'] as RtcTrack[] });
        if (!this.closed) this.send({ type: 'rtc_answer', id, sdp: answer.sdp, refused: [...(answer.refused ?? [])] });
        return;
      }
      case 'leave':
        this.close(1000, 'normal');
        return;
      default:
        return;
    }
  }
}

/** The fake media server: its stream keys, and every connection made to it. */
export class FakeMediaServer {
  readonly options: FakeMediaServerOptions;
  readonly connections: FakeMediaConnection[] = [];
  private readonly keys = new Map<number, string>();
  private wss: WebSocketServer | undefined;
  private readonly sockets = new Set<FakeSocket>();

  constructor(options: FakeMediaServerOptions) {
    this.options = options;
  }

  /** The connection made last. */
  get current(): FakeMediaConnection {
    const c = this.connections.at(-1);
    if (!c) throw new Error('no connection yet');
    return c;
  }

  /** The stream key of a stream id (one epoch), base64url. */
  streamKey(streamId: number): string {
    let key = this.keys.get(streamId);
    if (!key) {
      key = randomBytes(32).toString('base64url');
      this.keys.set(streamId, key);
    }
    return key;
  }

  /** Waits for the n-th connection (1-based) to have joined. */
  async joinedConnection(n: number, timeoutMs = 5000): Promise<FakeMediaConnection> {
    const deadline = Date.now() + timeoutMs;
    while (!(this.connections[n - 1]?.joined)) {
      if (Date.now() > deadline) throw new Error(`connection ${n} did not join`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return this.connections[n - 1]!;
  }

  /**
   * A WebSocket class for the SDK's `WebSocket` option: each instance is a connection to this
   * server, in-process. `drop()` on the server's side ends the current one as a lost network would (1006).
   */
  get WebSocket(): new (url: string) => FakeSocket {
    const register = (socket: FakeSocket): void => void this.sockets.add(socket);
    const server = (): FakeMediaServer => this;
    return class extends FakeSocket {
      constructor(url: string) {
        super(server(), url);
        register(this);
      }
    };
  }

  /** The current in-process connection's socket closes as after a network loss (1006, no close frame). */
  drop(): void {
    for (const socket of this.sockets) if (socket.connection === this.current) socket.lost();
  }

  /** Serves the same protocol over a real WebSocket on loopback, for browser pages; resolves with its ws: URL. */
  async listen(): Promise<string> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    this.wss = wss;
    wss.on('connection', (ws: WebSocket) => {
      const connection = new FakeMediaConnection(this, (data) => ws.send(data), (code, reason) => ws.close(code, reason));
      this.connections.push(connection);
      ws.on('message', (data, isBinary) => connection.receive(isBinary ? Buffer.from(data as Buffer) : String(data)));
      ws.on('close', (code, reason) => {
        connection.closed ??= { code, reason: reason.toString() };
      });
      connection.opened();
    });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/media`;
  }

  async close(): Promise<void> {
    for (const client of this.wss?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (this.wss ? this.wss.close(() => resolve()) : resolve()));
  }
}

type Listener = (event: { type: string; data?: unknown; code?: number; reason?: string }) => void;

/** The client's end of an in-process connection (the WHATWG WebSocket surface the SDK uses). */
export class FakeSocket {
  binaryType = 'blob';
  readyState = 0;
  readonly bufferedAmount = 0;
  readonly url: string;
  readonly connection: FakeMediaConnection;
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(server: FakeMediaServer, url: string) {
    this.url = url;
    this.connection = new FakeMediaConnection(server, (data) => this.deliver(data), (code, reason) => this.closeWith(code, reason));
    server.connections.push(this.connection);
    setTimeout(() => {
      if (this.readyState !== 0) return;
      this.readyState = 1;
      this.emit({ type: 'open' });
      this.connection.opened();
    }, 0);
  }

  addEventListener(type: string, listener: Listener): void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener);
  }

  send(data: Uint8Array | string): void {
    if (this.readyState !== 1) return;
    const copy = typeof data === 'string' ? data : Buffer.from(data);
    setTimeout(() => this.connection.receive(copy), 0);
  }

  close(code = 1000, reason = ''): void {
    if (this.readyState >= 2) return;
    this.connection.closed ??= { code, reason };
    this.closeWith(code, reason);
  }

  /** The network is gone: a close without a close frame. */
  lost(): void {
    this.connection.closed ??= { code: 1006, reason: '' };
    this.closeWith(1006, '');
  }

  private deliver(data: string | Buffer): void {
    if (this.readyState !== 1) return;
    const payload = typeof data === 'string' ? data : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    setTimeout(() => this.emit({ type: 'message', data: payload }), 0);
  }

  private closeWith(code: number, reason: string): void {
    if (this.readyState >= 2) return;
    this.readyState = 3;
    setTimeout(() => this.emit({ type: 'close', code, reason }), 0);
  }

  private emit(event: { type: string; data?: unknown; code?: number; reason?: string }): void {
    for (const l of this.listeners.get(event.type) ?? []) l(event);
  }
}

/**
 * An answer to an offer, as a server that negotiates Opus and VP8 writes it: every m-line accepted
 * (BUNDLE), directions mirrored, and with `rid` the RID and MID header extensions on the video
 * m-lines that offer the RID extension, with simulcast taken (`a=simulcast:recv` with the offer's
 * rids, in the offer's order).
 */
export function answerOf(offer: string, options: { readonly rid: boolean }): string {
  const sections = offer.split(/\r?\n(?=m=)/);
  const mids: string[] = [];
  const media = sections.slice(1).map((section) => {
    const lines = section.split(/\r?\n/).filter((l) => l !== '');
    const kind = /^m=(\w+)/.exec(lines[0] ?? '')?.[1] ?? 'video';
    const mid = lines.find((l) => l.startsWith('a=mid:'))?.slice(6) ?? String(mids.length);
    mids.push(mid);
    const direction = lines.find((l) => /^a=(sendonly|recvonly|inactive|sendrecv)$/.test(l))?.slice(2);
    const mirrored = direction === 'sendonly' ? 'recvonly' : direction === 'recvonly' ? 'sendonly' : direction ?? 'inactive';
    const out = [
      kind === 'audio' ? 'm=audio 9 UDP/TLS/RTP/SAVPF 111' : 'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'c=IN IP4 0.0.0.0', `a=mid:${mid}`, `a=${mirrored}`,
      kind === 'audio' ? 'a=rtpmap:111 opus/48000/2' : 'a=rtpmap:96 VP8/90000',
    ];
    // an answer takes only the header extensions offered (RFC 8285, 6)
    if (kind === 'video' && options.rid && lines.some((l) => l.endsWith(' urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id'))) {
      out.push('a=extmap:9 urn:ietf:params:rtp-hdrext:sdes:mid', 'a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id');
      const rids = lines.filter((l) => l.startsWith('a=rid:')).map((l) => l.slice(6).split(' ')[0]!);
      if (rids.length > 0) out.push(...rids.map((r) => `a=rid:${r} recv`), `a=simulcast:recv ${rids.join(';')}`);
    }
    return out.join('\r\n');
  });
  const head = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 't=0 0', `a=group:BUNDLE ${mids.join(' ')}`,
    'a=fingerprint:sha-256 00:11', 'a=setup:active', 'a=ice-ufrag:fake', 'a=ice-pwd:fakefakefakefakefakefake'];
  return [...head, ...media].join('\r\n') + '\r\n';
}
