/** One WebSocket to the media server, from the challenge to the close (docs/protocol/media.md). */
import {
  KEY_BYTES, KIND_CODE, MEDIA_CLOSE, NONCE_BYTES, NONCE_LABEL, PROTOCOL_VERSION, decodeHeader, encodeHeader, parseChallenge, parseServerControl,
  type ClientControl, type ClientRequest, type FrameHeader, type JoinMessage, type MediaCloseName, type ServerControl,
} from '@rtc/protocol';
import { deriveSessionKeys, open, proofOfPossession, randomBytes, seal, sha256, type SecretKey } from './crypto.ts';
import { fromB64u, fromUtf8, toB64u, utf8 } from './encoding.ts';
import { MediaError, SOCKET_CLOSE, errorForClose } from './errors.ts';
import type { MediaToken, WebSocketConstructor, WebSocketEventLike, WebSocketLike } from './types.ts';

/** A control message from the server, checked against docs/protocol/media.md by `parseServerControl`. */
export type ServerMessage = ServerControl;

/** `joined`, the first control message of a connection. */
export type JoinedMessage = ServerControl & { readonly type: 'joined' };

export interface ConnectionHandlers {
  /** `joined`, before any later message is processed and before `open` resolves. */
  onJoined(connection: Connection, joined: JoinedMessage): void | Promise<void>;
  /** Control messages in order; the next message waits for the returned promise. */
  onControl(message: ServerMessage): void | Promise<void>;
  /** Media frames in order, after the control messages that preceded them. */
  onFrame(header: FrameHeader, message: Uint8Array): void | Promise<void>;
  /** Called once, when the socket closed or was abandoned. */
  onClose(code: number, reason: string): void;
}

export interface OpenOptions {
  readonly url: string;
  readonly token: MediaToken;
  readonly WebSocket: WebSocketConstructor;
  readonly timeoutMs: number;
}

const OPEN = 1;

/**
 * The server takes 40 control messages in a burst and 20 a second (docs/protocol/media.md, section 6)
 * and closes the session with 4029 beyond; the SDK keeps under that with a little room, holding back
 * what would go over rather than losing the session to an application that changes a lot at once.
 */
const CONTROL_BURST = 32;
const CONTROL_PER_SECOND = 16;

/** Decodes the token's media key; throws TypeError for a token that is not one. */
export function mediaKeyOf(token: MediaToken): Uint8Array {
  const key = typeof token?.media?.key === 'string' ? fromB64u(token.media.key) : undefined;
  if (!key || key.length !== KEY_BYTES || typeof token.media.grant !== 'string') {
    throw new TypeError('the token has no media grant and 32-byte media key');
  }
  return key;
}

/** Errors of connections whose socket never opened: nothing listens at the node's address (refused, or no route). */
const unreachable = new WeakSet<MediaError>();

/** Whether the join failed because the socket never opened: a strong sign the media node is gone. */
export function isUnreachable(error: MediaError): boolean {
  return unreachable.has(error);
}

export class Connection {
  private readonly ws: WebSocketLike;
  private readonly url: string;
  /** Whether the socket opened: a close before names the likely causes (errorForClose). */
  private opened = false;
  private handlers: ConnectionHandlers | undefined;
  private keys: { c2s: SecretKey; s2c: SecretKey } | undefined;
  private sentSeq = 0;
  private receivedSeq = 0;
  private nextRequestId = 1;
  private readonly pending = new Map<number, { resolve: (m: ServerMessage) => void; reject: (e: MediaError) => void }>();
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<unknown> = Promise.resolve();
  private controlTokens = CONTROL_BURST;
  private controlTokensAt = Date.now();
  private closed = false;
  /** `Date.now()` when the server was last heard from. */
  lastHeard = Date.now();

  private constructor(ws: WebSocketLike, url: string) {
    this.ws = ws;
    this.url = url;
  }

  /**
   * Opens the socket, answers the challenge with a proof of possession of the media key, derives
   * the session keys and waits for `joined`. The media key itself is never sent.
   */
  static open(options: OpenOptions, handlers: ConnectionHandlers): Promise<{ connection: Connection; joined: JoinedMessage }> {
    const mediaKey = mediaKeyOf(options.token);
    const grant = options.token.media.grant;
    let ws: WebSocketLike;
    try {
      ws = new options.WebSocket(options.url);
    } catch (cause) {
      return Promise.reject(new MediaError('connection_failed', `the media server URL ${options.url} cannot be opened`, { cause }));
    }
    ws.binaryType = 'arraybuffer';
    const connection = new Connection(ws, options.url);
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: MediaError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        connection.abandon('timeout');
        reject(error);
      };
      const timer = setTimeout(() => fail(new MediaError('timeout', 'the media server did not complete the join in time')), options.timeoutMs);
      let stage: 'challenge' | 'joined' = 'challenge';
      connection.handlers = {
        onJoined: () => undefined,
        onControl: async (message) => {
          if (stage !== 'joined' || message.type !== 'joined') return fail(new MediaError('protocol_error', 'expected joined'));
          settled = true;
          clearTimeout(timer);
          connection.handlers = handlers;
          await handlers.onJoined(connection, message);
          resolve({ connection, joined: message });
        },
        onFrame: () => fail(new MediaError('protocol_error', 'a frame arrived before joined')),
        onClose: (code, reason) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const error = connection.errorForClose(code, reason);
          if (!connection.opened) unreachable.add(error);
          reject(error);
        },
      };
      ws.addEventListener('open', () => {
        connection.opened = true;
      });
      ws.addEventListener('message', (event) => {
        connection.opened = true;
        if (stage === 'challenge') {
          stage = 'joined';
          connection.lastHeard = Date.now();
          connection.answerChallenge(event.data, grant, mediaKey).catch((err: unknown) => {
            fail(err instanceof MediaError ? err : new MediaError('protocol_error', 'the challenge could not be answered', { cause: err }));
          });
          return;
        }
        connection.onMessage(event);
      });
      ws.addEventListener('close', (event) => connection.onSocketClose(event));
      ws.addEventListener('error', () => undefined);
    });
  }

  private async answerChallenge(data: unknown, grant: string, mediaKey: Uint8Array): Promise<void> {
    const challenge = typeof data === 'string' ? parseChallenge(data) : undefined;
    const serverNonce = challenge && fromB64u(challenge.nonce);
    if (!challenge || challenge.version !== PROTOCOL_VERSION || serverNonce?.length !== NONCE_BYTES) {
      throw new MediaError('protocol_error', 'the server did not send a valid challenge');
    }
    const clientNonce = randomBytes(NONCE_BYTES);
    const digest = await sha256(utf8(grant));
    const [proof, keys] = await Promise.all([
      proofOfPossession(mediaKey, digest, serverNonce, clientNonce),
      deriveSessionKeys(mediaKey, digest, serverNonce, clientNonce),
    ]);
    mediaKey.fill(0);
    this.keys = keys;
    if (this.closed) return;
    const join: JoinMessage = { type: 'join', grant, nonce: toB64u(clientNonce), proof: toB64u(proof) };
    this.ws.send(JSON.stringify(join));
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  get isOpen(): boolean {
    return !this.closed && this.ws.readyState === OPEN;
  }

  /** Seals and sends a control message in order; resolves false when the socket is gone. */
  sendControl(body: ClientControl): Promise<boolean> {
    if (this.closed || !this.keys) return Promise.resolve(false);
    this.sentSeq += 1;
    const header = encodeHeader({ kind: KIND_CODE.control, epoch: 0, streamId: 0, seq: this.sentSeq });
    const sealing = seal(this.keys.c2s, NONCE_LABEL.clientControl, header, utf8(JSON.stringify(body)));
    const waitMs = this.takeControlToken();
    return this.enqueue(waitMs > 0 ? new Promise((resolve) => setTimeout(resolve, waitMs)).then(() => sealing) : sealing);
  }

  /** Takes one control message's room in the server's rate; the ms until it is there (0: now). */
  private takeControlToken(): number {
    const now = Date.now();
    this.controlTokens = Math.min(CONTROL_BURST, this.controlTokens + ((now - this.controlTokensAt) / 1000) * CONTROL_PER_SECOND);
    this.controlTokensAt = now;
    this.controlTokens -= 1;
    return this.controlTokens >= 0 ? 0 : Math.ceil((-this.controlTokens / CONTROL_PER_SECOND) * 1000);
  }

  /** A request and its reply (the message with the same `id`); rejects when the connection ends first. */
  request(body: ClientRequest & { readonly type: Exclude<ClientRequest['type'], 'leave'> }): Promise<ServerMessage> {
    if (this.closed) return Promise.reject(new MediaError('closed', 'the media connection is closed'));
    const id = this.nextRequestId++;
    const reply = new Promise<ServerMessage>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    void this.sendControl({ ...body, id } as ClientControl);
    return reply;
  }

  /** Seals a stream frame under a stream key (the caller owns the sequence) and sends it in order. */
  sendFrame(key: SecretKey, header: FrameHeader, payload: Uint8Array): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return this.enqueue(seal(key, NONCE_LABEL.streamFrame, encodeHeader(header), payload));
  }

  private enqueue(sealing: Promise<Uint8Array>): Promise<boolean> {
    const sent = this.outbound.then(() => sealing).then((bytes) => {
      if (!this.isOpen) return false;
      this.ws.send(bytes);
      return true;
    });
    this.outbound = sent.catch(() => undefined);
    return sent;
  }

  /** Closes the socket with one of `MEDIA_CLOSE`; `onClose` runs at once with its code (a dead network may never confirm). */
  abandon(close: MediaCloseName): void {
    if (this.closed) return;
    const { code, reason } = MEDIA_CLOSE[close];
    try {
      this.ws.close(code, reason);
    } catch {
      // already closing
    }
    this.finish(code, reason);
  }

  private onSocketClose(event: WebSocketEventLike): void {
    this.finish(typeof event.code === 'number' ? event.code : SOCKET_CLOSE.abnormal, typeof event.reason === 'string' ? event.reason : '');
  }

  private finish(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    const error = this.errorForClose(code, reason);
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
    this.handlers?.onClose(code, reason);
  }

  /** The error of a close of this connection, naming its URL. */
  errorForClose(code: number, reason: string): MediaError {
    return errorForClose(code, reason, { url: this.url, opened: this.opened });
  }

  private onMessage(event: WebSocketEventLike): void {
    if (this.closed) return;
    this.lastHeard = Date.now();
    const data = event.data;
    if (!(data instanceof ArrayBuffer)) return this.abandon('protocol_error');
    const message = new Uint8Array(data);
    this.inbound = this.inbound.then(() => this.process(message)).catch(() => this.abandon('protocol_error'));
  }

  private async process(message: Uint8Array): Promise<void> {
    if (this.closed) return;
    const header = decodeHeader(message);
    if (!header) throw new MediaError('protocol_error', 'malformed frame');
    if (header.kind !== KIND_CODE.control) {
      await this.handlers?.onFrame(header, message);
      return;
    }
    if (!this.keys || header.seq !== this.receivedSeq + 1 || header.epoch !== 0 || header.streamId !== 0) {
      throw new MediaError('protocol_error', 'control message out of sequence');
    }
    const plain = await open(this.keys.s2c, NONCE_LABEL.serverControl, message);
    const text = plain && fromUtf8(plain);
    if (text === undefined) throw new MediaError('protocol_error', 'control message does not authenticate');
    const parsed = parseServerControl(text);
    this.receivedSeq = header.seq;
    // a message type of a later protocol revision is ignored; a malformed one ends the connection
    if (!parsed.ok && parsed.error === 'unknown_type') return;
    if (!parsed.ok) throw new MediaError('protocol_error', 'the server sent an invalid control message');
    const control = parsed.message;
    // the session sees replies too (keys, renewal state) before the requester resumes
    await this.handlers?.onControl(control);
    const waiting = 'id' in control ? this.pending.get(control.id) : undefined;
    if (waiting && 'id' in control) {
      this.pending.delete(control.id);
      waiting.resolve(control);
    }
  }
}
