/** The room module's records and its slice of the store: participants live on the media nodes. */

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
  /** Changes the permissions of a participant's row; undefined when there is none. */
  updateLiveParticipant(participantId: string, permissions: LiveParticipantPermissions): Promise<LiveParticipantRecord | undefined>;
  /**
   * A project's participants (of one room when `roomId` is given) on media nodes seen at
   * `seenSince` or later, oldest join first.
   */
  listLiveParticipants(projectId: string, roomId: string | undefined, seenSince: number): Promise<LiveParticipantRecord[]>;
}

/** When each media node was last seen; a node gone quiet takes its participants with it. */
export interface MediaNodeStore {
  /** A media node is alive at `nowSec`. */
  heartbeatMediaNode(nodeId: string, nowSec: number): Promise<void>;
  /** Drops a media node's participants and heartbeat (at its start and close). */
  clearMediaNode(nodeId: string): Promise<void>;
  /** Drops the participants and heartbeats of media nodes last seen before `seenBefore` (crashed nodes); how many nodes. */
  purgeMediaNodes(seenBefore: number): Promise<number>;
}
