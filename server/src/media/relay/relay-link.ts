/**
 * The opening side of a relay link (docs/protocol/relay.md): a node connects to a peer node's
 * relay path, proves it holds the node credential and checks that the peer proves the same, then
 * keeps the link: when it breaks it is opened again with exponential backoff and jitter, the
 * owner is told `down` and `up`, and the subscriptions made through it are sent again.
 */
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { WebSocket, type RawData } from 'ws';
import { fromB64u, safeEqual } from '../../core/encoding.ts';
import { KEEPALIVE_MS, RelayChannel, type RelayHandlers } from './relay-channel.ts';
import { clientProof, deriveLinkKeys, serverProof, type HandshakeTranscript } from './relay-credentials.ts';
import { realTimer, type RelayEndpoint, type SetTimer } from './relay-endpoint.ts';
import {
  MAX_CONTROL_BYTES, NONCE_BYTES, parseChallenge, parseWelcome, RELAY_PATH, RELAY_PROTOCOL_VERSION, RelayClose, serializeControl, type RelayHello,
  type RelayStreamRef,
} from './relay-messages.ts';
import { HANDSHAKE_TIMEOUT_MS } from './relay-server.ts';

/** Why a link is down, or why an attempt to open it failed. */
export type RelayDownReason = 'unreachable' | 'unauthorized' | 'protocol_error' | 'timeout' | 'closed';

/** The first wait before opening a link again, and the longest; each failed attempt doubles it. */
export const RECONNECT_INITIAL_MS = 250;
export const RECONNECT_MAX_MS = 10_000;

export interface RelayLinkOptions {
  readonly endpoint: RelayEndpoint;
  /** The peer's media address, `ws://host:port` or `wss://host:port` (its relay path is added). */
  readonly url: string;
  /** The node id the peer must announce; undefined: any node that proves the credential. */
  readonly peerNode?: string | undefined;
  readonly handlers: RelayHandlers;
  /** The link works both ways (control and UDP); subscriptions were sent again. */
  readonly onUp?: ((channel: RelayChannel) => void) | undefined;
  /** The link that was up broke; its streams pause until `onUp`. */
  readonly onDown?: ((reason: RelayDownReason) => void) | undefined;
  /** An attempt failed (or the link went down), and the next one starts in `delayMs`. */
  readonly onRetry?: ((info: { readonly attempt: number; readonly delayMs: number; readonly reason: RelayDownReason }) => void) | undefined;
  readonly keepaliveMs?: number | undefined;
  readonly handshakeTimeoutMs?: number | undefined;
  readonly reconnectInitialMs?: number | undefined;
  readonly reconnectMaxMs?: number | undefined;
  /** Trusted CA for `wss` (a node's own certificate in tests and private deployments). */
  readonly ca?: Buffer | undefined;
  readonly setTimer?: SetTimer | undefined;
  /** In [0, 1): the jitter of each wait (injected in tests). */
  readonly random?: (() => number) | undefined;
}

/** The wait before attempt `attempt` (1 the first retry): doubling from `initial`, capped, in its upper half at random. */
export function reconnectDelay(attempt: number, initial: number, max: number, random: number): number {
  const full = Math.min(max, initial * 2 ** Math.min(attempt - 1, 30));
  return Math.round(full / 2 + (full / 2) * random);
}

export class RelayLink {
  private readonly o: RelayLinkOptions;
  private readonly setTimer: SetTimer;
  private readonly subscriptions = new Map<number, { stream: RelayStreamRef; layers: readonly number[] }>();
  private channel: RelayChannel | undefined;
  private ws: WebSocket | undefined;
  private up = false;
  private closed = false;
  private attempt = 0;
  private cancelRetry: (() => void) | undefined;

  constructor(options: RelayLinkOptions) {
    this.o = options;
    this.setTimer = options.setTimer ?? realTimer;
    this.connect();
  }

  get isUp(): boolean {
    return this.up;
  }

  get peerNode(): string | undefined {
    return this.channel?.peerNode;
  }

  /** Asks the peer for `layers` of `stream` under `track` (again to change them); kept and sent again after each reconnection. */
  subscribe(track: number, stream: RelayStreamRef, layers: readonly number[]): boolean {
    serializeControl({ type: 'subscribe', track, stream, layers }); // refused here, before it is kept and sent again
    this.subscriptions.set(track, { stream, layers: [...layers] });
    return this.up && this.channel!.subscribe(track, stream, layers);
  }

  unsubscribe(track: number): boolean {
    this.subscriptions.delete(track);
    return this.up && this.channel!.unsubscribe(track);
  }

  requestKeyFrame(track: number, layer: number): boolean {
    return this.up && this.channel!.requestKeyFrame(track, layer);
  }

  sendNackMiss(track: number, layer: number, seqs: readonly number[]): boolean {
    return this.up && this.channel!.sendNackMiss(track, layer, seqs);
  }

  requestKeyRotation(track: number): boolean {
    return this.up && this.channel!.requestKeyRotation(track);
  }

  sendStreamKey(track: number, epoch: number, key: Uint8Array): boolean {
    return this.up && this.channel!.sendStreamKey(track, epoch, key);
  }

  endStream(track: number): boolean {
    return this.up && this.channel!.endStream(track);
  }

  /** False while the link is down: the packet is lost, as a paused stream's would be. */
  sendRtp(track: number, layer: number, packet: Uint8Array): boolean {
    return this.up && this.channel!.sendRtp(track, layer, packet);
  }

  sendRtcp(track: number, layer: number, packet: Uint8Array): boolean {
    return this.up && this.channel!.sendRtcp(track, layer, packet);
  }

  /** Closes the link for good: no more attempts, no `onDown`. */
  close(): void {
    this.closed = true;
    this.up = false;
    this.cancelRetry?.();
    this.channel?.close(1000);
    this.ws?.terminate();
  }

  private connect(): void {
    if (this.closed) return;
    const url = new URL(RELAY_PATH, this.o.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // resolved once per attempt, in the family of the endpoint's socket: a send never looks a name up
    if (isIP(host) === 0) {
      lookup(host, { family: this.o.endpoint.family }).then(
        ({ address }) => this.open(url, address),
        () => this.broken('unreachable'),
      );
    } else {
      this.open(url, host);
    }
  }

  private open(url: URL, udpAddress: string): void {
    if (this.closed) return;
    const ws = new WebSocket(url, { maxPayload: MAX_CONTROL_BYTES, perMessageDeflate: false, ca: this.o.ca, handshakeTimeout: this.handshakeMs() });
    this.ws = ws;
    const { endpoint } = this.o;
    const clientNonce = randomBytes(NONCE_BYTES);
    let failure: RelayDownReason | undefined;
    let transcript: HandshakeTranscript | undefined;
    let secret: Buffer | undefined;
    let channel: RelayChannel | undefined;
    const fail = (reason: RelayDownReason, code: number): void => {
      failure ??= reason;
      ws.close(code);
    };
    const cancelTimeout = this.setTimer(() => {
      failure ??= 'timeout';
      ws.terminate();
    }, this.handshakeMs(), 'handshake');
    const onMessage = (data: RawData, isBinary: boolean): void => {
      if (isBinary) return fail('protocol_error', RelayClose.protocol_error);
      if (!transcript) {
        const challenge = parseChallenge(String(data));
        if (!challenge || challenge.version !== RELAY_PROTOCOL_VERSION) return fail('protocol_error', RelayClose.protocol_error);
        if (this.o.peerNode !== undefined && challenge.node !== this.o.peerNode) return fail('unauthorized', RelayClose.unauthorized);
        const own = endpoint.credentials.current();
        secret = own.secret;
        transcript = {
          serverNode: challenge.node, clientNode: endpoint.nodeId, serverNonce: fromB64u(challenge.nonce)!, clientNonce,
          kid: own.kid, clientLink: endpoint.reserveLink(),
        };
        const hello: RelayHello = {
          type: 'relay_hello', version: RELAY_PROTOCOL_VERSION, node: endpoint.nodeId, kid: own.kid,
          nonce: clientNonce.toString('base64url'), link: transcript.clientLink, proof: clientProof(secret, transcript).toString('base64url'),
        };
        ws.send(JSON.stringify(hello));
        return;
      }
      const welcome = parseWelcome(String(data));
      if (!welcome) return fail('protocol_error', RelayClose.protocol_error);
      // the peer proves the credential too: a client (or a node without it) cannot pose as a node
      const expected = serverProof(secret!, transcript, { serverLink: welcome.link, udpPort: welcome.udp_port });
      if (!safeEqual(expected, fromB64u(welcome.proof)!)) return fail('unauthorized', RelayClose.unauthorized);
      ws.off('message', onMessage);
      channel = new RelayChannel({
        ws, endpoint, role: 'client', peerNode: transcript.serverNode, keys: deriveLinkKeys(secret!, transcript),
        ownLink: transcript.clientLink, peerLink: welcome.link, peerUdp: { address: udpAddress, port: welcome.udp_port },
        setTimer: this.setTimer, keepaliveMs: this.o.keepaliveMs ?? KEEPALIVE_MS,
      });
      const opened = channel;
      opened.handlers = this.o.handlers;
      this.channel = opened;
      opened.onUdpReady = () => {
        cancelTimeout();
        if (this.closed || opened.isClosed) return;
        this.up = true;
        this.attempt = 0;
        for (const [track, s] of this.subscriptions) opened.subscribe(track, s.stream, s.layers);
        this.o.onUp?.(opened);
      };
      opened.onClose = (code) => this.broken(reasonOf(code, failure));
    };
    ws.on('message', onMessage);
    ws.on('error', () => {
      failure ??= 'unreachable';
    });
    ws.on('close', (code) => {
      cancelTimeout();
      // a link that made it to a channel reports through the channel's onClose
      if (channel) return;
      if (transcript) endpoint.release(transcript.clientLink);
      this.broken(reasonOf(code, failure));
    });
  }

  private handshakeMs(): number {
    return this.o.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS;
  }

  private broken(reason: RelayDownReason): void {
    this.channel = undefined;
    this.ws = undefined;
    if (this.closed) return;
    if (this.up) {
      this.up = false;
      this.o.onDown?.(reason);
    }
    this.attempt++;
    const delayMs = reconnectDelay(this.attempt, this.o.reconnectInitialMs ?? RECONNECT_INITIAL_MS, this.o.reconnectMaxMs ?? RECONNECT_MAX_MS, (this.o.random ?? Math.random)());
    this.o.onRetry?.({ attempt: this.attempt, delayMs, reason });
    this.cancelRetry = this.setTimer(() => this.connect(), delayMs, 'reconnect');
  }
}

function reasonOf(code: number, failure: RelayDownReason | undefined): RelayDownReason {
  if (failure) return failure;
  if (code === RelayClose.unauthorized) return 'unauthorized';
  if (code === RelayClose.protocol_error) return 'protocol_error';
  if (code === RelayClose.timeout || code === RelayClose.handshake_timeout) return 'timeout';
  return 'closed';
}
