import { EVERY_USER } from './cutoff.ts';
import type {
  LiveGrant, LiveParticipantRecord, LiveQuality, LiveStream, RoomCutoffRecord, RoomRecord, StoredGrantPermissions,
} from './store.ts';

/** A `live_participants` row; the lists are JSON text in both stores. */
export interface LiveParticipantRow {
  participant_id: string; project_id: string; room_id: string; user_id: string; role: string; publish_streams: string;
  subscribe_streams: string; subscribe_room: number | boolean; joined_at: number; room_started_at: number; media_node: string;
  grants: string; metadata: string; attributes: string; streams: string; quality: string | null;
}

export const toLiveParticipant = (r: LiveParticipantRow): LiveParticipantRecord => ({
  participantId: r.participant_id, projectId: r.project_id, roomId: r.room_id, userId: r.user_id, role: r.role,
  publishStreams: JSON.parse(r.publish_streams) as number[], subscribeStreams: JSON.parse(r.subscribe_streams) as number[],
  subscribeRoom: r.subscribe_room === true || r.subscribe_room === 1, joinedAt: r.joined_at, roomStartedAt: r.room_started_at,
  mediaNode: r.media_node, grants: JSON.parse(r.grants) as LiveGrant[], metadata: r.metadata,
  attributes: JSON.parse(r.attributes) as Record<string, string>, streams: JSON.parse(r.streams) as LiveStream[],
  quality: r.quality === null ? null : JSON.parse(r.quality) as LiveQuality,
});

/** The streams of a row with `muted` of one set; undefined when it lists no such stream. */
export function withMuted(streams: readonly LiveStream[], streamId: number, muted: boolean): LiveStream[] | undefined {
  if (!streams.some((s) => s.streamId === streamId)) return undefined;
  return streams.map((s) => (s.streamId === streamId ? { ...s, muted } : s));
}

/** The permissions of a `grant_permissions` row; the lists are JSON text in both stores. */
export interface GrantPermissionsRow { publish_streams: string; subscribe_streams: string; subscribe_room: number | boolean; set_at: number | string }

export const toPermissions = (r: GrantPermissionsRow): StoredGrantPermissions => ({
  publishStreams: JSON.parse(r.publish_streams) as number[], subscribeStreams: JSON.parse(r.subscribe_streams) as number[],
  subscribeRoom: r.subscribe_room === true || r.subscribe_room === 1, setAt: Number(r.set_at),
});

/** A `room_cutoffs` row: `user_id` '' stands for every user of the room. */
export interface RoomCutoffRow { project_id: string; room_id: string; user_id: string; cut_at: number; expires_at: number }

export const toRoomCutoff = (r: RoomCutoffRow): RoomCutoffRecord => ({
  projectId: r.project_id, roomId: r.room_id, userId: r.user_id === EVERY_USER ? null : r.user_id, cutAt: r.cut_at, expiresAt: r.expires_at,
});

/** A `room_settings` row. */
export interface RoomSettingsRow {
  project_id: string; room_id: string; metadata: string; max_participants: number; empty_timeout: number; created_at: number;
  emptied_at: number | null;
  /** When somebody first joined; null for a room created ahead that nobody joined yet. */
  started_at: number | null;
}

export const toRoomRecord = (r: RoomSettingsRow): RoomRecord => ({
  projectId: r.project_id, roomId: r.room_id, metadata: r.metadata, maxParticipants: r.max_participants,
  emptyTimeout: r.empty_timeout, createdAt: r.created_at, emptiedAt: r.emptied_at,
});

/** Keeps `attributes` merged with `patch`: a null or '' value deletes its key. */
export function mergeAttributes(
  attributes: Readonly<Record<string, string>>, patch: Readonly<Record<string, string | null>> | undefined,
): Record<string, string> {
  const merged = new Map(Object.entries(attributes));
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null || v === '') merged.delete(k);
    else merged.set(k, v);
  }
  return Object.fromEntries(merged);
}
