/**
 * The accepting side of relay links (docs/protocol/relay.md, "Handshake"): a WebSocket at
 * `/v1/media/relay` on the media node's own HTTP server (so `wss` when the node has TLS). A peer
 * is let in only once it proved, without sending it, that it holds the node credential; an app's
 * grant, or anything else, is closed with `unauthorized` or `protocol_error`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { fromB64u, safeEqual } from '../../core/encoding.ts';
import { RelayChannel, KEEPALIVE_MS } from './relay-channel.ts';
import { clientProof, deriveLinkKeys, serverProof, type HandshakeTranscript } from './relay-credentials.ts';
import { realTimer, type RelayEndpoint, type SetTimer } from './relay-endpoint.ts';
import {
  MAX_CONTROL_BYTES, NONCE_BYTES, parseHello, RELAY_PATH, RELAY_PROTOCOL_VERSION, RelayClose, type RelayChallenge, type RelayWelcome,
} from './relay-messages.ts';

/** Time a peer has, from the upgrade, to complete its hello. */
export const HANDSHAKE_TIMEOUT_MS = 5000;

export interface RelayServerOptions {
  readonly endpoint: RelayEndpoint;
  /** A peer node opened a link: set its handlers (and `onClose`) now, before it can send. */
  readonly onChannel: (channel: RelayChannel) => void;
  /** A peer was refused; `reason` names the close code (never what it sent). */
  readonly onRefused?: ((reason: keyof typeof RelayClose, address: string | undefined) => void) | undefined;
  readonly keepaliveMs?: number | undefined;
  readonly handshakeTimeoutMs?: number | undefined;
  readonly setTimer?: SetTimer | undefined;
}

export class RelayServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CONTROL_BYTES, perMessageDeflate: false });
  private readonly options: RelayServerOptions;
  private readonly open = new Set<RelayChannel>();
  private readonly setTimer: SetTimer;

  constructor(options: RelayServerOptions) {
    this.options = options;
    this.setTimer = options.setTimer ?? realTimer;
  }

  /** Links accepted and still open. */
  get channels(): ReadonlySet<RelayChannel> {
    return this.open;
  }

  /**
   * Takes an upgrade request of the media node's HTTP server when it is for the relay path; false
   * (and the socket left alone) for any other path, which the media role answers as before.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if ((req.url ?? '').split('?')[0] !== RELAY_PATH) return false;
    socket.on('error', () => socket.destroy());
    this.wss.handleUpgrade(req, socket, head, (ws) => this.handshake(ws, req.socket.remoteAddress));
    return true;
  }

  /** Closes every accepted link. */
  close(): void {
    for (const channel of this.open) channel.close(1001);
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private handshake(ws: WebSocket, address: string | undefined): void {
    const { endpoint } = this.options;
    const serverNonce = randomBytes(NONCE_BYTES);
    let done = false;
    const refuse = (reason: keyof typeof RelayClose): void => {
      if (done) return;
      done = true;
      cancelTimeout();
      this.options.onRefused?.(reason, address);
      ws.close(RelayClose[reason]);
    };
    const cancelTimeout = this.setTimer(() => refuse('handshake_timeout'), this.options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS, 'handshake');
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      done = true;
      cancelTimeout();
    });
    let heard = false;
    const onMessage = (data: RawData, isBinary: boolean): void => {
      // one hello, then nothing until the welcome: a second message before it is out of place
      if (heard || isBinary) return refuse('protocol_error');
      heard = true;
      void this.admit(ws, String(data), serverNonce).then((result) => {
        if (done) {
          if (result.ok) endpoint.release(result.link);
          return;
        }
        if (!result.ok) return refuse(result.reason);
        done = true;
        cancelTimeout();
        ws.off('message', onMessage);
        ws.send(JSON.stringify(result.welcome));
        const channel = new RelayChannel({
          ws, endpoint, role: 'server', peerNode: result.transcript.clientNode, keys: result.keys,
          ownLink: result.link, peerLink: result.transcript.clientLink, peerUdp: undefined,
          setTimer: this.setTimer, keepaliveMs: this.options.keepaliveMs ?? KEEPALIVE_MS,
          onFinish: () => this.open.delete(channel),
        });
        this.open.add(channel);
        this.options.onChannel(channel);
      });
    };
    ws.on('message', onMessage);
    const challenge: RelayChallenge = { type: 'relay_challenge', version: RELAY_PROTOCOL_VERSION, node: endpoint.nodeId, nonce: serverNonce.toString('base64url') };
    ws.send(JSON.stringify(challenge));
  }

  private async admit(ws: WebSocket, text: string, serverNonce: Buffer): Promise<
    | { ok: true; welcome: RelayWelcome; transcript: HandshakeTranscript; keys: ReturnType<typeof deriveLinkKeys>; link: number }
    | { ok: false; reason: keyof typeof RelayClose }
  > {
    const hello = parseHello(text);
    if (!hello || hello.version !== RELAY_PROTOCOL_VERSION) return { ok: false, reason: 'protocol_error' };
    const { endpoint } = this.options;
    const credential = await endpoint.credentials.find(hello.kid);
    if (!credential) return { ok: false, reason: 'unauthorized' };
    const transcript: HandshakeTranscript = {
      serverNode: endpoint.nodeId, clientNode: hello.node, serverNonce, clientNonce: fromB64u(hello.nonce)!,
      kid: hello.kid, clientLink: hello.link,
    };
    if (!safeEqual(clientProof(credential.secret, transcript), fromB64u(hello.proof)!)) return { ok: false, reason: 'unauthorized' };
    if (ws.readyState !== ws.OPEN) return { ok: false, reason: 'protocol_error' };
    const link = endpoint.reserveLink();
    const fields = { serverLink: link, udpPort: endpoint.udpPort };
    const welcome: RelayWelcome = {
      type: 'relay_welcome', link, udp_port: fields.udpPort, proof: serverProof(credential.secret, transcript, fields).toString('base64url'),
    };
    return { ok: true, welcome, transcript, keys: deriveLinkKeys(credential.secret, transcript), link };
  }
}
