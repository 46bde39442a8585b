import type Database from 'better-sqlite3';
import { EVERY_USER } from './cutoff.ts';
import { toLiveParticipant, toRoomCutoff, withMuted, type LiveParticipantRow, type RoomCutoffRow } from './rows.ts';
import type { LiveParticipantRecord, LiveParticipantStore, MediaNodeStore, RoomCutoffStore } from './store.ts';

/**
 * The room module's part of the SQLite store (participants live on the media nodes, the nodes'
 * heartbeats, and the cut-offs of removals and ended rooms), on its connection.
 */
export function sqliteRoomStore(db: Database.Database): LiveParticipantStore & MediaNodeStore & RoomCutoffStore {
  const q = {
    upsertLiveParticipant: db.prepare(`INSERT INTO live_participants (participant_id, project_id, room_id, user_id, role,
      publish_streams, subscribe_streams, subscribe_room, joined_at, room_started_at, media_node, grants, streams)
      VALUES (@participantId, @projectId, @roomId, @userId, @role, @publishStreams, @subscribeStreams, @subscribeRoom,
      @joinedAt, @roomStartedAt, @mediaNode, @grants, @streams) ON CONFLICT (participant_id) DO UPDATE SET
      publish_streams = excluded.publish_streams, subscribe_streams = excluded.subscribe_streams,
      subscribe_room = excluded.subscribe_room, grants = excluded.grants, streams = excluded.streams`),
    setLiveStreams: db.prepare<[string, string]>('UPDATE live_participants SET streams = ? WHERE participant_id = ?'),
    deleteLiveParticipant: db.prepare<[string]>('DELETE FROM live_participants WHERE participant_id = ?'),
    updateLiveParticipant: db.prepare<{ id: string; pub: string; subs: string; subRoom: number }>(`UPDATE live_participants
      SET publish_streams = @pub, subscribe_streams = @subs, subscribe_room = @subRoom WHERE participant_id = @id`),
    liveParticipant: db.prepare<[string], LiveParticipantRow>('SELECT * FROM live_participants WHERE participant_id = ?'),
    listLiveParticipants: db.prepare<{ projectId: string; roomId: string | null; seenSince: number }, LiveParticipantRow>(
      `SELECT p.* FROM live_participants p JOIN media_node_heartbeats h ON h.node_id = p.media_node
       WHERE p.project_id = @projectId AND (@roomId IS NULL OR p.room_id = @roomId) AND h.seen_at >= @seenSince
       ORDER BY p.joined_at, p.rowid`),
    heartbeatMediaNode: db.prepare<[string, number]>(`INSERT INTO media_node_heartbeats (node_id, seen_at) VALUES (?, ?)
      ON CONFLICT (node_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)`),
    clearNodeParticipants: db.prepare<[string]>('DELETE FROM live_participants WHERE media_node = ?'),
    clearNodeHeartbeat: db.prepare<[string]>('DELETE FROM media_node_heartbeats WHERE node_id = ?'),
    staleNodes: db.prepare<[number], string>('SELECT node_id FROM media_node_heartbeats WHERE seen_at < ?').pluck(),
    insertRoomCutoff: db.prepare<[string, string, string, number, number], RoomCutoffRow>(`INSERT INTO room_cutoffs
      (project_id, room_id, user_id, cut_at, expires_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (project_id, room_id, user_id) DO UPDATE SET cut_at = max(cut_at, excluded.cut_at),
      expires_at = max(expires_at, excluded.expires_at) RETURNING *`),
    roomCutoff: db.prepare<[string, string, string, string], number | null>(`SELECT max(cut_at) FROM room_cutoffs
      WHERE project_id = ? AND room_id = ? AND user_id IN (?, ?)`).pluck(),
    listRoomCutoffs: db.prepare<[number], RoomCutoffRow>('SELECT * FROM room_cutoffs WHERE expires_at >= ?'),
    purgeRoomCutoffs: db.prepare<[number]>('DELETE FROM room_cutoffs WHERE expires_at < ?'),
  };

  const clearMediaNode = db.transaction((nodeId: string): void => {
    q.clearNodeParticipants.run(nodeId);
    q.clearNodeHeartbeat.run(nodeId);
  });
  const purgeMediaNodes = db.transaction((seenBefore: number): number => {
    const stale = q.staleNodes.all(seenBefore);
    for (const nodeId of stale) clearMediaNode(nodeId);
    return stale.length;
  });
  const liveParams = (p: LiveParticipantRecord) => ({
    ...p, publishStreams: JSON.stringify(p.publishStreams), subscribeStreams: JSON.stringify(p.subscribeStreams),
    subscribeRoom: p.subscribeRoom ? 1 : 0, grants: JSON.stringify(p.grants), streams: JSON.stringify(p.streams),
  });
  // read and written in one transaction: a write of the media node cannot fall in between
  const muteLiveStream = db.transaction((participantId: string, streamId: number, muted: boolean): LiveParticipantRecord | undefined => {
    const row = q.liveParticipant.get(participantId);
    const streams = row && withMuted(toLiveParticipant(row).streams, streamId, muted);
    if (!streams) return undefined;
    q.setLiveStreams.run(JSON.stringify(streams), participantId);
    return toLiveParticipant(q.liveParticipant.get(participantId)!);
  });

  return {
    async upsertLiveParticipant(p) { q.upsertLiveParticipant.run(liveParams(p)); },
    async deleteLiveParticipant(participantId) { q.deleteLiveParticipant.run(participantId); },
    async setLiveStreams(participantId, streams) { q.setLiveStreams.run(JSON.stringify(streams), participantId); },
    async muteLiveStream(participantId, streamId, muted) { return muteLiveStream.immediate(participantId, streamId, muted); },
    async updateLiveParticipant(participantId, perm) {
      const changes = q.updateLiveParticipant.run({
        id: participantId, pub: JSON.stringify(perm.publishStreams), subs: JSON.stringify(perm.subscribeStreams),
        subRoom: perm.subscribeRoom ? 1 : 0,
      }).changes;
      const r = changes === 1 ? q.liveParticipant.get(participantId) : undefined;
      return r && toLiveParticipant(r);
    },
    async listLiveParticipants(projectId, roomId, seenSince) {
      return q.listLiveParticipants.all({ projectId, roomId: roomId ?? null, seenSince }).map(toLiveParticipant);
    },
    async heartbeatMediaNode(nodeId, nowSec) { q.heartbeatMediaNode.run(nodeId, nowSec); },
    async clearMediaNode(nodeId) { clearMediaNode(nodeId); },
    async purgeMediaNodes(seenBefore) { return purgeMediaNodes(seenBefore); },
    async insertRoomCutoff(c) {
      return toRoomCutoff(q.insertRoomCutoff.get(c.projectId, c.roomId, c.userId ?? EVERY_USER, c.cutAt, c.expiresAt)!);
    },
    async roomCutoff(projectId, roomId, userId) { return q.roomCutoff.get(projectId, roomId, userId, EVERY_USER) ?? undefined; },
    async listRoomCutoffs(nowSec) { return q.listRoomCutoffs.all(nowSec).map(toRoomCutoff); },
    async purgeRoomCutoffs(nowSec) { return q.purgeRoomCutoffs.run(nowSec).changes; },
  };
}
