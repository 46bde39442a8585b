/**
 * A media node's relay endpoint: its node id, its credential and the one UDP socket every link of
 * the node, accepted or opened, sends and receives datagrams on. A datagram names the link id its
 * receiver chose, so one socket serves every link; what cannot be opened is dropped and counted.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { randomInt } from 'node:crypto';
import type { RelayCredentials } from './relay-credentials.ts';
import { datagramLink, type DropReason } from './relay-datagram.ts';

/** What one link does with the datagrams its id names. */
export interface DatagramReceiver {
  receiveDatagram(datagram: Buffer, from: RemoteInfo): void;
}

/** Counters of the endpoint's socket (docs/protocol/relay.md, "Datagrams"). */
export interface RelayEndpointStats {
  /** Datagrams that opened and were handed to their link. */
  received: number;
  sent: number;
  dropped: Record<DropReason, number>;
}

/** Arms a timer; the function it returns cancels it. `purpose` lets a test tell timers apart. */
export type SetTimer = (fn: () => void, ms: number, purpose: 'handshake' | 'keepalive' | 'bind' | 'reconnect') => () => void;

export const realTimer: SetTimer = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};

export interface RelayEndpointOptions {
  /** This node's id, as the directory names it (`host:port` of its media address). */
  readonly nodeId: string;
  readonly credentials: RelayCredentials;
  /** Address the UDP socket binds to. */
  readonly host: string;
  /** UDP port (`RTC_MEDIA_RELAY_PORT`); 0: one the system picks. */
  readonly port: number;
  /** A send failed at the socket (the datagram is lost, as on the network). */
  readonly onError?: ((err: Error) => void) | undefined;
  /** A datagram was dropped (also counted in `stats`): for metrics. */
  readonly onDrop?: ((reason: DropReason) => void) | undefined;
}

export class RelayEndpoint {
  readonly nodeId: string;
  readonly credentials: RelayCredentials;
  /** The address family of the socket: a peer is reached at an address of this family. */
  readonly family: 4 | 6;
  readonly stats: RelayEndpointStats = { received: 0, sent: 0, dropped: { malformed: 0, unknown_link: 0, auth: 0, replay: 0 } };
  private readonly socket: Socket;
  private readonly links = new Map<number, DatagramReceiver | null>();
  private closed = false;
  private readonly onDrop: ((reason: DropReason) => void) | undefined;

  private constructor(options: RelayEndpointOptions, socket: Socket) {
    this.nodeId = options.nodeId;
    this.credentials = options.credentials;
    this.socket = socket;
    this.family = socket.address().family === 'IPv6' ? 6 : 4;
    this.onDrop = options.onDrop;
    socket.on('message', (datagram, from) => this.route(datagram, from));
    socket.on('error', (err) => options.onError?.(err));
  }

  /** Binds the endpoint's socket; rejects when the port is taken. */
  static async open(options: RelayEndpointOptions): Promise<RelayEndpoint> {
    const socket = createSocket({ type: isIP(options.host) === 6 ? 'udp6' : 'udp4' });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(options.port, options.host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new RelayEndpoint(options, socket);
  }

  /** The bound UDP port, which a welcome announces. */
  get udpPort(): number {
    return this.socket.address().port;
  }

  /** A fresh link id of this endpoint (random, so a stale peer's datagrams never reach a new link). */
  reserveLink(): number {
    for (;;) {
      const id = randomInt(1, 0xffff_ffff);
      if (!this.links.has(id)) {
        this.links.set(id, null);
        return id;
      }
    }
  }

  attach(link: number, receiver: DatagramReceiver): void {
    this.links.set(link, receiver);
  }

  release(link: number): void {
    this.links.delete(link);
  }

  /** Sends one datagram given as its parts; false once the endpoint is closed. */
  send(parts: readonly Buffer[], port: number, address: string): boolean {
    if (this.closed) return false;
    this.socket.send(parts, port, address, (err) => {
      if (err) this.countError(err);
    });
    this.stats.sent++;
    return true;
  }

  drop(reason: DropReason): void {
    this.stats.dropped[reason]++;
    this.onDrop?.(reason);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.links.clear();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private countError(err: Error): void {
    this.socket.emit('error', err);
  }

  private route(datagram: Buffer, from: RemoteInfo): void {
    const link = datagramLink(datagram);
    if (link === undefined) return this.drop('malformed');
    const receiver = this.links.get(link);
    if (!receiver) return this.drop('unknown_link');
    receiver.receiveDatagram(datagram, from);
  }
}
