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
import type { LiveParticipantStore, MediaNodeStore, RoomSettingsStore } from '../rooms/store.ts';
import type { MediaSessionStore } from '../sessions/store.ts';
import { usageKindOf } from '../sessions/usage-kind.ts';
import { PRICE_LIST } from '../billing/catalog/price-list.ts';
import type { GrantKeys, MediaGrant } from './grant-check.ts';
import { MAX_CLIENT_MESSAGE_BYTES, MEDIA_PATH, REPLAY_WINDOW, type MediaLimits, type ParticipantLeftReason } from '@rtc/protocol';
import { HANDSHAKE_TIMEOUT_MS, IDLE_SWEEP_INTERVAL_MS, IDLE_TIMEOUT_MS } from './limits.ts';
import { Room, roomKey, type PublicationListener, type RoomSettings, type Stream } from './room.ts';
import { Session, type SessionHost } from './session.ts';
import { MediaStats } from '../metrics/media-stats.ts';
import type { LiveCounts } from '../metrics/metrics.ts';
import type { RtcOptions } from './webrtc/options.ts';

export interface MediaHubOptions {
  readonly keys: GrantKeys;
  readonly store: GuardStore & Pick<LiveParticipantStore, 'upsertLiveParticipant' | 'deleteLiveParticipant' | 'setLiveStreams' | 'setLiveQuality'> & MediaNodeStore
    & Pick<RoomSettingsStore, 'getRoomRecord' | 'setRoomEmptiedAt' | 'purgeRoomRecords'>
    & Pick<MediaSessionStore, 'openMediaSession' | 'closeMediaSession'>;
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
  readonly stats = new MediaStats();
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
  /** The store writes of each room's occupancy and events, in order (an emptying never overtakes the join before it). */
  private readonly roomWrites = new WeakMap<Room, Promise<void>>();
  private readonly pendingWrites = new Set<Promise<void>>();
  private readonly onRevocationClose: ((seconds: number) => void) | undefined;
  /** What was last written of each session's publications (JSON), so that the heartbeat writes only a change. */
  private readonly streamsWritten = new WeakMap<Session, string>();
  /** What was last written of each session's quality (JSON, without its time), likewise. */
  private readonly qualityWritten = new WeakMap<Session, string>();
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
      for (const session of this.participants.values()) {
        if (!session.isJoined) continue;
        this.writeStreams(session, false);
        this.writeQuality(session);
      }
      this.store.heartbeatMediaNode(nodeId, now)
        .then(() => this.store.purgeMediaNodes(now - MEDIA_NODE_STALE_SECONDS))
        .then(() => this.store.purgeRoomRecords(now))
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

  roomFor(projectId: string, roomId: string, settings?: RoomSettings): Room {
    const key = roomKey(projectId, roomId);
    let room = this.rooms.get(key);
    if (!room) {
      room = new Room(projectId, roomId, () => this.clock.nowMs(), settings, this.publications);
      this.rooms.set(key, room);
    }
    return room;
  }

  async roomSettings(projectId: string, roomId: string): Promise<RoomSettings | undefined> {
    const open = this.rooms.get(roomKey(projectId, roomId));
    // a kept room whose empty_timeout ran out (the store says so already) finishes before anyone joins it
    if (open?.emptyTimer !== undefined && this.clock.nowMs() >= open.expiresAtMs) {
      clearTimeout(open.emptyTimer);
      this.finishRoom(open);
    }
    // an open room's settings are current: the room service API's changes reach it over the bus
    if (this.rooms.has(roomKey(projectId, roomId))) return undefined;
    try {
      const record = await this.store.getRoomRecord(projectId, roomId, this.nowSec());
      return record && { metadata: record.metadata, maxParticipants: record.maxParticipants, emptyTimeout: record.emptyTimeout };
    } catch (err) {
      // the join goes on without them (no metadata, the node's own bound) rather than fail on a store hiccup
      this.logger.warn({ err }, 'media: reading a room\'s settings failed');
      return undefined;
    }
  }

  dropIfEmpty(room: Room): void {
    if (room.members.size === 0 && room.emptyTimer === undefined && this.rooms.get(room.key) === room) this.rooms.delete(room.key);
  }

  joined(session: Session, grant: MediaGrant): void {
    this.logger.debug({ projectId: grant.projectId, roomId: grant.roomId, userId: grant.userId, participantId: session.participantId },
      'media: participant joined');
    this.participants.set(session.participantId, session);
    const room = this.roomFor(grant.projectId, grant.roomId);
    const record = this.presenceOf(session, room);
    if (record) this.streamsWritten.set(session, JSON.stringify(record.streams));
    const firstOfRoom = !room.started;
    room.started = true;
    clearTimeout(room.emptyTimer);
    room.emptyTimer = undefined;
    if (room.members.size === 1) this.writeRoom(room, (store) => store.setRoomEmptiedAt(room.projectId, room.roomId, null, this.nowSec()));
    const count = room.members.size;
    const history = this.historyOf(session, grant);
    this.writePresence(session, async (store) => {
      if (record) await this.quietly(session, store.upsertLiveParticipant(record));
      await this.quietly(session, store.openMediaSession(history));
      if (firstOfRoom) await this.record(session, 'room.started', { num_participants: count });
      await this.record(session, 'participant.joined', { num_participants: count });
    });
  }

  renewed(session: Session): void {
    const room = this.roomFor(session.projectId, session.roomId);
    const record = this.presenceOf(session, room);
    if (record) this.writePresence(session, (store) => store.upsertLiveParticipant(record));
  }

  left(session: Session, room: Room): void {
    const lastOfRoom = room.members.size === 0 && room.emptyTimer === undefined && this.rooms.get(room.key) === room;
    this.logger.debug({ participantId: session.participantId }, 'media: participant left');
    if (this.participants.get(session.participantId) === session) this.participants.delete(session.participantId);
    // a room with an empty_timeout is kept that long (docs/reference/room-api.md, "Room settings"): it
    // finishes then, unless somebody joins meanwhile
    const keep = lastOfRoom && room.settings.emptyTimeout > 0;
    if (lastOfRoom) {
      const emptiedAt = this.nowSec();
      this.writeRoom(room, (store) => store.setRoomEmptiedAt(room.projectId, room.roomId, emptiedAt, emptiedAt));
      if (keep) {
        // when the store's record expires: from the whole second the room emptied at
        room.expiresAtMs = (emptiedAt + room.settings.emptyTimeout) * 1000;
        room.emptyTimer = setTimeout(() => this.finishRoom(room), Math.max(0, room.expiresAtMs - this.clock.nowMs()));
        room.emptyTimer.unref();
      } else {
        this.rooms.delete(room.key);
      }
    }
    // the count after the leave, on this node (docs/reference/webhooks.md)
    const count = room.members.size;
    const reason = session.leftReason;
    const leftAt = this.nowSec();
    const usage = { usageKind: usageKindOf(PRICE_LIST, session.usage.videoPixels), relayed: session.usage.relayed };
    this.writePresence(session, async (store) => {
      if (this.nodeId !== undefined) await this.quietly(session, store.deleteLiveParticipant(session.participantId));
      await this.quietly(session, store.closeMediaSession(session.participantId, leftAt, reason, usage));
      await this.record(session, 'participant.left', { reason, num_participants: count });
      if (lastOfRoom && !keep) await this.record(session, 'room.finished', { num_participants: 0 });
    });
  }

  /** The session history's row of a session that joined (docs/console.md, "Session history"). */
  private historyOf(session: Session, grant: MediaGrant): Parameters<MediaSessionStore['openMediaSession']>[0] {
    return {
      participantId: session.participantId, projectId: grant.projectId, roomId: grant.roomId, userId: grant.userId,
      role: grant.role, mediaNode: this.nodeId ?? null, joinedAt: session.joinedAtSec,
    };
  }

  /** The empty_timeout of a room nobody joined again ran out: it finishes. */
  private finishRoom(room: Room): void {
    room.emptyTimer = undefined;
    if (room.members.size > 0 || this.rooms.get(room.key) !== room) return;
    this.rooms.delete(room.key);
    this.logger.debug({ projectId: room.projectId, roomId: room.roomId }, 'media: room finished after its empty timeout');
    this.writeRoom(room, () => this.recordEvent(room.projectId, 'room.finished', { room_id: room.roomId, num_participants: 0 }));
  }

  /** Runs a room's store writes one after the other; a failure is logged. */
  private writeRoom(room: Room, write: (store: MediaHubOptions['store']) => Promise<void>): void {
    const previous = this.roomWrites.get(room) ?? Promise.resolve();
    const next = previous.then(() => write(this.store)).catch((err: unknown) => {
      this.logger.warn({ err, roomId: room.roomId }, 'media: recording the room\'s occupancy failed');
    });
    this.roomWrites.set(room, next);
    this.pendingWrites.add(next);
    void next.finally(() => this.pendingWrites.delete(next));
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
      metadata: session.metadata,
      attributes: { ...session.attributes },
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

  /**
   * Writes what a session's media quality was over the last heartbeat period, when it changed since the
   * last write (docs/reference/room-api.md, "Quality"): its figures are rounded, so noise does not.
   */
  private writeQuality(session: Session): void {
    const quality = session.sampleQuality();
    if (this.nodeId === undefined || !quality) return;
    const json = JSON.stringify({ ...quality, updatedAt: 0 });
    if (this.qualityWritten.get(session) === json) return;
    this.qualityWritten.set(session, json);
    this.writePresence(session, (store) => store.setLiveQuality(session.participantId, quality));
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
    await this.recordEvent(grant.projectId, type, {
      room_id: grant.roomId,
      ...(!room && { participant_id: session.participantId, user_id: grant.userId, role: grant.role }),
      ...extra,
    });
  }

  private async recordEvent(projectId: string, type: ProjectEventInput['type'], data: Record<string, string | number>): Promise<void> {
    if (!this.events) return;
    try {
      await this.events.record({
        projectId, type, occurredAt: this.nowSec(),
        data: { ...data, media_node: this.nodeInEvents ? this.nodeId ?? null : null },
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

  /**
   * Joined participants, those that publish at least one stream, those that receive at least one,
   * and published streams, over every room of this node: read at each scrape, never on the media path.
   */
  liveCounts(): LiveCounts {
    let participants = 0;
    let publishers = 0;
    let streams = 0;
    const subscribers = new Set<unknown>();
    for (const room of this.rooms.values()) {
      participants += room.members.size;
      for (const member of room.members.values()) if (member.published.size > 0) publishers += 1;
      streams += room.streams.size;
      for (const stream of room.streams.values()) for (const member of stream.subscribers) subscribers.add(member);
    }
    return { participants, publishers, subscribers: subscribers.size, streams };
  }

  /** Changes of the room service API (permissions, mutes, metadata, settings, data); revocations and archives reach the guard. */
  private onEvent(event: BusEvent): void {
    switch (event.type) {
      case 'stream.muted': {
        const session = this.participants.get(event.participantId);
        if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId) return;
        session.setStreamMuted(event.streamId, event.muted);
        return;
      }
      case 'participant.updated': {
        const session = this.participants.get(event.participantId);
        if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId) return;
        session.applyPermissions({ pub: new Set(event.publish), subs: new Set(event.subscribe), subRoom: event.subscribeRoom });
        return;
      }
      case 'participant.metadata': {
        const session = this.participants.get(event.participantId);
        if (!session || session.projectId !== event.projectId || session.roomId !== event.roomId || !session.isJoined) return;
        session.metadata = event.metadata;
        session.attributes = { ...event.attributes };
        this.rooms.get(roomKey(event.projectId, event.roomId))?.broadcast({
          type: 'participant_metadata', participant_id: session.participantId, user_id: session.userId,
          metadata: session.metadata, attributes: { ...session.attributes },
        });
        return;
      }
      case 'room.updated': {
        const room = this.rooms.get(roomKey(event.projectId, event.roomId));
        if (!room) return;
        const changed = room.settings.metadata !== event.metadata;
        room.settings = { metadata: event.metadata, maxParticipants: event.maxParticipants, emptyTimeout: event.emptyTimeout };
        if (changed) room.broadcast({ type: 'room_metadata', metadata: event.metadata });
        return;
      }
      case 'room.data': {
        const room = this.rooms.get(roomKey(event.projectId, event.roomId));
        if (!room) return;
        const everyone = event.participantIds.length === 0 && event.userIds.length === 0;
        const message = { type: 'server_data', data: event.data, topic: event.topic } as const;
        for (const member of room.members.values()) {
          if (everyone || event.participantIds.includes(member.participantId) || event.userIds.includes(member.userId)) member.sendControl(message);
        }
        return;
      }
      default:
    }
  }

  private revoke(grantId: string): void {
    const sessions = this.grantHolders.of(grantId);
    if (sessions.length === 0) return;
    const arrived = performance.now();
    for (const session of sessions) session.close('revoked', this.removalOf(session) ?? 'revoked');
    this.onRevocationClose?.((performance.now() - arrived) / 1000);
  }

  /**
   * Whether a removal or a room's end known here covers the session: a removal revokes the grants
   * it closes as well, and a session those revocations reach first still left by the removal.
   */
  private removalOf(session: Session): ParticipantLeftReason | undefined {
    const covering = this.guard.roomCutoffsOf(session.projectId, session.roomId, session.userId).filter((c) => session.isRoomCutOffBy(c));
    if (covering.length === 0) return undefined;
    return covering.some((c) => c.userId === null) ? 'room_ended' : 'removed';
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
    // the same close code for both (docs/protocol/media.md, "Close codes"); participant.left tells them apart
    const reason = cutoff.userId === null ? 'room_ended' : 'removed';
    for (const session of [...this.sessions]) {
      if (!session.isRoomCutOffBy(cutoff)) continue;
      session.close('revoked', reason);
      closed += 1;
    }
    if (closed > 0) this.onRevocationClose?.((performance.now() - arrived) / 1000);
  }

  /** Closes every session with 1001 and stops listening to the bus. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.guard.close();
    for (const timer of this.timers) clearInterval(timer);
    for (const room of this.rooms.values()) clearTimeout(room.emptyTimer);
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
