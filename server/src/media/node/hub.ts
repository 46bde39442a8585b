import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { GrantGuard, type GuardStore } from '../../grant-guard/guard.ts';
import { GrantHolders } from '../../grant-guard/grant-holders.ts';
import type { Clock, EventBus, ProjectEvents } from '../../core/ports.ts';
import type { ProjectCutoffRecord } from '../../customers/store.ts';
import type { GrantPermissionStore, LiveParticipantStore, RoomCutoffRecord, RoomSettingsStore } from '../../rooms/store.ts';
import { MEDIA_NODE_STALE_SECONDS } from '../../rooms/presence.ts';
import type { GrantKeys, MediaGrant } from '../session/grant-check.ts';
import { MAX_CLIENT_MESSAGE_BYTES, MEDIA_PATH, REPLAY_WINDOW, type MediaLimits, type ParticipantLeftReason } from '@rtc/protocol';
import { HANDSHAKE_TIMEOUT_MS, IDLE_SWEEP_INTERVAL_MS, IDLE_TIMEOUT_MS } from './limits.ts';
import { Room, roomKey, type PublicationListener, type RemoteMember, type RoomSettings, type Stream } from '../room/room.ts';
import { Session, type SessionHost } from '../session/session.ts';
import type { Permissions } from '../session/session-grants.ts';
import { Recorder, type RecorderStore } from './recorder.ts';
import { applyRoomCommand } from './room-commands.ts';
import { MediaStats } from '../../metrics/media-stats.ts';
import type { LiveCounts } from '../../metrics/metrics.ts';
import type { RtcOptions } from '../webrtc/options.ts';
import type { RelayRouter } from '../relayed/relay-router.ts';
import { RoomSpan } from './room-span.ts';

export interface MediaHubOptions {
  readonly keys: GrantKeys;
  readonly store: GuardStore & RecorderStore & Pick<RoomSettingsStore, 'getRoomRecord'> & Pick<GrantPermissionStore, 'grantPermissions'>
    & Pick<LiveParticipantStore, 'listLiveParticipants'>;
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
   * Whether there may be several media nodes (a media node directory: a cluster's, or the workers'
   * of one machine): events name this node in `media_node` (null on a single node,
   * docs/reference/webhooks.md), and a room may span nodes (room-span.ts).
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

/** Rooms about to open here whose other nodes' members were read, at most (a refused join leaves its read behind). */
const MAX_PENDING_SEEDS = 1024;

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
  /** Joined sessions by participant id: the room service API names them so. */
  private readonly participants = new Map<string, Session>();
  /** What the node records of its sessions and rooms in the store and as webhook events. */
  private readonly recorder: Recorder;
  private readonly onRevocationClose: ((seconds: number) => void) | undefined;
  /** Relays of this node's rooms to and from the other media nodes (media/relayed/relay-router.ts). */
  private relay: RelayRouter | undefined;
  /** The room's members on the other media nodes (room-span.ts); from `startPresence` on. */
  private span: RoomSpan | undefined;
  /** Members of other nodes read from the store for a room about to open here, by room key. */
  private readonly seeds = new Map<string, RemoteMember[]>();
  private readonly bus: EventBus;
  private readonly severalNodes: boolean;
  /** Rooms tell the hub what their members publish: recorded in the store and as webhook events. */
  private readonly publications: PublicationListener = {
    published: (stream) => this.publicationsChanged(stream, 'track.published'),
    unpublished: (stream) => this.publicationsChanged(stream, 'track.unpublished'),
    changed: (stream) => this.publicationsChanged(stream),
  };

  private constructor(options: MediaHubOptions) {
    this.keys = options.keys;
    this.rtc = options.rtc;
    this.logger = options.logger;
    this.store = options.store;
    this.clock = options.clock;
    this.bus = options.bus;
    this.severalNodes = options.nodeInEvents ?? false;
    this.recorder = new Recorder({
      store: options.store, clock: options.clock, logger: options.logger, events: options.events, nodeInEvents: options.nodeInEvents,
    });
    this.onRevocationClose = options.onRevocationClose;
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_CLIENT_MESSAGE_BYTES,
      perMessageDeflate: false,
      clientTracking: false,
    });
    // changes of the room service API; revocations and archives reach the guard
    this.unsubscribe = options.bus.subscribe((event) => {
      applyRoomCommand(event, this.participants, this.rooms);
      const session = event.type === 'participant.metadata' ? this.participants.get(event.participantId) : undefined;
      const room = session?.isJoined ? this.rooms.get(roomKey(session.projectId, session.roomId)) : undefined;
      if (session && room) this.span?.changed(room, session);
    });
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
    await this.recorder.startPresence(nodeId, () => this.participants.values());
    if (!this.severalNodes) return;
    this.span = new RoomSpan({
      bus: this.bus, nodeId, logger: this.logger, now: () => this.clock.nowMs(), room: (projectId, roomId) => this.openRoom(projectId, roomId),
      rooms: () => this.rooms.values(),
      listed: async (room) => new Set((await this.store.listLiveParticipants(room.projectId, room.roomId, this.nowSec() - MEDIA_NODE_STALE_SECONDS))
        .map((p) => p.participantId)),
    });
  }

  /** The joined sessions, WebRTC and WebSocket-only alike (their node's load, docs/operations/scale-out.md). */
  joinedSessions(): Iterable<Session> {
    return this.participants.values();
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

  /** Permissions the customer's server set on a grant, read from the store: set on any node, they hold on this one. */
  async grantPermissions(grant: MediaGrant): Promise<Permissions | undefined> {
    const stored = await this.store.grantPermissions(grant.projectId, grant.grantId, this.nowSec());
    return stored && { pub: new Set(stored.publishStreams), subs: new Set(stored.subscribeStreams), subRoom: stored.subscribeRoom, setAt: stored.setAt };
  }

  roomFor(projectId: string, roomId: string, settings?: RoomSettings): Room {
    const key = roomKey(projectId, roomId);
    let room = this.rooms.get(key);
    if (!room) {
      room = new Room(projectId, roomId, () => this.clock.nowMs(), settings, this.publications);
      this.rooms.set(key, room);
      this.span?.seed(room, this.seeds.get(key) ?? []);
      this.seeds.delete(key);
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
    // who the room's other nodes hold, for the room about to open here (room-span.ts)
    if (this.span) await this.readSeeds(projectId, roomId);
    try {
      const record = await this.store.getRoomRecord(projectId, roomId, this.nowSec());
      return record && { metadata: record.metadata, maxParticipants: record.maxParticipants, emptyTimeout: record.emptyTimeout };
    } catch (err) {
      // the join goes on without them (no metadata, the node's own bound) rather than fail on a store hiccup
      this.logger.warn({ err }, 'media: reading a room\'s settings failed');
      return undefined;
    }
  }

  /** The participants the store lists on the room's other nodes, kept for the room's opening here; none on a failed read. */
  private async readSeeds(projectId: string, roomId: string): Promise<void> {
    try {
      const live = await this.store.listLiveParticipants(projectId, roomId, this.nowSec() - MEDIA_NODE_STALE_SECONDS);
      // those of joins that were refused are never taken: bounded
      if (this.seeds.size >= MAX_PENDING_SEEDS) this.seeds.clear();
      this.seeds.set(roomKey(projectId, roomId), live.map((p) => ({
        participantId: p.participantId, userId: p.userId, role: p.role as RemoteMember['role'], metadata: p.metadata,
        attributes: p.attributes, node: p.mediaNode,
      })));
    } catch (err) {
      // the other nodes' answers to this node's announcement list them soon after
      this.logger.warn({ err }, 'media: reading the room\'s participants on other nodes failed');
    }
  }

  /** The relays of this node's rooms: told of each join, leave and publication change from now on. */
  attachRelay(relay: RelayRouter): void {
    this.relay = relay;
  }

  /** The room open on this node, if any. */
  openRoom(projectId: string, roomId: string): Room | undefined {
    return this.rooms.get(roomKey(projectId, roomId));
  }

  dropIfEmpty(room: Room): void {
    if (room.members.size === 0 && room.emptyTimer === undefined && this.rooms.get(room.key) === room) this.closeRoom(room);
  }

  joined(session: Session, grant: MediaGrant): void {
    this.logger.debug({ projectId: grant.projectId, roomId: grant.roomId, userId: grant.userId, participantId: session.participantId },
      'media: participant joined');
    this.participants.set(session.participantId, session);
    const room = this.roomFor(grant.projectId, grant.roomId);
    const firstOfRoom = !room.started;
    room.started = true;
    clearTimeout(room.emptyTimer);
    room.emptyTimer = undefined;
    this.recorder.joined(session, grant, room, firstOfRoom);
    this.span?.joined(room, session);
    // the room's first member here asks the other nodes what they originate in it; a later one finds it known
    this.relay?.roomChanged(room.projectId, room.roomId, room.members.size === 1);
  }

  renewed(session: Session): void {
    this.recorder.renewed(session, this.roomFor(session.projectId, session.roomId));
  }

  permissionsApplied(session: Session): void {
    this.recorder.permissionsApplied(session);
  }

  left(session: Session, room: Room): void {
    const lastOfRoom = room.members.size === 0 && room.emptyTimer === undefined && this.rooms.get(room.key) === room;
    this.logger.debug({ participantId: session.participantId }, 'media: participant left');
    if (this.participants.get(session.participantId) === session) this.participants.delete(session.participantId);
    // a room with an empty_timeout is kept that long (docs/reference/room-api.md, "Room settings"): it
    // finishes then, unless somebody joins meanwhile; a room still held by other nodes is theirs to keep
    const spanned = room.remote.size > 0;
    const keep = lastOfRoom && room.settings.emptyTimeout > 0 && !spanned;
    this.span?.left(room, session);
    if (lastOfRoom && spanned) {
      this.closeRoom(room);
    } else if (lastOfRoom) {
      const emptiedAt = this.nowSec();
      this.recorder.roomEmptied(room, emptiedAt);
      if (keep) {
        // when the store's record expires: from the whole second the room emptied at
        room.expiresAtMs = (emptiedAt + room.settings.emptyTimeout) * 1000;
        room.emptyTimer = setTimeout(() => this.finishRoom(room), Math.max(0, room.expiresAtMs - this.clock.nowMs()));
        room.emptyTimer.unref();
      } else {
        this.closeRoom(room);
      }
    }
    this.recorder.left(session, room, lastOfRoom && !keep, lastOfRoom && spanned);
    this.relay?.roomChanged(room.projectId, room.roomId);
  }

  private closeRoom(room: Room): void {
    this.rooms.delete(room.key);
    this.span?.forget(room);
  }

  /** The empty_timeout of a room nobody joined again ran out: it finishes. */
  private finishRoom(room: Room): void {
    room.emptyTimer = undefined;
    if (room.members.size > 0 || this.rooms.get(room.key) !== room) return;
    this.closeRoom(room);
    this.logger.debug({ projectId: room.projectId, roomId: room.roomId }, 'media: room finished after its empty timeout');
    this.recorder.roomFinished(room);
  }

  /** A stream was published, unpublished, muted or unmuted, or its layers became known: recorded, with its webhook event. */
  private publicationsChanged(stream: Stream, event?: 'track.published' | 'track.unpublished'): void {
    const session = this.participants.get(stream.publisher.participantId);
    if (!session) return;
    this.recorder.publicationsChanged(session, stream, event);
    this.relay?.roomChanged(session.projectId, session.roomId);
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
    this.recorder.stop();
    for (const room of this.rooms.values()) clearTimeout(room.emptyTimer);
    for (const session of [...this.sessions]) session.close('going_away');
    // after the sessions: the room's other nodes are told that its members here left
    this.span?.close();
    await this.recorder.close();
  }
}

function pathOf(url: string | undefined): string {
  const q = (url ?? '').indexOf('?');
  return q === -1 ? (url ?? '') : (url ?? '').slice(0, q);
}
