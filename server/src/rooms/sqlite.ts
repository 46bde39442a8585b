import type Database from 'better-sqlite3';
import { SQLITE_CLOSE_NODE_SESSIONS } from '../sessions/sqlite.ts';
import { EVERY_USER } from './cutoff.ts';
import {
  mergeAttributes, toLiveParticipant, toPermissions, toRoomCutoff, toRoomRecord, withMuted,
  type GrantPermissionsRow, type LiveParticipantRow, type RoomCutoffRow, type RoomSettingsRow,
} from './rows.ts';
import type {
  GrantPermissionStore, LiveParticipantRecord, LiveParticipantStore, MediaNodeStore, ParticipantMetadataPatch, RoomCutoffStore, RoomRecord,
  RoomSettingsStore,
} from './store.ts';

/** A `room_settings` row is live while somebody is joined, and for `empty_timeout` seconds after the room emptied. */
const LIVE_ROOM = '(emptied_at IS NULL OR emptied_at + empty_timeout > @now)';
/** The room ids a page names (`@roomIds`: a JSON array, or null for every room). */
const IN_PAGE = (column: string): string => `(@roomIds IS NULL OR ${column} IN (SELECT value FROM json_each(@roomIds)))`;

/**
 * The room module's part of the SQLite store (participants live on the media nodes, the nodes'
 * heartbeats, and the cut-offs of removals and ended rooms), on its connection.
 */
export function sqliteRoomStore(
  db: Database.Database,
): LiveParticipantStore & MediaNodeStore & RoomCutoffStore & RoomSettingsStore & GrantPermissionStore {
  const q = {
    upsertLiveParticipant: db.prepare(`INSERT INTO live_participants (participant_id, project_id, room_id, user_id, role,
      publish_streams, subscribe_streams, subscribe_room, joined_at, room_started_at, media_node, grants, metadata, attributes, streams)
      VALUES (@participantId, @projectId, @roomId, @userId, @role, @publishStreams, @subscribeStreams, @subscribeRoom,
      @joinedAt, @roomStartedAt, @mediaNode, @grants, @metadata, @attributes, @streams) ON CONFLICT (participant_id) DO UPDATE SET
      publish_streams = excluded.publish_streams, subscribe_streams = excluded.subscribe_streams,
      subscribe_room = excluded.subscribe_room, grants = excluded.grants, streams = excluded.streams`),
    setLiveStreams: db.prepare<[string, string]>('UPDATE live_participants SET streams = ? WHERE participant_id = ?'),
    setLiveQuality: db.prepare<[string, string]>('UPDATE live_participants SET quality = ? WHERE participant_id = ?'),
    deleteLiveParticipant: db.prepare<[string]>('DELETE FROM live_participants WHERE participant_id = ?'),
    updateLiveParticipant: db.prepare<{ id: string; pub: string; subs: string; subRoom: number }>(`UPDATE live_participants
      SET publish_streams = @pub, subscribe_streams = @subs, subscribe_room = @subRoom WHERE participant_id = @id`),
    setParticipantMetadata: db.prepare<{ id: string; metadata: string; attributes: string }>(`UPDATE live_participants
      SET metadata = @metadata, attributes = @attributes WHERE participant_id = @id`),
    roomRecord: db.prepare<{ projectId: string; roomId: string; now: number }, RoomSettingsRow>(`SELECT * FROM room_settings
      WHERE project_id = @projectId AND room_id = @roomId AND ${LIVE_ROOM}`),
    listRoomRecords: db.prepare<{ projectId: string; roomIds: string | null; now: number }, RoomSettingsRow>(`SELECT * FROM room_settings
      WHERE project_id = @projectId AND ${IN_PAGE('room_id')} AND ${LIVE_ROOM} ORDER BY room_id`),
    // each side read up to the page's size in room id order, then merged: never more than a page leaves the database
    listRoomIds: db.prepare<{ projectId: string; roomIds: string | null; afterId: string; limit: number; seenSince: number; now: number }, string>(
      `SELECT room_id FROM (SELECT DISTINCT p.room_id FROM live_participants p JOIN media_node_heartbeats h ON h.node_id = p.media_node
         WHERE p.project_id = @projectId AND p.room_id > @afterId AND ${IN_PAGE('p.room_id')} AND h.seen_at >= @seenSince
         ORDER BY p.room_id LIMIT @limit)
       UNION SELECT room_id FROM (SELECT room_id FROM room_settings
         WHERE project_id = @projectId AND room_id > @afterId AND ${IN_PAGE('room_id')} AND emptied_at IS NOT NULL AND ${LIVE_ROOM}
         ORDER BY room_id LIMIT @limit)
       ORDER BY room_id LIMIT @limit`).pluck(),
    roomsAhead: db.prepare<{ projectId: string; now: number }, number>(`SELECT count(*) FROM room_settings
      WHERE project_id = @projectId AND started_at IS NULL AND ${LIVE_ROOM}`).pluck(),
    putRoom: db.prepare<RoomSettingsRow>(`INSERT OR REPLACE INTO room_settings (project_id, room_id, metadata, max_participants,
      empty_timeout, created_at, emptied_at, started_at) VALUES (@project_id, @room_id, @metadata, @max_participants, @empty_timeout,
      @created_at, @emptied_at, @started_at)`),
    updateRoom: db.prepare<{ projectId: string; roomId: string; now: number; metadata: string | null; max: number | null; timeout: number | null }>(
      `UPDATE room_settings SET metadata = coalesce(@metadata, metadata), max_participants = coalesce(@max, max_participants),
       empty_timeout = coalesce(@timeout, empty_timeout) WHERE project_id = @projectId AND room_id = @roomId AND ${LIVE_ROOM}`),
    setRoomEmptiedAt: db.prepare<{ projectId: string; roomId: string; now: number; emptiedAt: number | null }>(`UPDATE room_settings
      SET emptied_at = @emptiedAt, started_at = coalesce(started_at, CASE WHEN @emptiedAt IS NULL THEN @now END) WHERE project_id = @projectId AND room_id = @roomId AND ${LIVE_ROOM}`),
    purgeRoomRecords: db.prepare<{ now: number }>(`DELETE FROM room_settings WHERE NOT ${LIVE_ROOM}`),
    liveParticipant: db.prepare<[string], LiveParticipantRow>('SELECT * FROM live_participants WHERE participant_id = ?'),
    listLiveParticipants: db.prepare<{ projectId: string; roomIds: string | null; seenSince: number }, LiveParticipantRow>(
      `SELECT p.* FROM live_participants p JOIN media_node_heartbeats h ON h.node_id = p.media_node
       WHERE p.project_id = @projectId AND ${IN_PAGE('p.room_id')} AND h.seen_at >= @seenSince
       ORDER BY p.joined_at, p.rowid`),
    heartbeatMediaNode: db.prepare<[string, number]>(`INSERT INTO media_node_heartbeats (node_id, seen_at) VALUES (?, ?)
      ON CONFLICT (node_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)`),
    closeNodeSessions: db.prepare<{ nodeId: string }>(SQLITE_CLOSE_NODE_SESSIONS),
    clearNodeParticipants: db.prepare<[string]>('DELETE FROM live_participants WHERE media_node = ?'),
    clearNodeHeartbeat: db.prepare<[string]>('DELETE FROM media_node_heartbeats WHERE node_id = ?'),
    clearNodeRooms: db.prepare<[string]>('DELETE FROM room_nodes WHERE node_id = ?'),
    openRoomOnNode: db.prepare<[string, string, string]>('INSERT OR IGNORE INTO room_nodes (project_id, room_id, node_id) VALUES (?, ?, ?)'),
    closeRoomOnNode: db.prepare<[string, string, string]>('DELETE FROM room_nodes WHERE project_id = ? AND room_id = ? AND node_id = ?'),
    otherRoomNodes: db.prepare<[string, string, string, number], number>(`SELECT count(*) FROM room_nodes r
      JOIN media_node_heartbeats h ON h.node_id = r.node_id WHERE r.project_id = ? AND r.room_id = ? AND r.node_id <> ? AND h.seen_at >= ?`).pluck(),
    staleNodes: db.prepare<[number], string>('SELECT node_id FROM media_node_heartbeats WHERE seen_at < ?').pluck(),
    insertRoomCutoff: db.prepare<[string, string, string, number, number], RoomCutoffRow>(`INSERT INTO room_cutoffs
      (project_id, room_id, user_id, cut_at, expires_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (project_id, room_id, user_id) DO UPDATE SET cut_at = max(cut_at, excluded.cut_at),
      expires_at = max(expires_at, excluded.expires_at) RETURNING *`),
    roomCutoff: db.prepare<[string, string, string, string], number | null>(`SELECT max(cut_at) FROM room_cutoffs
      WHERE project_id = ? AND room_id = ? AND user_id IN (?, ?)`).pluck(),
    listRoomCutoffs: db.prepare<[number], RoomCutoffRow>('SELECT * FROM room_cutoffs WHERE expires_at >= ?'),
    purgeRoomCutoffs: db.prepare<[number]>('DELETE FROM room_cutoffs WHERE expires_at < ?'),
    putGrantPermissions: db.prepare<{ grantId: string; projectId: string; pub: string; subs: string; subRoom: number; expiresAt: number; setAt: number }>(
      `INSERT INTO grant_permissions (grant_id, project_id, publish_streams, subscribe_streams, subscribe_room, expires_at, set_at)
       VALUES (@grantId, @projectId, @pub, @subs, @subRoom, @expiresAt, @setAt) ON CONFLICT (grant_id) DO UPDATE SET
       publish_streams = excluded.publish_streams, subscribe_streams = excluded.subscribe_streams,
       subscribe_room = excluded.subscribe_room, expires_at = excluded.expires_at, set_at = excluded.set_at
       WHERE grant_permissions.project_id = excluded.project_id AND grant_permissions.set_at <= excluded.set_at`),
    grantPermissions: db.prepare<[string, string, number], GrantPermissionsRow>(`SELECT publish_streams, subscribe_streams, subscribe_room, set_at
      FROM grant_permissions WHERE grant_id = ? AND project_id = ? AND expires_at > ?`),
    purgeGrantPermissions: db.prepare<[number]>('DELETE FROM grant_permissions WHERE expires_at <= ?'),
  };
  const putGrantPermissions = db.transaction((records: Parameters<GrantPermissionStore['putGrantPermissions']>[0]): void => {
    for (const r of records) {
      q.putGrantPermissions.run({
        grantId: r.grantId, projectId: r.projectId, pub: JSON.stringify(r.publishStreams), subs: JSON.stringify(r.subscribeStreams),
        subRoom: r.subscribeRoom ? 1 : 0, expiresAt: r.expiresAt, setAt: r.setAt,
      });
    }
  });

  // the node's open sessions end at its last heartbeat (docs/console.md, "Session history")
  const clearMediaNode = db.transaction((nodeId: string): void => {
    q.closeNodeSessions.run({ nodeId });
    q.clearNodeParticipants.run(nodeId);
    q.clearNodeHeartbeat.run(nodeId);
    q.clearNodeRooms.run(nodeId);
  });
  // the write first: the transaction holds the file's write lock from it, so two processes take turns
  const roomOnNode = db.transaction((open: boolean, projectId: string, roomId: string, nodeId: string, seenSince: number): boolean => {
    (open ? q.openRoomOnNode : q.closeRoomOnNode).run(projectId, roomId, nodeId);
    return q.otherRoomNodes.get(projectId, roomId, nodeId, seenSince) === 0;
  });
  const purgeMediaNodes = db.transaction((seenBefore: number): number => {
    const stale = q.staleNodes.all(seenBefore);
    for (const nodeId of stale) clearMediaNode(nodeId);
    return stale.length;
  });
  const liveParams = (p: LiveParticipantRecord) => ({
    ...p, publishStreams: JSON.stringify(p.publishStreams), subscribeStreams: JSON.stringify(p.subscribeStreams),
    subscribeRoom: p.subscribeRoom ? 1 : 0, grants: JSON.stringify(p.grants), attributes: JSON.stringify(p.attributes),
    streams: JSON.stringify(p.streams),
  });
  const updateMetadata = db.transaction((
    participantId: string, patch: ParticipantMetadataPatch, check: ((attributes: Record<string, string>) => void) | undefined,
  ): LiveParticipantRecord | undefined => {
    const row = q.liveParticipant.get(participantId);
    if (!row) return undefined;
    const current = toLiveParticipant(row);
    const attributes = mergeAttributes(current.attributes, patch.attributes);
    check?.(attributes);
    q.setParticipantMetadata.run({ id: participantId, metadata: patch.metadata ?? current.metadata, attributes: JSON.stringify(attributes) });
    return toLiveParticipant(q.liveParticipant.get(participantId)!);
  });
  const roomRow = (r: RoomRecord): RoomSettingsRow => ({
    project_id: r.projectId, room_id: r.roomId, metadata: r.metadata, max_participants: r.maxParticipants,
    empty_timeout: r.emptyTimeout, created_at: r.createdAt, emptied_at: r.emptiedAt, started_at: r.emptiedAt === null ? r.createdAt : null,
  });
  const createRoom = db.transaction((room: RoomRecord, now: number, maxAhead: number | undefined) => {
    const stored = q.roomRecord.get({ projectId: room.projectId, roomId: room.roomId, now });
    if (stored) return { room: toRoomRecord(stored), created: false };
    if (maxAhead !== undefined && room.emptiedAt !== null && q.roomsAhead.get({ projectId: room.projectId, now })! >= maxAhead) return undefined;
    // an expired record of the room is replaced: that room finished
    q.putRoom.run(roomRow(room));
    return { room, created: true };
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
    async setLiveQuality(participantId, quality) { q.setLiveQuality.run(JSON.stringify(quality), participantId); },
    async muteLiveStream(participantId, streamId, muted) { return muteLiveStream.immediate(participantId, streamId, muted); },
    async updateLiveParticipant(participantId, perm) {
      const changes = q.updateLiveParticipant.run({
        id: participantId, pub: JSON.stringify(perm.publishStreams), subs: JSON.stringify(perm.subscribeStreams),
        subRoom: perm.subscribeRoom ? 1 : 0,
      }).changes;
      const r = changes === 1 ? q.liveParticipant.get(participantId) : undefined;
      return r && toLiveParticipant(r);
    },
    async updateLiveParticipantMetadata(participantId, patch, check) { return updateMetadata.immediate(participantId, patch, check); },
    // BEGIN IMMEDIATE: processes on one file count and insert one after the other
    async createRoom(room, nowSec, maxAhead) { return createRoom.immediate(room, nowSec, maxAhead); },
    async updateRoom(projectId, roomId, patch, now) {
      const changes = q.updateRoom.run({
        projectId, roomId, now, metadata: patch.metadata ?? null, max: patch.maxParticipants ?? null, timeout: patch.emptyTimeout ?? null,
      }).changes;
      const r = changes === 1 ? q.roomRecord.get({ projectId, roomId, now }) : undefined;
      return r && toRoomRecord(r);
    },
    async getRoomRecord(projectId, roomId, now) {
      const r = q.roomRecord.get({ projectId, roomId, now });
      return r && toRoomRecord(r);
    },
    async listRoomIds(projectId, page, now) {
      return q.listRoomIds.all({
        projectId, roomIds: roomIdsParam(page.roomIds), afterId: page.afterId ?? '', limit: page.limit, seenSince: page.seenSince, now,
      });
    },
    async listRoomRecords(projectId, roomIds, now) {
      return q.listRoomRecords.all({ projectId, roomIds: roomIdsParam(roomIds), now }).map(toRoomRecord);
    },
    async setRoomEmptiedAt(projectId, roomId, emptiedAt, now) { q.setRoomEmptiedAt.run({ projectId, roomId, emptiedAt, now }); },
    async purgeRoomRecords(now) { return q.purgeRoomRecords.run({ now }).changes; },
    async listLiveParticipants(projectId, rooms, seenSince) {
      return q.listLiveParticipants.all({ projectId, roomIds: roomIdsParam(typeof rooms === 'string' ? [rooms] : rooms), seenSince })
        .map(toLiveParticipant);
    },
    async heartbeatMediaNode(nodeId, nowSec) { q.heartbeatMediaNode.run(nodeId, nowSec); },
    async clearMediaNode(nodeId) { clearMediaNode(nodeId); },
    async purgeMediaNodes(seenBefore) { return purgeMediaNodes(seenBefore); },
    async openRoomOnNode(projectId, roomId, nodeId, seenSince) { return roomOnNode(true, projectId, roomId, nodeId, seenSince); },
    async closeRoomOnNode(projectId, roomId, nodeId, seenSince) { return roomOnNode(false, projectId, roomId, nodeId, seenSince); },
    async insertRoomCutoff(c) {
      return toRoomCutoff(q.insertRoomCutoff.get(c.projectId, c.roomId, c.userId ?? EVERY_USER, c.cutAt, c.expiresAt)!);
    },
    async roomCutoff(projectId, roomId, userId) { return q.roomCutoff.get(projectId, roomId, userId, EVERY_USER) ?? undefined; },
    async listRoomCutoffs(nowSec) { return q.listRoomCutoffs.all(nowSec).map(toRoomCutoff); },
    async purgeRoomCutoffs(nowSec) { return q.purgeRoomCutoffs.run(nowSec).changes; },
    async putGrantPermissions(records) { putGrantPermissions(records); },
    async grantPermissions(projectId, grantId, nowSec) {
      const r = q.grantPermissions.get(grantId, projectId, nowSec);
      return r && toPermissions(r);
    },
    async purgeGrantPermissions(nowSec) { return q.purgeGrantPermissions.run(nowSec).changes; },
  };
}

const roomIdsParam = (roomIds: readonly string[] | undefined): string | null => (roomIds === undefined ? null : JSON.stringify(roomIds));
