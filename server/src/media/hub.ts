import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { isCutOff, ProjectCutoffs } from '../core/project-cutoff.ts';
import type { BusEvent, Clock, EventBus, ProjectCutoffRecord, Store } from '../ports.ts';
import type { GrantKeys, MediaGrant } from './grant-check.ts';
import { MAX_CLIENT_MESSAGE_BYTES, MEDIA_PATH, REPLAY_WINDOW, type MediaLimits } from '@rtc/protocol';
import { HANDSHAKE_TIMEOUT_MS, IDLE_SWEEP_INTERVAL_MS, IDLE_TIMEOUT_MS } from './limits.ts';
import { RevocationIndex } from './revocation-index.ts';
import { Room } from './room.ts';
import { Session, type SessionHost } from './session.ts';

export interface MediaHubOptions {
  readonly keys: GrantKeys;
  readonly store: Pick<Store, 'isRevoked' | 'listRevocations' | 'projectCutoff' | 'listProjectCutoffs'>;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Reads revocations from the store this often while sessions are open, for a bus that does not
   * reach the processes that revoke (PostgreSQL without Redis). Undefined: the bus is enough.
   */
  readonly storePollMs?: number | undefined;
  /**
   * Told, for each revocation or archive that closed sessions here, the seconds from its arrival
   * (bus event or store read) to the close of those sessions (docs/operations/metrics.md).
   */
  readonly onRevocationClose?: ((seconds: number) => void) | undefined;
}

const REVOCATION_PURGE_INTERVAL_MS = 60_000;

/**
 * The media server's state: rooms keyed by (project, room id), every open session, and the
 * revocation index and archive cut-offs fed by the event bus and by the persisted lists loaded at start.
 */
export class MediaHub implements SessionHost {
  readonly keys: GrantKeys;
  readonly logger: Logger;
  readonly revocations = new RevocationIndex<Session>();
  private readonly cutoffs = new ProjectCutoffs();
  /** Plain counts the forwarding path adds to; the metrics read them at each scrape. */
  readonly stats = { framesForwarded: 0, framesDropped: 0 };
  /** Sent to clients in `joined`. */
  readonly limits: MediaLimits = {
    max_message_bytes: MAX_CLIENT_MESSAGE_BYTES,
    replay_window: REPLAY_WINDOW,
    handshake_timeout_ms: HANDSHAKE_TIMEOUT_MS,
    idle_timeout_ms: IDLE_TIMEOUT_MS,
  };
  private readonly store: MediaHubOptions['store'];
  private readonly clock: Clock;
  private readonly rooms = new Map<string, Room>();
  private readonly sessions = new Set<Session>();
  private readonly wss: WebSocketServer;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeResync: () => void;
  private readonly timers: NodeJS.Timeout[] = [];
  private reloading: Promise<void> | undefined;
  private readonly onRevocationClose: ((seconds: number) => void) | undefined;

  private constructor(options: MediaHubOptions) {
    this.keys = options.keys;
    this.logger = options.logger;
    this.store = options.store;
    this.clock = options.clock;
    this.onRevocationClose = options.onRevocationClose;
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_CLIENT_MESSAGE_BYTES,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.unsubscribe = options.bus.subscribe((event) => this.onEvent(event));
    this.unsubscribeResync = options.bus.onResync(() => {
      this.reloadFromStore().catch((err: unknown) => this.logger.warn({ err }, 'media: reading revocations after a bus outage failed'));
    });
  }

  /** Subscribes to revocations and archives, then loads the persisted ones (so none falls between the two). */
  static async create(options: MediaHubOptions): Promise<MediaHub> {
    const hub = new MediaHub(options);
    try {
      await hub.reloadFromStore();
    } catch (err) {
      hub.unsubscribe();
      hub.unsubscribeResync();
      throw err;
    }
    if (options.storePollMs !== undefined) {
      const poll = setInterval(() => {
        if (hub.sessions.size === 0 || hub.reloading) return;
        hub.reloadFromStore().catch((err: unknown) => hub.logger.warn({ err }, 'media: reading revocations failed'));
      }, options.storePollMs);
      poll.unref();
      hub.timers.push(poll);
    }
    const sweep = setInterval(() => {
      for (const session of hub.sessions) if (session.isJoined) session.sweep(Math.ceil(IDLE_TIMEOUT_MS / IDLE_SWEEP_INTERVAL_MS));
    }, IDLE_SWEEP_INTERVAL_MS);
    const purge = setInterval(() => {
      hub.revocations.purge(hub.nowSec());
      hub.cutoffs.purge(hub.nowSec());
    }, REVOCATION_PURGE_INTERVAL_MS);
    sweep.unref();
    purge.unref();
    hub.timers.push(sweep, purge);
    return hub;
  }

  nowMs(): number {
    return this.clock.nowMs();
  }

  private nowSec(): number {
    return Math.floor(this.clock.nowMs() / 1000);
  }

  /** Upgrades a request on the media path; anything else gets a plain HTTP error. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (pathOf(req.url) !== MEDIA_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const session = new Session(this, ws, socket);
      this.sessions.add(session);
    });
  }

  /**
   * Reads the persisted revocations and archive cut-offs and applies them as if they came over the
   * bus: at start, after the bus may have missed events, and on each poll. One read at a time: a
   * call made during a read waits for it and then reads again (the read in flight may predate what
   * the caller must see).
   */
  private reloadFromStore(): Promise<void> {
    const read = async (): Promise<void> => {
      const now = this.nowSec();
      const [revocations, cutoffs] = await Promise.all([this.store.listRevocations(now), this.store.listProjectCutoffs(now)]);
      for (const r of revocations) this.revoke(r.grantId, r.expiresAt);
      for (const c of cutoffs) this.cutOff(c);
    };
    const next = (this.reloading ?? Promise.resolve()).catch(() => {}).then(read);
    const current = next.finally(() => {
      if (this.reloading === current) this.reloading = undefined;
    });
    this.reloading = current;
    return current;
  }

  /**
   * Revoked or cut off by its project's archive in memory (from the bus or the lists loaded at
   * start), else asks the store.
   */
  async isRefused(grant: MediaGrant): Promise<boolean> {
    if (this.isRefusedInMemory(grant)) return true;
    const [revoked, cutoff] = await Promise.all([this.store.isRevoked(grant.grantId), this.store.projectCutoff(grant.projectId)]);
    return revoked || isCutOff(cutoff?.cutAt, grant.issuedAt) || this.isRefusedInMemory(grant);
  }

  isRefusedInMemory(grant: MediaGrant): boolean {
    return this.revocations.isRevoked(grant.grantId) || this.cutoffs.covers(grant.projectId, grant.issuedAt);
  }

  roomFor(projectId: string, roomId: string): Room {
    // the project is part of the key: the same room id in two projects is two rooms
    const key = `${projectId}\u0000${roomId}`;
    let room = this.rooms.get(key);
    if (!room) {
      room = new Room(key, () => this.clock.nowMs());
      this.rooms.set(key, room);
    }
    return room;
  }

  dropIfEmpty(room: Room): void {
    if (room.members.size === 0 && this.rooms.get(room.key) === room) this.rooms.delete(room.key);
  }

  joined(session: Session, grant: MediaGrant): void {
    this.logger.debug({ projectId: grant.projectId, roomId: grant.roomId, userId: grant.userId, participantId: session.participantId },
      'media: participant joined');
  }

  left(session: Session, room: Room): void {
    this.dropIfEmpty(room);
    this.logger.debug({ participantId: session.participantId }, 'media: participant left');
  }

  forget(session: Session): void {
    this.sessions.delete(session);
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  get roomCount(): number {
    return this.rooms.size;
  }

  private onEvent(event: BusEvent): void {
    if (event.type === 'grant.revoked') this.revoke(event.grantId, event.expiresAt);
    else if (event.type === 'project.archived') this.cutOff(event);
  }

  private revoke(grantId: string, expiresAt: number): void {
    const sessions = this.revocations.revoke(grantId, expiresAt);
    if (sessions.length === 0) return;
    const arrived = performance.now();
    for (const session of sessions) session.close('revoked');
    this.onRevocationClose?.((performance.now() - arrived) / 1000);
  }

  /** An archive ends the project's sessions like a revocation of their grants (docs/decisions.md, "Archiving ends live sessions"). */
  private cutOff(cutoff: ProjectCutoffRecord): void {
    if (!this.cutoffs.add({ projectId: cutoff.projectId, cutAt: cutoff.cutAt, expiresAt: cutoff.expiresAt })) return;
    const arrived = performance.now();
    let closed = 0;
    for (const session of [...this.sessions]) {
      if (!session.isCutOffBy(cutoff.projectId, cutoff.cutAt)) continue;
      session.close('revoked');
      closed += 1;
    }
    if (closed > 0) this.onRevocationClose?.((performance.now() - arrived) / 1000);
  }

  /** Closes every session with 1001 and stops listening to the bus. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.unsubscribeResync();
    for (const timer of this.timers) clearInterval(timer);
    for (const session of [...this.sessions]) session.close('going_away');
  }
}

function pathOf(url: string | undefined): string {
  const q = (url ?? '').indexOf('?');
  return q === -1 ? (url ?? '') : (url ?? '').slice(0, q);
}
