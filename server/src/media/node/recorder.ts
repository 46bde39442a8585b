import type { Logger } from 'pino';
import { MEDIA_NODE_HEARTBEAT_MS, MEDIA_NODE_STALE_SECONDS } from '../../rooms/presence.ts';
import type { Clock, ProjectEventInput, ProjectEvents } from '../../core/ports.ts';
import type {
  GrantPermissionStore, LiveParticipantRecord, LiveParticipantStore, LiveStream, MediaNodeStore, RoomSettingsStore,
} from '../../rooms/store.ts';
import type { MediaSessionStore } from '../../sessions/store.ts';
import { usageKindOf } from '../../sessions/usage-kind.ts';
import { PRICE_LIST } from '../../billing/catalog/price-list.ts';
import type { MediaGrant } from '../session/grant-check.ts';
import type { Room, Stream } from '../room/room.ts';
import type { Session } from '../session/session.ts';

/** The store writes of the recorder. */
export type RecorderStore = Pick<LiveParticipantStore, 'upsertLiveParticipant' | 'deleteLiveParticipant' | 'setLiveStreams' | 'setLiveQuality'>
  & MediaNodeStore
  & Pick<RoomSettingsStore, 'setRoomEmptiedAt' | 'purgeRoomRecords'>
  & Pick<GrantPermissionStore, 'putGrantPermissions' | 'purgeGrantPermissions'>
  & Pick<MediaSessionStore, 'openMediaSession' | 'closeMediaSession'>;

export interface RecorderOptions {
  readonly store: RecorderStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where participant and room events are recorded for webhooks. */
  readonly events?: ProjectEvents | undefined;
  /**
   * Whether events name this node in `media_node`: only where there are several (a cluster's media
   * node directory); on a single node it is null (docs/reference/webhooks.md).
   */
  readonly nodeInEvents?: boolean | undefined;
}

/**
 * What the media node records of its sessions and rooms: presence rows (docs/reference/room-api.md,
 * "Presence"), session history rows, published streams, quality, room occupancy, and webhook events.
 * Writes run in order, one queue per session and one per room; a failure is logged, never thrown.
 */
export class Recorder {
  private readonly store: RecorderStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly events: ProjectEvents | undefined;
  private readonly nodeInEvents: boolean;
  /** Set by `startPresence`; undefined: no presence is kept. */
  private nodeId: string | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The store writes of each session's presence, in order (a leave never overtakes its join). */
  private readonly presenceWrites = new WeakMap<Session, Promise<void>>();
  /** The store writes of each room's occupancy and events, in order (an emptying never overtakes the join before it). */
  private readonly roomWrites = new WeakMap<Room, Promise<void>>();
  private readonly pendingWrites = new Set<Promise<void>>();
  /** What was last written of each session's publications (JSON), so that the heartbeat writes only a change. */
  private readonly streamsWritten = new WeakMap<Session, string>();
  /** What was last written of each session's quality (JSON, without its time), likewise. */
  private readonly qualityWritten = new WeakMap<Session, string>();

  constructor(options: RecorderOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.events = options.events;
    this.nodeInEvents = options.nodeInEvents ?? false;
  }

  /**
   * Keeps the presence of this node's participants in the store under `nodeId` (`host:port`, as
   * the node announces itself; docs/reference/room-api.md, "Presence"), from before the first join:
   * clears what an earlier run of the node left (a crash) and tells the store it is alive.
   */
  async startPresence(nodeId: string, participants: () => Iterable<Session>): Promise<void> {
    await this.store.clearMediaNode(nodeId);
    await this.store.heartbeatMediaNode(nodeId, this.nowSec());
    this.nodeId = nodeId;
    const heartbeat = setInterval(() => {
      const now = this.nowSec();
      // the layers' sizes and rates, as measured now, for the room service API
      for (const session of participants()) {
        if (!session.isJoined) continue;
        this.writeStreams(session, false);
        this.writeQuality(session);
      }
      this.store.heartbeatMediaNode(nodeId, now)
        .then(() => this.store.purgeMediaNodes(now - MEDIA_NODE_STALE_SECONDS))
        .then(() => this.store.purgeRoomRecords(now))
        .then(() => this.store.purgeGrantPermissions(now))
        .catch((err: unknown) => this.logger.warn({ err }, 'media: recording this node as alive failed'));
    }, MEDIA_NODE_HEARTBEAT_MS);
    heartbeat.unref();
    this.heartbeat = heartbeat;
  }

  /** Stops the heartbeat; the writes already queued go on (`close` waits for them). */
  stop(): void {
    clearInterval(this.heartbeat);
  }

  /** Waits for the queued writes, then clears this node's presence. */
  async close(): Promise<void> {
    if (this.nodeId === undefined) return;
    await Promise.all([...this.pendingWrites]);
    await this.store.clearMediaNode(this.nodeId).catch((err: unknown) => this.logger.warn({ err }, 'media: clearing this node\'s presence failed'));
  }

  private nowSec(): number {
    return Math.floor(this.clock.nowMs() / 1000);
  }

  /**
   * A session joined `room`: its presence and history rows, the room's occupancy when it is the
   * first member, then `room.started` (when `firstOfRoom`) and `participant.joined`.
   */
  joined(session: Session, grant: MediaGrant, room: Room, firstOfRoom: boolean): void {
    const record = this.presenceOf(session, room);
    if (record) this.streamsWritten.set(session, JSON.stringify(record.streams));
    if (room.members.size === 1) this.writeRoom(room, (store) => store.setRoomEmptiedAt(room.projectId, room.roomId, null, this.nowSec()));
    // the whole room's, on every node (docs/reference/webhooks.md)
    const count = room.participantCount;
    const history = this.historyOf(session, grant);
    this.writePresence(session, async (store) => {
      if (record) await this.quietly(session, store.upsertLiveParticipant(record));
      await this.quietly(session, store.openMediaSession(history));
      // opened on this node: the room starts unless another node holds it already
      if (firstOfRoom && await this.claim(true, room)) await this.record(session, 'room.started', { num_participants: count });
      await this.record(session, 'participant.joined', { num_participants: count });
    });
  }

  /**
   * A session's grants changed: its presence row follows, after the permissions set on the session,
   * stored for the renewal's grant too (a reconnection with it gets them; docs/reference/room-api.md).
   */
  renewed(session: Session, room: Room): void {
    const record = this.presenceOf(session, room);
    if (!record) return;
    this.writePresence(session, async (store) => {
      await this.storePermissions(session, store);
      await store.upsertLiveParticipant(record);
    });
  }

  /**
   * Permissions set through the room service API were applied to a session: stored for every grant
   * it holds, a renewal's that the room service did not know of yet included.
   */
  permissionsApplied(session: Session): void {
    this.writePresence(session, (store) => this.storePermissions(session, store));
  }

  /** The permissions set on `session`, stored for each of its live grants unless a newer change is (docs/decisions.md, "The newest permission change wins"). */
  private async storePermissions(session: Session, store: RecorderStore): Promise<void> {
    const set = session.grants.permissionsSet;
    const projectId = session.projectId;
    const now = this.nowSec();
    if (!set || !projectId) return;
    await store.putGrantPermissions([...session.grants.used].filter(([, exp]) => exp > now).map(([grantId, expiresAt]) => ({
      grantId, projectId, expiresAt, publishStreams: [...set.pub], subscribeStreams: [...set.subs], subscribeRoom: set.subRoom, setAt: set.setAt,
    })));
  }

  /** The last member left `room` at `emptiedAt` (seconds). */
  roomEmptied(room: Room, emptiedAt: number): void {
    this.writeRoom(room, (store) => store.setRoomEmptiedAt(room.projectId, room.roomId, emptiedAt, emptiedAt));
  }

  /**
   * A session left `room`: its presence row goes, its history row closes, then `participant.left`
   * and, when `finished` and no other node holds the room, `room.finished`. `spanned`: this node
   * thought other nodes held the room and did not record it empty; if none does, it is recorded now.
   */
  left(session: Session, room: Room, finished: boolean, spanned = false): void {
    // the count after the leave, of the whole room (docs/reference/webhooks.md)
    const count = room.participantCount;
    const reason = session.leftReason;
    const leftAt = this.nowSec();
    const usage = { usageKind: usageKindOf(PRICE_LIST, session.usage.videoPixels), relayed: session.usage.relayed };
    this.writePresence(session, async (store) => {
      if (this.nodeId !== undefined) await this.quietly(session, store.deleteLiveParticipant(session.participantId));
      await this.quietly(session, store.closeMediaSession(session.participantId, leftAt, reason, usage));
      await this.record(session, 'participant.left', { reason, num_participants: count });
      if (!finished || !await this.claim(false, room)) return;
      if (spanned) await this.quietly(session, this.store.setRoomEmptiedAt(room.projectId, room.roomId, leftAt, leftAt));
      await this.record(session, 'room.finished', { num_participants: 0 });
    });
  }

  /** A room kept through its empty_timeout finished. */
  roomFinished(room: Room): void {
    this.writeRoom(room, async () => {
      if (await this.claim(false, room)) await this.recordEvent(room.projectId, 'room.finished', { room_id: room.roomId, num_participants: 0 });
    });
  }

  /**
   * Opens or closes `room` on this node in the store: true when the room starts or finishes with it,
   * no other live node holding it (docs/operations/scale-out.md, "Rooms across media nodes"). Without
   * presence, or when the store fails, this node's view decides.
   */
  private async claim(open: boolean, room: Room): Promise<boolean> {
    if (this.nodeId === undefined) return true;
    const seenSince = this.nowSec() - MEDIA_NODE_STALE_SECONDS;
    try {
      return await (open ? this.store.openRoomOnNode : this.store.closeRoomOnNode)(room.projectId, room.roomId, this.nodeId, seenSince);
    } catch (err) {
      this.logger.warn({ err, roomId: room.roomId }, 'media: agreeing on the room\'s start or finish failed');
      return room.remote.size === 0;
    }
  }

  /** The session history's row of a session that joined (docs/console.md, "Session history"). */
  private historyOf(session: Session, grant: MediaGrant): Parameters<MediaSessionStore['openMediaSession']>[0] {
    return {
      participantId: session.participantId, projectId: grant.projectId, roomId: grant.roomId, userId: grant.userId,
      role: grant.role, mediaNode: this.nodeId ?? null, joinedAt: session.joinedAtSec,
    };
  }

  /** Runs a room's store writes one after the other; a failure is logged. */
  private writeRoom(room: Room, write: (store: RecorderStore) => Promise<void>): void {
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
  publicationsChanged(session: Session, stream: Stream, event?: 'track.published' | 'track.unpublished'): void {
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
  private writePresence(session: Session, write: (store: RecorderStore) => Promise<void>): void {
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
}
