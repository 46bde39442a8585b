/**
 * App SDK clients in a few rooms of a cluster, each publishing a stream and receiving the others',
 * to see media flow again after a media node is killed or drained (docs/operations/scale-out.md,
 * "Media nodes"). Shared by test/e2e/media-failover.test.ts and bench/media-failover.bench.ts.
 */
import WebSocket from 'ws';
import { connect, type LocalStream, type MediaSession, type MediaSessionEvents, type MediaToken } from '../../sdk/app/src/index.ts';

export interface FailoverCallOptions {
  readonly rooms: readonly string[];
  readonly perRoom: number;
  /** A fresh token of `user` in `room` (the clients' `getToken`). */
  readonly issue: (room: string, user: string) => Promise<MediaToken>;
  /** Between two frames of each publisher (default 20, an audio packet's pace). */
  readonly frameIntervalMs?: number;
}

export interface FailoverClient {
  readonly room: string;
  readonly user: string;
  readonly session: MediaSession;
  readonly stream: LocalStream;
  /** Every `reconnecting` and `reconnected` event, in order. */
  readonly events: ({ type: 'reconnecting' } & MediaSessionEvents['reconnecting'] | { type: 'reconnected' } & MediaSessionEvents['reconnected'])[];
  /** Every loss of the connection: its close code and error, whether a reconnection followed. */
  readonly losses: string[];
}

const decoder = new TextDecoder();

/** A client still waiting, for a failure message: its state and node, losses, and its last attempts' errors. */
function describe(client: FailoverClient): string {
  const attempts = client.events.flatMap((e) => (e.type === 'reconnecting' ? [`${e.error.code}${e.moving ? ' moving' : ''}`] : [])).slice(-4);
  return `${client.user} (${client.session.state} on ${client.session.mediaNode}; losses: ${client.losses.join(', ') || 'none'}; last attempts after: ${attempts.join(', ') || 'none'})`;
}
const encoder = new TextEncoder();

/**
 * Clients publishing `user:sentAt` frames (sentAt: `performance.now()` in this process), the i-th
 * of each room on stream id i + 1 (a stream id is one publisher's in a room): `issue` grants them.
 */
export class FailoverCall {
  readonly clients: FailoverClient[];
  private readonly timer: ReturnType<typeof setInterval>;
  /**
   * Per client: the peers heard from, each with the send time of the newest frame received that
   * neither left nor reached the client through the node being left (`leaving`).
   */
  private readonly heard = new Map<FailoverClient, Map<string, number>>();
  private leaving = '';
  private readonly listeners = new Set<() => void>();

  private constructor(clients: FailoverClient[], frameIntervalMs: number) {
    this.clients = clients;
    this.timer = setInterval(() => {
      for (const client of clients) {
        if (client.session.state !== 'connected' || !client.stream.active) continue;
        client.stream.send(encoder.encode(`${client.user}:${performance.now()}:${client.session.mediaNode}`)).catch(() => false);
      }
    }, frameIntervalMs);
  }

  static async start(options: FailoverCallOptions): Promise<FailoverCall> {
    const clients: FailoverClient[] = [];
    const made = new FailoverCall(clients, options.frameIntervalMs ?? 20);
    try {
      for (const room of options.rooms) {
        for (let i = 0; i < options.perRoom; i++) {
          const user = `${room}-u${i}`;
          const getToken = (): Promise<MediaToken> => options.issue(room, user);
          const session = await connect({ token: await getToken(), getToken, WebSocket, secure: false });
          const events: FailoverClient['events'] = [];
          const losses: string[] = [];
          session.on('disconnected', (d) => losses.push(`${d.code} ${d.error.code}${d.willReconnect ? '' : ' (ended)'}`));
          session.on('reconnecting', (e) => events.push({ type: 'reconnecting', ...e }));
          session.on('reconnected', (e) => events.push({ type: 'reconnected', ...e }));
          const stream = await session.publish(i + 1, 'audio');
          const client = { room, user, session, stream, events, losses };
          clients.push(client);
          const heard = new Map<string, number>();
          made.heard.set(client, heard);
          session.on('frame', (frame) => {
            const [, sentAt, ...node] = decoder.decode(frame.payload).split(':');
            // a frame still sent or received on the node being left is not media flowing again
            if (node.join(':') === made.leaving || session.mediaNode === made.leaving) return;
            heard.set(frame.userId, Math.max(heard.get(frame.userId) ?? 0, Number(sentAt)));
            for (const listener of made.listeners) listener();
          });
        }
      }
    } catch (err) {
      await made.close();
      throw err;
    }
    return made;
  }

  /** The peers of a client: the others of its room. */
  peersOf(client: FailoverClient): FailoverClient[] {
    return this.clients.filter((c) => c.room === client.room && c !== client);
  }

  /** Whether `client` received, from every peer, a frame sent after `since` (performance.now()). */
  private hears(client: FailoverClient, since: number): boolean {
    const heard = this.heard.get(client)!;
    return this.peersOf(client).every((peer) => (heard.get(peer.user) ?? 0) > since);
  }

  /**
   * For each client (in `clients` order): milliseconds from `since` (performance.now()) until it
   * received, from every other client of its room, a frame sent after `since`, with neither of them
   * on the node `leaving` (`host:port`; '' for none). Rejects after `timeoutMs` naming the clients
   * still waiting.
   */
  flowingAfter(since: number, leaving: string, timeoutMs: number): Promise<number[]> {
    this.leaving = leaving;
    const times = new Map<FailoverClient, number>();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const now = performance.now();
        for (const client of this.clients) if (!times.has(client) && this.hears(client, since)) times.set(client, now - since);
        if (times.size < this.clients.length) return;
        done();
        resolve(this.clients.map((c) => times.get(c)!));
      };
      const timer = setTimeout(() => {
        done();
        const waiting = this.clients.filter((c) => !times.has(c));
        reject(new Error(`media did not flow again within ${timeoutMs} ms for ${waiting.map(describe).join(', ')}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** The media nodes (`host:port`) the clients are on now. */
  nodes(): Set<string> {
    return new Set(this.clients.map((c) => c.session.mediaNode));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.listeners.clear();
    await Promise.allSettled(this.clients.map((c) => c.session.close()));
  }
}
