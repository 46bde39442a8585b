/**
 * Media nodes' relay sides for the relay link's tests (server/src/media/relay): an endpoint, the
 * relay path on an HTTP server of its own, links with their events queued.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fixedKeyRing } from '../../server/src/core/keyring.ts';
import { buildKeyRing, newKeyDocument } from '../../server/src/keys/key-document.ts';
import type { RelayChannel, RelayHandlers } from '../../server/src/media/relay/relay-channel.ts';
import { keyRingRelayCredentials, type RelayCredentials } from '../../server/src/media/relay/relay-credentials.ts';
import { realTimer, RelayEndpoint, type RelayEndpointOptions, type SetTimer } from '../../server/src/media/relay/relay-endpoint.ts';
import { RelayLink, type RelayDownReason, type RelayLinkOptions } from '../../server/src/media/relay/relay-link.ts';
import type { DropReason } from '../../server/src/media/relay/relay-datagram.ts';
import { RelayServer } from '../../server/src/media/relay/relay-server.ts';

export type Inbox<T> = ReturnType<typeof inbox<T>>;

/** A value some handler will deliver: `next()` resolves with the next one (queued when it came first). */
export function inbox<T>(): { push(value: T): void; next(): Promise<T>; readonly size: number } {
  const queued: T[] = [];
  const waiting: ((value: T) => void)[] = [];
  return {
    push(value) {
      const w = waiting.shift();
      if (w) w(value);
      else queued.push(value);
    },
    next() {
      const q = queued.shift();
      return q !== undefined ? Promise.resolve(q) : new Promise((resolve) => waiting.push(resolve));
    },
    get size() { return queued.length; },
  };
}

export interface RelayNode {
  readonly endpoint: RelayEndpoint;
  readonly relay: RelayServer;
  readonly http: Server;
  readonly url: string;
  readonly channels: ReturnType<typeof inbox<RelayChannel>>;
  readonly refused: ReturnType<typeof inbox<string>>;
  /** Datagrams its endpoint dropped, by reason. */
  readonly drops: ReturnType<typeof inbox<DropReason>>;
  /** The port of its HTTP server (the media port). */
  readonly port: number;
  handlers: RelayHandlers;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];

/** Runs `fn` at relayCleanup. */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

/** Closes everything the helpers started, newest first: pass it to `after`. */
export async function relayCleanup(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

/** An endpoint on loopback, closed at relayCleanup. */
export async function openEndpoint(options: RelayEndpointOptions): Promise<RelayEndpoint> {
  const endpoint = await RelayEndpoint.open(options);
  cleanups.push(() => endpoint.close());
  return endpoint;
}

const listen = (http: Server, port = 0): Promise<number> => new Promise((resolve, reject) => {
  http.once('error', reject);
  http.listen(port, '127.0.0.1', () => resolve((http.address() as AddressInfo).port));
});

/** A media node's relay side: its endpoint, and the relay path on an HTTP server of its own. */
export async function startNode(
  nodeId: string, credentials: RelayCredentials, port = 0, tls?: { readonly cert: Buffer; readonly key: Buffer },
): Promise<RelayNode> {
  const drops = inbox<DropReason>();
  const endpoint = await RelayEndpoint.open({ nodeId, credentials, host: '127.0.0.1', port: 0, onDrop: (reason) => drops.push(reason) });
  const channels = inbox<RelayChannel>();
  const refused = inbox<string>();
  const node: Partial<RelayNode> & { handlers: RelayHandlers } = { handlers: {} };
  const relay = new RelayServer({
    endpoint,
    onChannel: (channel) => {
      channel.handlers = node.handlers;
      channels.push(channel);
    },
    onRefused: (reason) => refused.push(reason),
  });
  const http = tls ? createHttpsServer(tls, (_req, res) => res.writeHead(404).end()) : createServer((_req, res) => res.writeHead(404).end());
  http.on('upgrade', (req, socket, head) => {
    if (!relay.handleUpgrade(req, socket, head)) socket.destroy();
  });
  const bound = await listen(http, port);
  const close = async (): Promise<void> => {
    relay.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await endpoint.close();
  };
  Object.assign(node, { endpoint, relay, http, url: `${tls ? 'wss' : 'ws'}://127.0.0.1:${bound}`, port: bound, channels, refused, drops, close });
  cleanups.push(close);
  return node as RelayNode;
}

export const ring = (): RelayCredentials => keyRingRelayCredentials(fixedKeyRing(buildKeyRing(newKeyDocument(Math.floor(Date.now() / 1000)), Math.floor(Date.now() / 1000), 'test')));

export function startLink(options: Omit<RelayLinkOptions, 'handlers'> & { handlers?: RelayHandlers }): {
  link: RelayLink; ups: ReturnType<typeof inbox<RelayChannel>>; downs: ReturnType<typeof inbox<RelayDownReason>>;
  retries: ReturnType<typeof inbox<{ attempt: number; delayMs: number; reason: RelayDownReason }>>;
} {
  const ups = inbox<RelayChannel>();
  const downs = inbox<RelayDownReason>();
  const retries = inbox<{ attempt: number; delayMs: number; reason: RelayDownReason }>();
  const l = new RelayLink({
    handlers: {}, ...options,
    onUp: (c) => ups.push(c), onDown: (r) => downs.push(r), onRetry: (i) => retries.push({ ...i }),
  });
  cleanups.push(() => l.close());
  return { link: l, ups, downs, retries };
}

export const STREAM = { project_id: 'prj_a', room_id: 'town-hall', stream_id: 1 } as const;

/** Timers as in production, except reconnections, which never fire. */
export const noReconnect: SetTimer = (fn, ms, purpose) => (purpose === 'reconnect' ? () => undefined : realTimer(fn, ms, purpose));
