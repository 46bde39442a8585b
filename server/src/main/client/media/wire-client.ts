/**
 * A second, independent client of the media protocol (docs/protocol/media.md), written from the
 * document with node:crypto and `ws` (only names and labels come from @rtc/protocol): load
 * generation for the benchmarks, and a raw client for tests that must send what a well-behaved
 * SDK never would.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { KEY_LABEL, KIND_CODE, MEDIA_PATH, NONCE_LABEL, type MediaKind } from '@rtc/protocol';
import WebSocket from 'ws';

export const KINDS = KIND_CODE;
export type WireKind = MediaKind;
const LABEL = { c2s: NONCE_LABEL.clientControl, s2c: NONCE_LABEL.serverControl, stream: NONCE_LABEL.streamFrame } as const;

export interface WireHeader {
  readonly kind: number;
  readonly epoch: number;
  readonly streamId: number;
  readonly seq: number;
}

export function encodeHeader(h: WireHeader): Buffer {
  const b = Buffer.alloc(16);
  b[0] = 1;
  b[1] = h.kind;
  b.writeUInt16BE(h.epoch, 2);
  b.writeUInt32BE(h.streamId, 4);
  b.writeUInt32BE(Math.floor(h.seq / 2 ** 32), 8);
  b.writeUInt32BE(h.seq % 2 ** 32, 12);
  return b;
}

export function decodeHeader(m: Buffer): WireHeader {
  return { kind: m[1]!, epoch: m.readUInt16BE(2), streamId: m.readUInt32BE(4), seq: m.readUInt32BE(8) * 2 ** 32 + m.readUInt32BE(12) };
}

function nonce(label: number, header: Buffer): Buffer {
  const n = Buffer.alloc(12);
  n.writeUInt32BE(label, 0);
  header.copy(n, 4, 8, 16);
  return n;
}

export function sealWire(key: Buffer, label: number, h: WireHeader, plaintext: Buffer): Buffer {
  const header = encodeHeader(h);
  const c = createCipheriv('aes-256-gcm', key, nonce(label, header));
  c.setAAD(header);
  const body = c.update(plaintext);
  c.final();
  return Buffer.concat([header, body, c.getAuthTag()]);
}

export function openWire(key: Buffer, label: number, m: Buffer): Buffer | undefined {
  const d = createDecipheriv('aes-256-gcm', key, nonce(label, m.subarray(0, 16)));
  d.setAAD(m.subarray(0, 16));
  d.setAuthTag(m.subarray(m.length - 16));
  const out = d.update(m.subarray(16, m.length - 16));
  try {
    d.final();
    return out;
  } catch {
    return undefined;
  }
}

export function wireProof(k: Buffer, grant: string, serverNonce: Buffer, clientNonce: Buffer): Buffer {
  const digest = createHash('sha256').update(grant).digest();
  return createHmac('sha256', k).update(KEY_LABEL.proof).update(digest).update(serverNonce).update(clientNonce).digest();
}

export function wireSessionKeys(k: Buffer, grant: string, serverNonce: Buffer, clientNonce: Buffer): { c2s: Buffer; s2c: Buffer } {
  const digest = createHash('sha256').update(grant).digest();
  const salt = Buffer.concat([serverNonce, clientNonce]);
  const expand = (label: string): Buffer => Buffer.from(hkdfSync('sha256', k, salt, Buffer.concat([Buffer.from(label), digest]), 32));
  return { c2s: expand(KEY_LABEL.clientToServer), s2c: expand(KEY_LABEL.serverToClient) };
}

export interface WireCredentials {
  readonly grant: string;
  /** The media key, base64url, as the token API returns it. */
  readonly key: string;
}

export interface WireFrame {
  readonly header: WireHeader;
  readonly message: Buffer;
}

export type Control = Record<string, unknown> & { readonly type: string };

export interface WireCloseInfo {
  readonly code: number;
  readonly reason: string;
}

/** Opens a WebSocket to the media endpoint and waits for the server's challenge. */
export async function openMediaSocket(url: string): Promise<{ ws: WebSocket; serverNonce: Buffer; closed: Promise<WireCloseInfo> }> {
  const ws = new WebSocket(url.endsWith(MEDIA_PATH) ? url : `${url}${MEDIA_PATH}`, { perMessageDeflate: false });
  const closed = new Promise<WireCloseInfo>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  ws.on('error', () => undefined);
  const serverNonce = await new Promise<Buffer>((resolve, reject) => {
    ws.once('message', (data) => {
      const msg = JSON.parse(String(data)) as { type: string; nonce: string };
      if (msg.type !== 'challenge') reject(new Error('expected a challenge'));
      else resolve(Buffer.from(msg.nonce, 'base64url'));
    });
    ws.once('close', () => reject(new Error('closed before the challenge')));
  });
  return { ws, serverNonce, closed };
}

/** A joined raw session: sealed control both ways, stream keys, frames. */
export class WireClient {
  readonly ws: WebSocket;
  readonly closed: Promise<WireCloseInfo>;
  joined: Control = { type: 'none' };
  readonly controls: Control[] = [];
  readonly frames: WireFrame[] = [];
  /** Keys of streams this client receives, by stream id then epoch. */
  readonly streamKeys = new Map<number, Map<number, Buffer>>();
  /** Keys of streams this client publishes. */
  readonly publishing = new Map<number, { epoch: number; key: Buffer; seq: number; kind: WireKind }>();
  onFrame: ((frame: WireFrame) => void) | undefined;
  /** When set, receives every media frame as it arrived, before any parsing (load sinks). */
  onMedia: ((message: Buffer) => void) | undefined;
  private readonly keys: { c2s: Buffer; s2c: Buffer };
  private sentSeq = 0;
  private receivedSeq = 0;
  private nextId = 1;
  private waiters: { match: (c: Control) => boolean; resolve: (c: Control) => void }[] = [];

  private constructor(ws: WebSocket, closed: Promise<WireCloseInfo>, keys: { c2s: Buffer; s2c: Buffer }) {
    this.ws = ws;
    this.closed = closed;
    this.keys = keys;
    ws.on('message', (data, isBinary) => {
      if (!isBinary || !Buffer.isBuffer(data)) return;
      if (this.onMedia && data[1] !== KINDS.control) {
        this.onMedia(data);
        return;
      }
      const header = decodeHeader(data);
      if (header.kind !== KINDS.control) {
        const frame = { header, message: data };
        if (this.onFrame) this.onFrame(frame);
        else this.frames.push(frame);
        return;
      }
      const plain = openWire(this.keys.s2c, LABEL.s2c, data);
      if (!plain || header.seq !== this.receivedSeq + 1) throw new Error('control message does not authenticate');
      this.receivedSeq = header.seq;
      this.onControl(JSON.parse(plain.toString('utf8')) as Control);
    });
  }

  /** Handshake with a token's grant and media key; resolves once `joined` arrived. */
  static async join(url: string, creds: WireCredentials): Promise<WireClient> {
    const { ws, serverNonce, closed } = await openMediaSocket(url);
    const k = Buffer.from(creds.key, 'base64url');
    const clientNonce = randomBytes(32);
    const client = new WireClient(ws, closed, wireSessionKeys(k, creds.grant, serverNonce, clientNonce));
    const joined = client.next((c) => c.type === 'joined');
    ws.send(JSON.stringify({
      type: 'join', grant: creds.grant, nonce: clientNonce.toString('base64url'),
      proof: wireProof(k, creds.grant, serverNonce, clientNonce).toString('base64url'),
    }));
    client.joined = await Promise.race([joined, closed.then((c) => Promise.reject(new Error(`closed ${c.code} ${c.reason}`)))]);
    return client;
  }

  private onControl(c: Control): void {
    if (c.type === 'joined' || c.type === 'stream_added') {
      const streams = c.type === 'joined' ? (c['streams'] as Control[]) : [c['stream'] as Control];
      for (const s of streams) if (s['key']) this.addKey(s['stream_id'] as number, s['epoch'] as number, s['key'] as string);
    }
    if (c.type === 'stream_key') {
      const own = this.publishing.get(c['stream_id'] as number);
      if (own) {
        own.epoch = c['epoch'] as number;
        own.key = Buffer.from(c['key'] as string, 'base64url');
        own.seq = 0;
      } else {
        this.addKey(c['stream_id'] as number, c['epoch'] as number, c['key'] as string);
      }
    }
    this.controls.push(c);
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) {
      if (w.match(c)) w.resolve(c);
      else this.waiters.push(w);
    }
  }

  private addKey(streamId: number, epoch: number, key: string): void {
    let byEpoch = this.streamKeys.get(streamId);
    if (!byEpoch) this.streamKeys.set(streamId, (byEpoch = new Map()));
    byEpoch.set(epoch, Buffer.from(key, 'base64url'));
  }

  /** The next control message that matches (also one already received and not yet awaited). */
  next(match: (c: Control) => boolean): Promise<Control> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Seals and sends a control message; returns its request id. */
  sendControl(body: Record<string, unknown>): number {
    const id = this.nextId++;
    this.sentSeq += 1;
    const withId = 'id' in body || body['type'] === 'leave' ? body : { ...body, id };
    this.ws.send(sealWire(this.keys.c2s, LABEL.c2s, { kind: 0, epoch: 0, streamId: 0, seq: this.sentSeq }, Buffer.from(JSON.stringify(withId))));
    return (withId['id'] as number | undefined) ?? id;
  }

  /** A request and its reply (the message carrying the same id). */
  async request(body: Record<string, unknown>): Promise<Control> {
    const id = this.nextId;
    const reply = this.next((c) => c['id'] === id);
    this.sendControl(body);
    return reply;
  }

  async publish(streamId: number, kind: WireKind): Promise<Control> {
    const reply = await this.request({ type: 'publish', stream_id: streamId, kind });
    if (reply.type === 'published') {
      this.publishing.set(streamId, { epoch: reply['epoch'] as number, key: Buffer.from(reply['key'] as string, 'base64url'), seq: 0, kind });
    }
    return reply;
  }

  /** Seals one frame of a published stream (the next sequence number of its current key). */
  sealFrame(streamId: number, payload: Buffer): Buffer {
    const s = this.publishing.get(streamId);
    if (!s) throw new Error(`stream ${streamId} is not published`);
    s.seq += 1;
    return sealWire(s.key, LABEL.stream, { kind: KINDS[s.kind], epoch: s.epoch, streamId, seq: s.seq }, payload);
  }

  /** Opens a received stream frame with the key of its epoch. */
  openFrame(message: Buffer): Buffer | undefined {
    const h = decodeHeader(message);
    const key = this.streamKeys.get(h.streamId)?.get(h.epoch);
    return key ? openWire(key, LABEL.stream, message) : undefined;
  }

  /** Seals a control message with an arbitrary header (for tests of the server's checks). */
  sealControlRaw(h: WireHeader, body: Buffer): Buffer {
    return sealWire(this.keys.c2s, LABEL.c2s, h, body);
  }

  get controlSeq(): number {
    return this.sentSeq;
  }

  close(): void {
    this.ws.close(1000);
  }
}
