import type { MediaSessionRecord, SessionEndReason } from './store.ts';

/** A `media_sessions` row, as both stores return it. */
export interface MediaSessionRow {
  participant_id: string; project_id: string; room_id: string; user_id: string; role: string; media_node: string | null;
  joined_at: number; left_at: number | null; reason: string | null; usage_kind: string | null; relayed: boolean | number;
}

export const SESSION_COLUMNS = 'participant_id, project_id, room_id, user_id, role, media_node, joined_at, left_at, reason, usage_kind, relayed';

export const toMediaSession = (r: MediaSessionRow): MediaSessionRecord => ({
  participantId: r.participant_id, projectId: r.project_id, roomId: r.room_id, userId: r.user_id, role: r.role,
  mediaNode: r.media_node, joinedAt: r.joined_at, leftAt: r.left_at, reason: r.reason as SessionEndReason | null,
  usageKind: r.usage_kind, relayed: Boolean(r.relayed),
});
