import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { MEDIA_NODE_HEARTBEAT_MS, MEDIA_NODE_STALE_SECONDS } from '../rooms/presence.ts';
import { GrantGuard, type GuardStore } from '../grant-guard/guard.ts';
import { GrantHolders } from '../grant-guard/grant-holders.ts';
import type { BusEvent, Clock, EventBus, ProjectEventInput, ProjectEvents } from '../core/ports.ts';
import type { ProjectCutoffRecord } from '../customers/store.ts';
import type { LiveParticipantRecord, LiveStream, RoomCutoffRecord } from '../rooms/store.ts';
import type { LiveParticipantStore, MediaNodeStore } from '../rooms/store.ts';
import type { GrantKeys, MediaGrant } from './grant-check.ts';
import { MAX_CLIENT_MESSAGE_BYTES, MEDIA_PATH, REPLAY_WINDOW, type MediaLimits } from '@rtc/protocol';
import { HANDSHAKE_TIMEOUT_MS, IDLE_SWEEP_INTERVAL_MS, IDLE_TIMEOUT_MS } from './limits.ts';
import { Room, type PublicationListener, type Stream } from './room.ts';
import { Session, type SessionHost } from './session.ts';
import type { RtcOptions } from './webrtc/options.ts';

export interface MediaHubOptions {
  readonly keys: GrantKeys;
  readonly store: GuardStore & Pick<LiveParticipantStore, 'upsertLiveParticipant' | 'deleteLiveParticipant' | 'setLiveStreams'>
    & MediaNodeStore;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Reads revocations from the store this often while sessions are open, for a bus that does not
   * reach the processes that revoke (PostgreSQL without Redis). Undefined: the bus is enough.
   */
  readonly storePollMs?: number | undefined;
  /** Where participant and room events are recorded for webhooks. */
  readonly events?: ProjectEvents | undefined;
  /**
   * Whether events name this node in `media_node`: only where there are several (a cluster's media
   * node directory); on a single node it is null (docs/reference/webhooks.md).
   */
  readonly nodeInEvents?: boolean | undefined;
  /**
   * Told, for each revocation or archive that closed sessions here, the seconds from its arrival
   * (bus event or store read) to the close of those sessions (docs/operations/metrics.md).
   */
  readonly onRevocationClose?: ((seconds: number) => void) | undefined;
  /** WebRTC media (docs/protocol/media.md, "WebRTC media"); undefined: only WebSocket frames. */
  readonly rtc?: RtcOptions | undefined;
}

/**
 * The media server's state: rooms keyed by (project, room id), every open session, the sessions
 * that use each grant, and the grant guard that ends them on a revocation or an archive.
 */
export class MediaHub implements SessionHost {
  readonly keys: GrantKeys;
  readonly logger: Logger;
  readonly grantHolders = new GrantHolders<Session>();
  private readonly guard: GrantGuard;
  /** Plain counts the forwarding path adds to; the metrics read them at each scrape. */
  readonly stats = { framesForwarded: 0, framesDropped: 0, rtpForwarded: 0 };
  readonly rtc: RtcOptions | undefined;
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
  private readonly timers: NodeJS.Timeout[] = [];
  /** Set by `startPresence`; undefined: no presence is kept. */
  private nodeId: string | undefined;
  private readonly events: ProjectEvents | undefined;
  private readonly nodeInEvents: boolean;
  /** Joined sessions by participant id: the room service API names them so. */
  private readonly participants = new Map<string, Session>();
  /** The store writes of each session's presence, in order (a leave never overtakes its join). */
  private readonly presenceWrites = new WeakMap<Session, Promise<void>>();
  private readonly pendingWrites = new Set<Promise<void>>();
  private readonly onRevocationClose: ((seconds: number) => void) | undefined;
  /** What was last written of each session's publications (JSON), so that the heartbeat writes only a change. */
  private readonly streamsWritten = new WeakMap<Session, string>();
  /** Rooms tell the hub what their members publish: recorded in the store and as webhook events. */
  private readonly publications: PublicationListener = {
    published: (stream) => this.publicationsChanged(stream, 'track.published'),
    unpublished: (stream) => this.publicationsChanged(stream, 'track.unpublished'),
    changed: (stream) => this.publicationsChanged(stream),
  };

  private constructor(options: MediaHubOptions) {
    this.keys = options.keys;
    this.rtc = options.rtc;
    this.events = options.events;
    this.nodeInEvents = options.nodeInEvents ?? false;
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
    this.guard = GrantGuard.watch({
      store: options.store, bus: options.bus, clock: options.clock,
      onRevoked: (grantId) => this.revoke(grantId),
      onCutOff: (cutoff) => this.cutOff(cutoff),
      onRoomCutOff: (cutoff) => this.cutOffRoom(cutoff),
      pollMs: options.storePollMs,
      active: () => this.sessions.size > 0,
      onReadError: (err) => this.logger.warn({ err }, 'media: reading revocations failed'),
    });
  }

  /** Subscribes to revocations and archives, then loads the persisted ones (so none falls between the two). */
  static async create(options: MediaHubOptions): Promise<MediaHub> {
    const hub = new MediaHub(options);
    try {
      await hub.guard.load();
    } catch (err) {
      hub.unsubscribe();
      hub.guard.close();
      throw err;
    }
    const sweep = setInterval(() => {
      for (const session of hub.sessions) if (session.isJoined) session.sweep(Math.ceil(IDLE_TIMEOUT_MS / IDLE_SWEEP_INTERVAL_MS));
    }, IDLE_SWEEP_INTERVAL_MS);
    sweep.unref();
    hub.timers.push(sweep);
    return hub;
  }

  /**
   * Keeps the presence of this node's participants in the store under `nodeId` (`host:port`, as
   * the node announces itself; docs/reference/room-api.md, "Presence"), from before the first join:
   * clears what an earlier run of the node left (a crash) and tells the store it is alive.
   */
  async startPresence(nodeId: string): Promise<void> {
    await this.store.clearMediaNode(nodeId);
    await this.store.heartbeatMediaNode(nodeId, this.nowSec());
    this.nodeId = nodeId;
    const heartbeat = setInterval(() => {
      const now = this.nowSec();
      // the layers' sizes and rates, as measured now, for the room service API
      for (const session of this.participants.values()) if (session.isJoined) this.writeStreams(session, false);
      this.store.heartbeatMediaNode(nodeId, now)
        .then(() => this.store.purgeMediaNodes(now - MEDIA_NODE_STALE_SECONDS))
        .catch((err: unknown) => this.logger.warn({ err }, 'media: recording this node as alive failed'));
    }, MEDIA_NODE_HEARTBEAT_MS);
    heartbeat.unref();
    this.timers.push(heartbeat);
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

  /** Revoked, or cut off by its project's archive or a removal, in memory or in the store (grant-guard/guard.ts). */
  isRefused(grant: MediaGrant): Promise<boolean> {
    return this.guard.isRefused(grant);
  }

  isRefusedInMemory(grant: MediaGrant): boolean {
    return this.guard.isRefusedInMemory(grant);
  }

  roomFor(projectId: string, roomId: string): Room {
    // the project is part of the key: the same room id in two projects is two rooms
    const key = `${projectId}\u0000${roomId}`;
    let room = this.rooms.get(key);
    if (!room) {
      room = new Room(key, () => this.clock.nowMs(), this.publications);
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
    this.participants.set(session.participantId, session);
    const room = this.roomFor(grant.projectId, grant.roomId);
    const record = this.presenceOf(session, room);
    if (record) this.streamsWritten.set(session, JSON.stringify(record.streams));
    const firstOfRoom = room.members.size === 1;
    this.writePresence(session, async (store) => {
      if (record) await this.quietly(session, store.upsertLiveParticipant(record));
      if (firstOfRoom) await this.record(session, 'room.started');
      await this.record(session, 'participant.joined');
    });
  }

  renewed(session: Session): void {
    const room = this.roomFor(session.projectId, session.roomId);
    const record = this.presenceOf(session, room);
    if (record) this.writePresence(session, (store) => store.upsertLiveParticipant(record));
  }

  left(session: Session, room: Room): void {
    this.dropIfEmpty(room);
    this.logger.debug({ participantId: session.participantId }, 'media: participant left');
    if (this.participants.get(session.participantId) === session) this.participants.delete(session.participantId);
    const lastOfRoom = room.members.size === 0;
    const reason = session.closeReason;
    this.writePresence(session, async (store) => {
      if (this.nodeId !== undefined) await this.quietly(session, store.deleteLiveParticipant(session.participantId));
      await this.record(session, 'participant.left', { reason });
      if (lastOfRoom) await this.record(session, 'room.finished');
    });
  }

  /** The store row of a joined session (docs/reference/room-api.md, "Presence"). */
  private presenceOf(session: Session, room: Room): LiveParticipantRecord | undefined {
    const grant = session.currentGrant;
    if (this.nodeId === undefined || !grant) return undefined;
    return {
      participantId: session.participantId,
      projectId: grant.projectId,
      roomId: grant.roomId,
      userId: grant.userId,
      role: grant.role,
      publishStreams: grant.role === 'audience' ? [] : [...grant.pub],
      subscribeStreams: [...grant.subs],
      subscribeRoom: grant.subRoom,
      joinedAt: session.joinedAtSec,
      roomStartedAt: Math.floor(room.startedAtMs / 1000),
      mediaNode: this.nodeId,
      grants: [...session.grants.used].map(([grantId, expiresAt]) => ({ grantId, expiresAt })),
      streams: this.streamsOf(session),
    };
  }

  /** What a session publishes, as the room service API shows it (docs/reference/room-api.md, "Published streams"). */
  private streamsOf(session: Session): LiveStream[] {
    const now = this.clock.nowMs();
    return [...session.published.values()].map((s) => ({
      streamId: s.id, kind: s.kind, source: s.source, muted: s.muted,
      layers: s.kind !== 'video' || !s.layers ? [] : s.layers.measured(now).map((l, i) => ({
        rid: s.rids[i] ?? null, width: l.width || null, height: l.height || null, bitrate: l.bps || null,
      })),
    }));
  }

  /** A stream was published, unpublished, muted or unmuted, or its layers became known: recorded, with its webhook event. */
  private publicationsChanged(stream: Stream, event?: 'track.published' | 'track.unpublished'): void {
    const session = this.participants.get(stream.publisher.participantId);
    if (!session) return;
    this.writeStreams(session, true);
    if (event) {
      this.writePresence(session, () => this.record(session, event, {
        stream_id: stream.id, kind: stream.kind, source: stream.source,
      }));
    }
  }

  /** Writes a session's publications to the store: always when `force`, else only when they changed since the last write. */
  private writeStreams(session: Session, force: boolean): void {
    if (this.nodeId === undefined) return;
    const streams = this.streamsOf(session);
    const json = JSON.stringify(streams);
    if (!force && this.streamsWritten.get(session) === json) return;
    this.streamsWritten.set(session, json);
    this.writePresence(session, (store) => store.setLiveStreams(session.participantId, streams));
  }

  /** Runs a session's presence writes one after the other; a failure is logged, never thrown into a join or leave. */
  private writePresence(session: Session, write: (store: MediaHubOptions['store']) => Promise<void>): void {
    const previous = this.presenceWrites.get(session) ?? Promise.resolve();
    const next = previous.then(() => this.quietly(session, write(this.store)));
    this.presenceWrites.set(session, next);
    this.pendingWrites.add(next);
    void next.finally(() => this.pendingWrites.delete(next));
  }

  private async quietly(session: Session, write: Promise<void>): Promise<void> {
    try {
      await write;
    } catch (err) {
      this.logger.warn({ err, participantId: session.participantId }, 'media: recording the participant\'s presence failed');
    }
  }

  /** Records a webhook event of a session (docs/reference/webhooks.md); ids only, never a secret. */
  private async record(session: Session, type: ProjectEventInput['type'], extra: Record<string, string | number> = {}): Promise<void> {
    if (!this.events) return;
    const grant = session.currentGrant;
    if (!grant) return;
    const room = type === 'room.started' || type === 'room.finished';
    try {
      await this.events.record({
        projectId: grant.projectId,
        type,
        occurredAt: this.nowSec(),
        data: {
          room_id: grant.roomId,
          ...(!room && { participant_id: session.participantId, user_id: grant.userId, role: grant.role }),
          media_node: this.nodeInEvents ? this.nodeId ?? null : null,
          ...extra,
        },
      });
    } catch (err) {
      this.logger.warn({ err, type }, 'media: recording a project event failed');
    }
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

  /** Permission changes and mutes of the room service API; revocations and archives reach the guard. */
  private onEvent(event: BusEvent): void {
    if (event.type === 'stream.muted') {
      const session = this.participants.get(event.participantId);
      if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId) return;
      session.setStreamMuted(event.streamId, event.muted);
      return;
    }
    if (event.type === 'participant.updated') {
      const session = this.participants.get(event.participantId);
      if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId) return;
      session.applyPermissions({ pub: new Set(event.publish), subs: new Set(event.subscribe), subRoom: event.subscribeRoom });
    }
  }

  private revoke(grantId: string): void {
    const sessions = this.grantHolders.of(grantId);
    if (sessions.length === 0) return;
    const arrived = performance.now();
    for (const session of sessions) session.close('revoked');
    this.onRevocationClose?.((performance.now() - arrived) / 1000);
  }

  /** An archive ends the project's sessions like a revocation of their grants (docs/decisions.md, "Archiving ends live sessions"). */
  private cutOff(cutoff: ProjectCutoffRecord): void {
    const arrived = performance.now();
    let closed = 0;
    for (const session of [...this.sessions]) {
      if (!session.isCutOffBy(cutoff.projectId, cutoff.cutAt)) continue;
      session.close('revoked');
      closed += 1;
    }
    if (closed > 0) this.onRevocationClose?.((performance.now() - arrived) / 1000);
  }

  /**
   * A removal ends the user's sessions in the room, a room's end every session of the room, like a
   * revocation of their grants (docs/reference/room-api.md, "What a removal stores").
   */
  private cutOffRoom(cutoff: RoomCutoffRecord): void {
    const arrived = performance.now();
    let closed = 0;
    for (const session of [...this.sessions]) {
      if (!session.isRoomCutOffBy(cutoff)) continue;
      session.close('revoked');
      closed += 1;
    }
    if (closed > 0) this.onRevocationClose?.((performance.now() - arrived) / 1000);
  }

  /** Closes every session with 1001 and stops listening to the bus. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.guard.close();
    for (const timer of this.timers) clearInterval(timer);
    for (const session of [...this.sessions]) session.close('going_away');
    if (this.nodeId !== undefined) {
      await Promise.all([...this.pendingWrites]);
      await this.store.clearMediaNode(this.nodeId).catch((err: unknown) => this.logger.warn({ err }, 'media: clearing this node\'s presence failed'));
    }
  }
}

function pathOf(url: string | undefined): string {
  const q = (url ?? '').indexOf('?');
  return q === -1 ? (url ?? '') : (url ?? '').slice(0, q);
}
