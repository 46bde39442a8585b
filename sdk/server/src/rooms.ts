import type { Role } from '@rtc/protocol';

/** A participant joined on a media node (`GET /v1/rtc/rooms/{room_id}`, docs/reference/room-api.md). */
export interface RtcParticipant {
  /** `pa_…`, given by the media server at join: name it to remove or update the participant. */
  readonly participant_id: string;
  readonly user_id: string;
  readonly role: Role;
  readonly publish_streams: readonly number[];
  readonly subscribe_streams: readonly number[];
  readonly subscribe_room: boolean;
  /** Seconds since the Unix epoch. */
  readonly joined_at: number;
}

/** A live room: at least one participant is joined. */
export interface RtcRoom {
  readonly room_id: string;
  /** `host:port` of the media node that holds the room. */
  readonly media_node: string;
  /** When the room opened on its media node (seconds since the Unix epoch). */
  readonly started_at: number;
  /** Oldest join first. */
  readonly participants: readonly RtcParticipant[];
}

/**
 * New permissions of a live participant; fields left out keep their value, and
 * `subscribe_streams` replaces `subscribe_room`.
 */
export interface ParticipantPermissions {
  readonly publish_streams?: readonly number[];
  readonly subscribe_streams?: readonly number[];
  readonly subscribe_room?: boolean;
}

export function isRoom(json: unknown): json is RtcRoom {
  return isObject(json) && typeof json['room_id'] === 'string' && typeof json['media_node'] === 'string'
    && typeof json['started_at'] === 'number' && Array.isArray(json['participants']) && json['participants'].every(isParticipant);
}

export function isParticipant(json: unknown): json is RtcParticipant {
  return isObject(json) && typeof json['participant_id'] === 'string' && typeof json['user_id'] === 'string'
    && typeof json['role'] === 'string' && Array.isArray(json['publish_streams']) && Array.isArray(json['subscribe_streams'])
    && typeof json['subscribe_room'] === 'boolean' && typeof json['joined_at'] === 'number';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
