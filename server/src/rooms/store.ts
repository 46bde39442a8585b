/** The room module's records and its slice of the store: participants live on the media nodes. */
import type { MediaKind, RtcStreamLayer, StreamSource } from '@rtc/protocol';

/** A grant a live participant has used and that has not expired: removing the participant revokes each. */
export interface LiveGrant {
  readonly grantId: string;
  readonly expiresAt: number;
}

/**
 * A participant joined on a media node, as the media node records it at join and drops at leave
 * (docs/reference/room-api.md): read by the api and token nodes, which do not hold the rooms.
 */
export interface LiveParticipantRecord extends LiveParticipantPermissions {
  readonly participantId: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly userId: string;
  readonly role: string;
  readonly joinedAt: number;
  /** When the room started on its media node (its first participant there joined). */
  readonly roomStartedAt: number;
  /** `host:port`, as the media node announces itself. */
  readonly mediaNode: string;
  readonly grants: readonly LiveGrant[];
  /** Set through the room service API; a media node's upsert (join, renewal) never changes them once stored. */
  readonly metadata: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** What the participant publishes now, as its media node last recorded it. */
  readonly streams: readonly LiveStream[];
  /**
   * Its media quality as its media node last measured it; null until the first heartbeat after the
   * join. Read only: the upsert never writes it, `setLiveQuality` does.
   */
  readonly quality?: LiveQuality | null;
}

/** A live participant's media quality (docs/reference/room-api.md, "Quality"), rounded by its media node. */
export interface LiveQuality {
  readonly bitrateIn: number;
  readonly bitrateOut: number;
  readonly packetLossIn: number | null;
  readonly packetLossOut: number | null;
  readonly rttMs: number | null;
  /** stream id → the rid of the layer received. */
  readonly layers: Readonly<Record<string, string>>;
  readonly updatedAt: number;
}

/** A change of a participant's metadata (replaced) and attributes (merged: a null value deletes its key). */
export interface ParticipantMetadataPatch {
  readonly metadata?: string | undefined;
  readonly attributes?: Readonly<Record<string, string | null>> | undefined;
}

/** A stream a live participant publishes (docs/reference/room-api.md, "Published streams"). */
export interface LiveStream {
  readonly streamId: number;
  readonly kind: MediaKind;
  readonly source: StreamSource;
  readonly muted: boolean;
  /** Simulcast layers of a WebRTC video, smallest first, as measured when recorded; empty otherwise. */
  readonly layers: readonly RtcStreamLayer[];
}

/** The streams a live participant may publish and receive. */
export interface LiveParticipantPermissions {
  readonly publishStreams: readonly number[];
  readonly subscribeStreams: readonly number[];
  readonly subscribeRoom: boolean;
}

/** Participants joined on the media nodes, as the media nodes record them. */
export interface LiveParticipantStore {
  /** Records a participant, or replaces its row (a renewal brings a grant). */
  upsertLiveParticipant(participant: LiveParticipantRecord): Promise<void>;
  deleteLiveParticipant(participantId: string): Promise<void>;
  /** Replaces what a participant's row says it publishes; nothing when there is no row. */
  setLiveStreams(participantId: string, streams: readonly LiveStream[]): Promise<void>;
  /** Replaces a participant's row's quality; nothing when there is no row. */
  setLiveQuality(participantId: string, quality: LiveQuality): Promise<void>;
  /**
   * Sets `muted` of one stream of a participant's row, in one atomic step; undefined when there is
   * no row or the row lists no such stream.
   */
  muteLiveStream(participantId: string, streamId: number, muted: boolean): Promise<LiveParticipantRecord | undefined>;
  /** Changes the permissions of a participant's row; undefined when there is none. */
  updateLiveParticipant(participantId: string, permissions: LiveParticipantPermissions): Promise<LiveParticipantRecord | undefined>;
  /**
   * Replaces a participant's metadata and merges its attributes in one atomic step (concurrent
   * changes of different keys all stay); undefined when there is no row. `check` sees the merged
   * attributes inside that step: what it throws is thrown, and nothing is written.
   */
  updateLiveParticipantMetadata(
    participantId: string, patch: ParticipantMetadataPatch, check?: (attributes: Readonly<Record<string, string>>) => void,
  ): Promise<LiveParticipantRecord | undefined>;
  /**
   * A project's participants (of one room, or of the rooms of a page, when given) on media nodes
   * seen at `seenSince` or later, oldest join first.
   */
  listLiveParticipants(projectId: string, rooms: string | readonly string[] | undefined, seenSince: number): Promise<LiveParticipantRecord[]>;
}

/**
 * Permissions the customer's server set on a participant, kept for each grant it used until the
 * grant expires: a join or renewal with that grant, on any media node, gets them instead of the
 * grant's own (docs/reference/room-api.md, "Changing permissions").
 */
export interface GrantPermissionsRecord extends StoredGrantPermissions {
  readonly grantId: string;
  readonly projectId: string;
  readonly expiresAt: number;
}

/** Permissions set on a grant, with when the room service made the change: the newest change wins. */
export interface StoredGrantPermissions extends LiveParticipantPermissions {
  /** Milliseconds since the epoch, by the clock of the api process that made the change. */
  readonly setAt: number;
}

/** The permissions set on grants, readable by every node. */
export interface GrantPermissionStore {
  /** Records each grant's permissions, replacing what was set on it before unless that change is newer (`setAt`). */
  putGrantPermissions(records: readonly GrantPermissionsRecord[]): Promise<void>;
  /** The permissions set on a grant of the project that has not expired at `nowSec`; undefined when none. */
  grantPermissions(projectId: string, grantId: string, nowSec: number): Promise<StoredGrantPermissions | undefined>;
  /** Forgets the permissions of grants expired at `nowSec`; how many. */
  purgeGrantPermissions(nowSec: number): Promise<number>;
}

/** When each media node was last seen; a node gone quiet takes its participants with it. */
export interface MediaNodeStore {
  /** A media node is alive at `nowSec`. */
  heartbeatMediaNode(nodeId: string, nowSec: number): Promise<void>;
  /** Drops a media node's participants and heartbeat (at its start and close). */
  clearMediaNode(nodeId: string): Promise<void>;
  /** Drops the participants and heartbeats of media nodes last seen before `seenBefore` (crashed nodes); how many nodes. */
  purgeMediaNodes(seenBefore: number): Promise<number>;
  /**
   * A room opened on `nodeId` (its first member there joined): true when no other node seen since
   * `seenSince` holds it, so the room starts now. One atomic step: of two nodes opening a room at once,
   * one starts it.
   */
  openRoomOnNode(projectId: string, roomId: string, nodeId: string, seenSince: number): Promise<boolean>;
  /** A room closed on `nodeId`: true when no other node seen since `seenSince` holds it, so the room finishes now. Atomic likewise. */
  closeRoomOnNode(projectId: string, roomId: string, nodeId: string, seenSince: number): Promise<boolean>;
}

/**
 * A removal's or a room's end's cut-off (docs/reference/room-api.md, "What a removal stores"): the
 * room's grants of `userId` (of every user when null) issued at or before `cutAt` are refused.
 * A ban puts `cutAt` in the future. Kept until `expiresAt`, when every such grant has expired.
 */
export interface RoomCutoffRecord {
  readonly projectId: string;
  readonly roomId: string;
  /** The user removed; null: every user of the room (the room was ended). */
  readonly userId: string | null;
  readonly cutAt: number;
  readonly expiresAt: number;
}

/** The cut-offs of removals and ended rooms, one per (project, room, user) and one per (project, room). */
export interface RoomCutoffStore {
  /** Records a cut-off and returns the one now stored: a cut-off never moves back (the later `cutAt` and `expiresAt` stay). */
  insertRoomCutoff(cutoff: RoomCutoffRecord): Promise<RoomCutoffRecord>;
  /**
   * The latest `cutAt` that covers `userId` in the room (its own cut-off or the room's), expired or
   * not (an expired one covers only expired grants); undefined when none does. One indexed look-up.
   */
  roomCutoff(projectId: string, roomId: string, userId: string): Promise<number | undefined>;
  /** Cut-offs whose `expiresAt` is `nowSec` or later. */
  listRoomCutoffs(nowSec: number): Promise<RoomCutoffRecord[]>;
  /** Forgets cut-offs that expired before `nowSec`; how many. */
  purgeRoomCutoffs(nowSec: number): Promise<number>;
}

/**
 * A room's settings, stored when the customer's server creates or configures the room through the
 * room service API (docs/reference/room-api.md, "Room settings"); rooms that only arise from joins have none.
 * The room is live while somebody is joined (`emptiedAt` null) and for `emptyTimeout` seconds after
 * `emptiedAt`; after that the record is expired: never returned, replaced by a new one, then purged.
 */
export interface RoomRecord {
  readonly projectId: string;
  readonly roomId: string;
  readonly metadata: string;
  /** 0: no bound but the media node's own. */
  readonly maxParticipants: number;
  readonly emptyTimeout: number;
  readonly createdAt: number;
  /** When the room last became empty (its creation, when nobody joined yet); null while somebody is joined. */
  readonly emptiedAt: number | null;
}

/** What `listRoomIds` reads: the page's bounds and the room id filter. */
export interface RoomIdPage {
  readonly afterId?: string | undefined;
  readonly roomIds?: readonly string[] | undefined;
  readonly limit: number;
  readonly seenSince: number;
}

/** Settings a room service call changes; fields left out keep their value. */
export interface RoomSettingsPatch {
  readonly metadata?: string | undefined;
  readonly maxParticipants?: number | undefined;
  readonly emptyTimeout?: number | undefined;
}

/** Rooms' settings, readable by every node. Every read takes the time: an expired record is none. */
export interface RoomSettingsStore {
  /**
   * Stores `room` unless a live record of the room is stored; the one stored and whether it is `room`.
   * With `maxAhead`, a room created empty is refused (undefined) while the project holds that many
   * live records nobody has joined yet (docs/reference/room-api.md, "Limits"); checked and stored in one step.
   */
  createRoom(room: RoomRecord, nowSec: number, maxAhead?: number): Promise<{ readonly room: RoomRecord; readonly created: boolean } | undefined>;
  /** Changes the settings of a live record; undefined when there is none. */
  updateRoom(projectId: string, roomId: string, patch: RoomSettingsPatch, nowSec: number): Promise<RoomRecord | undefined>;
  getRoomRecord(projectId: string, roomId: string, nowSec: number): Promise<RoomRecord | undefined>;
  /**
   * One page of a project's listed rooms, by room id after `afterId`: the ids of rooms with a
   * participant on a media node seen at `seenSince` or later, or with a live record kept empty
   * (`emptiedAt` set). At most `limit` ids, read as such from the store.
   */
  listRoomIds(projectId: string, page: RoomIdPage, nowSec: number): Promise<string[]>;
  /** A project's live records (of these rooms when `roomIds` is given), by room id. */
  listRoomRecords(projectId: string, roomIds: readonly string[] | undefined, nowSec: number): Promise<RoomRecord[]>;
  /** The media node holding the room saw it empty at `emptiedAt`, or occupied again (null); nothing without a live record. */
  setRoomEmptiedAt(projectId: string, roomId: string, emptiedAt: number | null, nowSec: number): Promise<void>;
  /** Forgets the records expired at `nowSec`; how many. */
  purgeRoomRecords(nowSec: number): Promise<number>;
}
