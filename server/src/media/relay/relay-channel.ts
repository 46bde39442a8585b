/**
 * One authenticated relay link between two media nodes, after its handshake (docs/protocol/relay.md):
 * control messages sealed over the WebSocket, media datagrams sealed over the nodes' UDP
 * endpoints. Both ends are the same object: either node may subscribe to the other's streams.
 */
import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';
import type { RemoteInfo } from 'node:dgram';
import type { WebSocket } from 'ws';
import { fromB64u } from '../../core/encoding.ts';
import { DatagramOpener, DatagramSealer, DatagramType, type DatagramTypeCode } from './relay-datagram.ts';
import type { LinkKeys } from './relay-credentials.ts';
import type { DatagramReceiver, RelayEndpoint, SetTimer } from './relay-endpoint.ts';
import { MAX_CONTROL_BYTES, parseControl, RelayClose, serializeControl, type RelayControl, type RelayStreamRef } from './relay-messages.ts';

/** What a node does with what its peer sends over a link. Every handler is optional. */
export interface RelayHandlers {
  /** An RTP packet of a stream this node subscribed to under `track`, as the origin forwarded it. */
  onRtp?(track: number, layer: number, packet: Buffer): void;
  /** An RTCP packet about `track` (sender reports downstream, receiver feedback upstream). */
  onRtcp?(track: number, layer: number, packet: Buffer): void;
  /** The peer wants `layers` of `stream` under `track` (again: its layers changed; `[]`: none for now). */
  onSubscribe?(track: number, stream: RelayStreamRef, layers: readonly number[]): void;
  onUnsubscribe?(track: number): void;
  /** The peer's subscribers need a key frame of `layer`; already collapsed to one request at the peer. */
  onKeyFrameRequest?(track: number, layer: number): void;
  /** Packets the peer's history did not hold; only these go upstream. */
  onNackMiss?(track: number, layer: number, seqs: readonly number[]): void;
  /** A subscriber of `track` at the peer lost access: the stream's key must rotate at its origin (this node). */
  onRotateKey?(track: number): void;
  /** The stream's key of `epoch`, for the peer to deliver to its own subscribers under their session keys. */
  onStreamKey?(track: number, epoch: number, key: Buffer): void;
  /** The origin's stream is gone (unpublished, or its publisher left this node). */
  onStreamEnd?(track: number): void;
  /** A sealed media frame of a WebSocket stream (`data`) under `track`, as its publisher sent it. */
  onFrame?(track: number, frame: Buffer): void;
}

/** How often a link checks its peer (WebSocket ping) and keeps its UDP path open, unless told otherwise. */
export const KEEPALIVE_MS = 5000;
/** A client resends its first UDP keepalive this often until the peer's answer proves the path. */
export const BIND_RETRY_MS = 250;
const CONTROL_LABEL = 0x72_6c_79_02;
const SEQ_BYTES = 8;
const TAG_BYTES = 16;

export interface RelayChannelOptions {
  readonly ws: WebSocket;
  readonly endpoint: RelayEndpoint;
  readonly role: 'client' | 'server';
  readonly peerNode: string;
  readonly keys: LinkKeys;
  readonly ownLink: number;
  readonly peerLink: number;
  /** The client knows the server's UDP address from the welcome; the server learns the client's from its datagrams. */
  readonly peerUdp: { readonly address: string; readonly port: number } | undefined;
  readonly setTimer: SetTimer;
  readonly keepaliveMs: number;
  /** Runs when the link closes, before `onClose`: its opener's own bookkeeping. */
  readonly onFinish?: (() => void) | undefined;
}

export class RelayChannel implements DatagramReceiver {
  readonly peerNode: string;
  readonly role: 'client' | 'server';
  /** Set by the owner before any message can arrive. */
  handlers: RelayHandlers = {};
  /** The link closed (either side, or a keepalive went unanswered); `code` is the WebSocket close code. */
  onClose: ((code: number) => void) | undefined;
  /** The first datagram of the peer arrived: the UDP path works both ways. */
  onUdpReady: (() => void) | undefined;
  private readonly ws: WebSocket;
  private readonly endpoint: RelayEndpoint;
  private readonly ownLink: number;
  private readonly sealer: DatagramSealer;
  private readonly opener: DatagramOpener;
  private readonly controlSend: KeyObject;
  private readonly controlReceive: KeyObject;
  private peerUdp: { address: string; port: number } | undefined;
  private sendSequence = 0;
  private receiveSequence = 0;
  private udpReady = false;
  private pongSeen = true;
  private closed = false;
  /** The code this side closed with: a close it forced (terminate) reaches the socket as 1006. */
  private closedWith: number | undefined;
  private cancelKeepalive: (() => void) | undefined;
  private cancelBind: (() => void) | undefined;
  private cancelTerminate: (() => void) | undefined;
  private readonly setTimer: SetTimer;
  private readonly keepaliveMs: number;
  private readonly onFinish: (() => void) | undefined;

  constructor(o: RelayChannelOptions) {
    this.ws = o.ws;
    this.endpoint = o.endpoint;
    this.role = o.role;
    this.peerNode = o.peerNode;
    this.ownLink = o.ownLink;
    this.peerUdp = o.peerUdp && { ...o.peerUdp };
    this.setTimer = o.setTimer;
    this.keepaliveMs = o.keepaliveMs;
    this.onFinish = o.onFinish;
    const client = o.role === 'client';
    this.sealer = new DatagramSealer(client ? o.keys.mediaC2s : o.keys.mediaS2c, o.peerLink);
    this.opener = new DatagramOpener(client ? o.keys.mediaS2c : o.keys.mediaC2s, o.ownLink);
    this.controlSend = client ? o.keys.controlC2s : o.keys.controlS2c;
    this.controlReceive = client ? o.keys.controlS2c : o.keys.controlC2s;
    this.endpoint.attach(o.ownLink, this);
    this.ws.on('message', (data, isBinary) => this.receiveControl(data as Buffer, isBinary));
    this.ws.on('pong', () => {
      this.pongSeen = true;
    });
    this.ws.on('close', (code) => this.finish(code));
    this.ws.on('error', () => this.ws.terminate());
    this.keepalive();
    if (client) this.bind();
  }

  /** The link id this node receives the link's datagrams under. */
  get link(): number {
    return this.ownLink;
  }

  get isUdpReady(): boolean {
    return this.udpReady;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  subscribe(track: number, stream: RelayStreamRef, layers: readonly number[]): boolean {
    return this.control({ type: 'subscribe', track, stream, layers });
  }

  unsubscribe(track: number): boolean {
    return this.control({ type: 'unsubscribe', track });
  }

  requestKeyFrame(track: number, layer: number): boolean {
    return this.control({ type: 'key_frame', track, layer });
  }

  sendNackMiss(track: number, layer: number, seqs: readonly number[]): boolean {
    return this.control({ type: 'nack_miss', track, layer, seqs });
  }

  requestKeyRotation(track: number): boolean {
    return this.control({ type: 'rotate_key', track });
  }

  sendStreamKey(track: number, epoch: number, key: Uint8Array): boolean {
    return this.control({ type: 'stream_key', track, epoch, key: Buffer.from(key).toString('base64url') });
  }

  endStream(track: number): boolean {
    return this.control({ type: 'stream_end', track });
  }

  /** Sends a sealed media frame of a WebSocket stream, in order with the control messages. */
  sendFrame(track: number, frame: Uint8Array): boolean {
    return this.control({ type: 'frame', track, frame: Buffer.from(frame).toString('base64url') });
  }

  /** Seals and sends one RTP packet; false while the peer's UDP address is not known or the link is closed. */
  sendRtp(track: number, layer: number, packet: Uint8Array): boolean {
    return this.datagram(DatagramType.rtp, track, layer, packet);
  }

  sendRtcp(track: number, layer: number, packet: Uint8Array): boolean {
    return this.datagram(DatagramType.rtcp, track, layer, packet);
  }

  close(code: number = 1000): void {
    if (this.closed) return;
    this.closedWith ??= code;
    this.ws.close(code);
    // a peer that does not answer the close frame is not waited for
    this.cancelTerminate ??= this.setTimer(() => this.ws.terminate(), this.keepaliveMs, 'keepalive');
  }

  receiveDatagram(datagram: Buffer, from: RemoteInfo): void {
    const opened = this.opener.open(datagram);
    if (!opened.ok) return this.endpoint.drop(opened.reason);
    this.endpoint.stats.received++;
    const { header, payload } = opened;
    if (this.role === 'server' && (this.peerUdp?.address !== from.address || this.peerUdp.port !== from.port)) {
      // authenticated and fresh: the client's address is where its datagrams come from (it may move)
      this.peerUdp = { address: from.address, port: from.port };
    }
    if (!this.udpReady) {
      this.udpReady = true;
      this.onUdpReady?.();
    }
    if (header.type === DatagramType.rtp) this.handlers.onRtp?.(header.track, header.layer, payload);
    else if (header.type === DatagramType.rtcp) this.handlers.onRtcp?.(header.track, header.layer, payload);
    else if (this.role === 'server') this.datagram(DatagramType.keepalive, 0, 0, Buffer.alloc(0));
  }

  private datagram(type: DatagramTypeCode, track: number, layer: number, payload: Uint8Array): boolean {
    const peer = this.peerUdp;
    if (this.closed || !peer) return false;
    return this.endpoint.send(this.sealer.seal(type, track, layer, payload), peer.port, peer.address);
  }

  /** Seals and sends a control message; a message the peer would refuse is this node's bug (TypeError), never sent. */
  private control(message: RelayControl): boolean {
    const text = serializeControl(message);
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return false;
    const sequence = ++this.sendSequence;
    const header = Buffer.alloc(SEQ_BYTES);
    header.writeBigUInt64BE(BigInt(sequence));
    const cipher = createCipheriv('aes-128-gcm', this.controlSend, nonceOf(header), { authTagLength: TAG_BYTES });
    cipher.setAAD(header);
    const sealed = Buffer.concat([header, cipher.update(text), cipher.final(), cipher.getAuthTag()]);
    this.ws.send(sealed);
    return true;
  }

  private receiveControl(data: Buffer, isBinary: boolean): void {
    if (this.closed) return;
    const message = isBinary && data.length >= SEQ_BYTES + TAG_BYTES && data.length <= MAX_CONTROL_BYTES ? this.openControl(data) : undefined;
    if (!message) return this.close(RelayClose.protocol_error);
    const h = this.handlers;
    switch (message.type) {
      case 'subscribe': return h.onSubscribe?.(message.track, message.stream, message.layers);
      case 'unsubscribe': return h.onUnsubscribe?.(message.track);
      case 'key_frame': return h.onKeyFrameRequest?.(message.track, message.layer);
      case 'nack_miss': return h.onNackMiss?.(message.track, message.layer, message.seqs);
      case 'rotate_key': return h.onRotateKey?.(message.track);
      case 'stream_key': return h.onStreamKey?.(message.track, message.epoch, fromB64u(message.key)!);
      case 'stream_end': return h.onStreamEnd?.(message.track);
      case 'frame': {
        // its text was checked by its characters only (relay-messages.ts): a non-canonical encoding is refused here
        const frame = fromB64u(message.frame);
        return frame ? h.onFrame?.(message.track, frame) : this.close(RelayClose.protocol_error);
      }
    }
  }

  /** The message of a sealed control frame; undefined for a gap, a repeat, a forgery or a malformed message. */
  private openControl(data: Buffer): RelayControl | undefined {
    const header = data.subarray(0, SEQ_BYTES);
    // consecutive in each direction over an ordered channel: anything else is not the peer's next frame
    if (header.readBigUInt64BE() !== BigInt(this.receiveSequence + 1)) return undefined;
    try {
      const decipher = createDecipheriv('aes-128-gcm', this.controlReceive, nonceOf(header), { authTagLength: TAG_BYTES });
      decipher.setAAD(header);
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(data.subarray(SEQ_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      this.receiveSequence++;
      return parseControl(plain.toString('utf8'));
    } catch {
      return undefined;
    }
  }

  private keepalive(): void {
    const tick = (): void => {
      if (this.closed) return;
      if (!this.pongSeen) {
        // no pong since the last ping: the peer (or the path) is gone; no close handshake is waited for
        this.closedWith ??= RelayClose.timeout;
        this.ws.terminate();
        return;
      }
      this.pongSeen = false;
      this.ws.ping();
      // the client keeps the UDP path (and a NAT's mapping) open; the server answers each keepalive
      if (this.role === 'client') this.datagram(DatagramType.keepalive, 0, 0, Buffer.alloc(0));
      this.cancelKeepalive = this.setTimer(tick, this.keepaliveMs, 'keepalive');
    };
    this.cancelKeepalive = this.setTimer(tick, this.keepaliveMs, 'keepalive');
  }

  /** The client's first keepalive, resent until the server's answer shows the path works both ways. */
  private bind(): void {
    const attempt = (): void => {
      if (this.closed || this.udpReady) return;
      this.datagram(DatagramType.keepalive, 0, 0, Buffer.alloc(0));
      this.cancelBind = this.setTimer(attempt, BIND_RETRY_MS, 'bind');
    };
    attempt();
  }

  private finish(code: number): void {
    if (this.closed) return;
    this.closed = true;
    this.cancelKeepalive?.();
    this.cancelBind?.();
    this.cancelTerminate?.();
    this.endpoint.release(this.ownLink);
    this.onFinish?.();
    this.onClose?.(this.closedWith ?? code);
  }
}

function nonceOf(sequence: Buffer): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32BE(CONTROL_LABEL, 0);
  sequence.copy(nonce, 4);
  return nonce;
}
