import type pg from 'pg';
import { inTransaction, pgQueries } from '../sql/postgres.ts';
import { POSTGRES_CLOSE_NODE_SESSIONS } from '../sessions/postgres.ts';
import { EVERY_USER } from './cutoff.ts';
import {
  mergeAttributes, toLiveParticipant, toPermissions, toRoomCutoff, toRoomRecord,
  type GrantPermissionsRow, type LiveParticipantRow, type RoomCutoffRow, type RoomSettingsRow,
} from './rows.ts';
import type {
  GrantPermissionStore, LiveParticipantStore, MediaNodeStore, RoomCutoffStore, RoomRecord, RoomSettingsStore,
} from './store.ts';

/** A `room_settings` row is live while somebody is joined, and for `empty_timeout` seconds after the room emptied ($1: now). */
const LIVE_ROOM = '(emptied_at IS NULL OR emptied_at + empty_timeout > $1)';

/** The class of the advisory locks that serialise a project's creations of rooms ahead (the other key: the project id's hash). */
const ROOMS_AHEAD_LOCK_CLASS = 0x726f_6f6d; // 'room'

/** The class of the advisory locks that serialise the nodes opening and closing one room (the other key: the room's hash). */
const ROOM_NODES_LOCK_CLASS = 0x6e6f_6465; // 'node'

/** Opens or closes a room on a node; true when no other node seen since `seenSince` holds it (it starts or finishes). */
function roomOnNode(pool: pg.Pool, open: boolean, projectId: string, roomId: string, nodeId: string, seenSince: number): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ROOM_NODES_LOCK_CLASS, JSON.stringify([projectId, roomId])]);
    await client.query(open
      ? 'INSERT INTO room_nodes (project_id, room_id, node_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING'
      : 'DELETE FROM room_nodes WHERE project_id = $1 AND room_id = $2 AND node_id = $3', [projectId, roomId, nodeId]);
    const others = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM room_nodes r JOIN media_node_heartbeats h ON h.node_id = r.node_id
      WHERE r.project_id = $1 AND r.room_id = $2 AND r.node_id <> $3 AND h.seen_at >= $4`, [projectId, roomId, nodeId, seenSince]);
    return others.rows[0]?.n === 0;
  });
}

/** The live record of a room, on the pool or inside a transaction. */
async function roomRecordIn(db: pg.Pool | pg.PoolClient, projectId: string, roomId: string, now: number): Promise<RoomRecord | undefined> {
  const r = (await db.query<RoomSettingsRow>(`SELECT * FROM room_settings WHERE project_id = $2 AND room_id = $3 AND ${LIVE_ROOM}`,
    [now, projectId, roomId])).rows[0];
  return r && toRoomRecord(r);
}

/** Stores `room` unless a live record of it is stored (an expired one is replaced: that room finished); the one stored. */
async function storeRoom(
  db: pg.Pool | pg.PoolClient, room: RoomRecord, now: number,
): Promise<{ readonly room: RoomRecord; readonly created: boolean }> {
  for (;;) {
    const r = (await db.query<RoomSettingsRow>(`INSERT INTO room_settings (project_id, room_id, metadata, max_participants, empty_timeout,
      created_at, emptied_at, started_at) VALUES ($2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (project_id, room_id) DO UPDATE SET
      metadata = EXCLUDED.metadata, max_participants = EXCLUDED.max_participants, empty_timeout = EXCLUDED.empty_timeout,
      created_at = EXCLUDED.created_at, emptied_at = EXCLUDED.emptied_at, started_at = EXCLUDED.started_at
      WHERE NOT (room_settings.emptied_at IS NULL OR room_settings.emptied_at + room_settings.empty_timeout > $1) RETURNING *`,
    [now, room.projectId, room.roomId, room.metadata, room.maxParticipants, room.emptyTimeout, room.createdAt, room.emptiedAt,
      room.emptiedAt === null ? room.createdAt : null])).rows[0];
    if (r) return { room: toRoomRecord(r), created: true };
    const stored = await roomRecordIn(db, room.projectId, room.roomId, now);
    // expired between the two statements: try again
    if (stored) return { room: stored, created: false };
  }
}

/**
 * The room module's part of the PostgreSQL store (participants live on the media nodes, the nodes'
 * heartbeats, and the cut-offs of removals and ended rooms), on its pool.
 */
export function postgresRoomStore(
  pool: pg.Pool,
): LiveParticipantStore & MediaNodeStore & RoomCutoffStore & RoomSettingsStore & GrantPermissionStore {
  const { rows, one, changed } = pgQueries(pool);
  return {
    async upsertLiveParticipant(p) {
      await pool.query(`INSERT INTO live_participants (participant_id, project_id, room_id, user_id, role, publish_streams,
        subscribe_streams, subscribe_room, joined_at, room_started_at, media_node, grants, metadata, attributes, streams)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (participant_id) DO UPDATE SET
        publish_streams = EXCLUDED.publish_streams, subscribe_streams = EXCLUDED.subscribe_streams,
        subscribe_room = EXCLUDED.subscribe_room, grants = EXCLUDED.grants, streams = EXCLUDED.streams`,
      [p.participantId, p.projectId, p.roomId, p.userId, p.role, JSON.stringify(p.publishStreams),
        JSON.stringify(p.subscribeStreams), p.subscribeRoom, p.joinedAt, p.roomStartedAt, p.mediaNode, JSON.stringify(p.grants),
        p.metadata, JSON.stringify(p.attributes), JSON.stringify(p.streams)]);
    },
    async setLiveStreams(participantId, streams) {
      await pool.query('UPDATE live_participants SET streams = $2 WHERE participant_id = $1', [participantId, JSON.stringify(streams)]);
    },
    async setLiveQuality(participantId, quality) {
      await pool.query('UPDATE live_participants SET quality = $2 WHERE participant_id = $1', [participantId, JSON.stringify(quality)]);
    },
    async muteLiveStream(participantId, streamId, muted) {
      // one statement: the row is locked from its read to its write, so a write of the media node cannot fall in between
      const r = await one<LiveParticipantRow>(`UPDATE live_participants SET streams = (
          SELECT jsonb_agg(CASE WHEN (s->>'streamId')::bigint = $2 THEN jsonb_set(s, '{muted}', to_jsonb($3::boolean)) ELSE s END
            ORDER BY i)::text
          FROM jsonb_array_elements(streams::jsonb) WITH ORDINALITY AS t(s, i))
        WHERE participant_id = $1 AND EXISTS (
          SELECT 1 FROM jsonb_array_elements(streams::jsonb) AS e(s) WHERE (s->>'streamId')::bigint = $2)
        RETURNING *`, [participantId, streamId, muted]);
      return r && toLiveParticipant(r);
    },
    async deleteLiveParticipant(participantId) {
      await pool.query('DELETE FROM live_participants WHERE participant_id = $1', [participantId]);
    },
    async updateLiveParticipant(participantId, perm) {
      const r = await one<LiveParticipantRow>(`UPDATE live_participants SET publish_streams = $2, subscribe_streams = $3,
        subscribe_room = $4 WHERE participant_id = $1 RETURNING *`,
      [participantId, JSON.stringify(perm.publishStreams), JSON.stringify(perm.subscribeStreams), perm.subscribeRoom]);
      return r && toLiveParticipant(r);
    },
    async updateLiveParticipantMetadata(participantId, patch, check) {
      // the row locked from its read to its write: concurrent changes merge one after the other, each checked on what it adds to
      return inTransaction(pool, async (client) => {
        const row = (await client.query<LiveParticipantRow>('SELECT * FROM live_participants WHERE participant_id = $1 FOR UPDATE',
          [participantId])).rows[0];
        if (!row) return undefined;
        const current = toLiveParticipant(row);
        const attributes = mergeAttributes(current.attributes, patch.attributes);
        check?.(attributes);
        const updated = (await client.query<LiveParticipantRow>(`UPDATE live_participants SET metadata = $2, attributes = $3
          WHERE participant_id = $1 RETURNING *`, [participantId, patch.metadata ?? current.metadata, JSON.stringify(attributes)])).rows[0];
        return updated && toLiveParticipant(updated);
      });
    },
    async createRoom(room, now, maxAhead) {
      if (maxAhead === undefined || room.emptiedAt === null) return storeRoom(pool, room, now);
      // the project's rooms ahead counted and the room stored under one lock per project: concurrent creations cannot pass the cap together
      return inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ROOMS_AHEAD_LOCK_CLASS, room.projectId]);
        const stored = await roomRecordIn(client, room.projectId, room.roomId, now);
        if (stored) return { room: stored, created: false };
        const ahead = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM room_settings
          WHERE project_id = $2 AND started_at IS NULL AND ${LIVE_ROOM}`, [now, room.projectId])).rows[0]!.n;
        return ahead >= maxAhead ? undefined : storeRoom(client, room, now);
      });
    },
    async updateRoom(projectId, roomId, patch, now) {
      const r = await one<RoomSettingsRow>(`UPDATE room_settings SET metadata = COALESCE($4, metadata),
        max_participants = COALESCE($5, max_participants), empty_timeout = COALESCE($6, empty_timeout)
        WHERE project_id = $2 AND room_id = $3 AND ${LIVE_ROOM} RETURNING *`,
      [now, projectId, roomId, patch.metadata ?? null, patch.maxParticipants ?? null, patch.emptyTimeout ?? null]);
      return r && toRoomRecord(r);
    },
    async getRoomRecord(projectId, roomId, now) { return roomRecordIn(pool, projectId, roomId, now); },
    async listRoomIds(projectId, page, now) {
      // each side read up to the page's size in room id order, then merged: never more than a page leaves the database
      return (await rows<{ room_id: string }>(`SELECT room_id FROM (
          (SELECT DISTINCT p.room_id COLLATE "C" AS room_id FROM live_participants p JOIN media_node_heartbeats h ON h.node_id = p.media_node
            WHERE p.project_id = $2 AND p.room_id COLLATE "C" > $3 AND ($4::text[] IS NULL OR p.room_id = ANY($4)) AND h.seen_at >= $5
            ORDER BY 1 LIMIT $6)
          UNION
          (SELECT room_id COLLATE "C" FROM room_settings
            WHERE project_id = $2 AND room_id COLLATE "C" > $3 AND ($4::text[] IS NULL OR room_id = ANY($4)) AND emptied_at IS NOT NULL
            AND ${LIVE_ROOM} ORDER BY 1 LIMIT $6)
        ) ids ORDER BY room_id COLLATE "C" LIMIT $6`,
      [now, projectId, page.afterId ?? '', page.roomIds ? [...page.roomIds] : null, page.seenSince, page.limit])).map((r) => r.room_id);
    },
    async listRoomRecords(projectId, roomIds, now) {
      return (await rows<RoomSettingsRow>(`SELECT * FROM room_settings WHERE project_id = $2 AND ($3::text[] IS NULL OR room_id = ANY($3))
        AND ${LIVE_ROOM} ORDER BY room_id COLLATE "C"`, [now, projectId, roomIds ? [...roomIds] : null])).map(toRoomRecord);
    },
    async setRoomEmptiedAt(projectId, roomId, emptiedAt, now) {
      await pool.query(`UPDATE room_settings SET emptied_at = $4::bigint,
        started_at = COALESCE(started_at, CASE WHEN $4::bigint IS NULL THEN $1::bigint END)
        WHERE project_id = $2 AND room_id = $3 AND ${LIVE_ROOM}`,
        [now, projectId, roomId, emptiedAt]);
    },
    async purgeRoomRecords(now) { return changed(`DELETE FROM room_settings WHERE NOT ${LIVE_ROOM}`, [now]); },
    async listLiveParticipants(projectId, rooms, seenSince) {
      const roomIds = typeof rooms === 'string' ? [rooms] : rooms && [...rooms];
      return (await rows<LiveParticipantRow>(`SELECT p.* FROM live_participants p
        JOIN media_node_heartbeats h ON h.node_id = p.media_node
        WHERE p.project_id = $1 AND ($2::text[] IS NULL OR p.room_id = ANY($2)) AND h.seen_at >= $3
        ORDER BY p.joined_at, p.seq`, [projectId, roomIds ?? null, seenSince])).map(toLiveParticipant);
    },
    async heartbeatMediaNode(nodeId, nowSec) {
      await pool.query(`INSERT INTO media_node_heartbeats (node_id, seen_at) VALUES ($1, $2) ON CONFLICT (node_id)
        DO UPDATE SET seen_at = GREATEST(media_node_heartbeats.seen_at, EXCLUDED.seen_at)`, [nodeId, nowSec]);
    },
    // the node's open sessions end at its last heartbeat (docs/console.md, "Session history")
    async clearMediaNode(nodeId) {
      await pool.query(`WITH nodes AS (SELECT $1::text AS node_id, (SELECT seen_at FROM media_node_heartbeats WHERE node_id = $1) AS seen_at),
        closed AS (${POSTGRES_CLOSE_NODE_SESSIONS}),
        gone AS (DELETE FROM live_participants WHERE media_node = $1),
        rooms AS (DELETE FROM room_nodes WHERE node_id = $1)
        DELETE FROM media_node_heartbeats WHERE node_id = $1`, [nodeId]);
    },
    async purgeMediaNodes(seenBefore) {
      const stale = await rows<{ node_id: string }>(`WITH nodes AS (DELETE FROM media_node_heartbeats WHERE seen_at < $1 RETURNING node_id, seen_at),
        closed AS (${POSTGRES_CLOSE_NODE_SESSIONS}),
        gone AS (DELETE FROM live_participants WHERE media_node IN (SELECT node_id FROM nodes)),
        rooms AS (DELETE FROM room_nodes WHERE node_id IN (SELECT node_id FROM nodes)) SELECT node_id FROM nodes`, [seenBefore]);
      return stale.length;
    },
    openRoomOnNode: (projectId, roomId, nodeId, seenSince) => roomOnNode(pool, true, projectId, roomId, nodeId, seenSince),
    closeRoomOnNode: (projectId, roomId, nodeId, seenSince) => roomOnNode(pool, false, projectId, roomId, nodeId, seenSince),
    async insertRoomCutoff(c) {
      const r = await one<RoomCutoffRow>(`INSERT INTO room_cutoffs (project_id, room_id, user_id, cut_at, expires_at)
        VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, room_id, user_id) DO UPDATE SET
        cut_at = GREATEST(room_cutoffs.cut_at, EXCLUDED.cut_at), expires_at = GREATEST(room_cutoffs.expires_at, EXCLUDED.expires_at)
        RETURNING *`, [c.projectId, c.roomId, c.userId ?? EVERY_USER, c.cutAt, c.expiresAt]);
      return toRoomCutoff(r!);
    },
    async roomCutoff(projectId, roomId, userId) {
      const r = await one<{ cut_at: number | null }>(`SELECT max(cut_at) AS cut_at FROM room_cutoffs
        WHERE project_id = $1 AND room_id = $2 AND user_id IN ($3, $4)`, [projectId, roomId, userId, EVERY_USER]);
      return r?.cut_at ?? undefined;
    },
    async listRoomCutoffs(nowSec) {
      return (await rows<RoomCutoffRow>('SELECT * FROM room_cutoffs WHERE expires_at >= $1', [nowSec])).map(toRoomCutoff);
    },
    async purgeRoomCutoffs(nowSec) { return changed('DELETE FROM room_cutoffs WHERE expires_at < $1', [nowSec]); },
    async putGrantPermissions(records) {
      if (records.length === 0) return;
      await pool.query(`INSERT INTO grant_permissions (grant_id, project_id, publish_streams, subscribe_streams, subscribe_room, expires_at, set_at)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::bigint[], $7::bigint[])
        ON CONFLICT (grant_id) DO UPDATE SET publish_streams = EXCLUDED.publish_streams, subscribe_streams = EXCLUDED.subscribe_streams,
        subscribe_room = EXCLUDED.subscribe_room, expires_at = EXCLUDED.expires_at, set_at = EXCLUDED.set_at
        WHERE grant_permissions.project_id = EXCLUDED.project_id AND grant_permissions.set_at <= EXCLUDED.set_at`,
      [records.map((r) => r.grantId), records.map((r) => r.projectId), records.map((r) => JSON.stringify(r.publishStreams)),
        records.map((r) => JSON.stringify(r.subscribeStreams)), records.map((r) => r.subscribeRoom), records.map((r) => r.expiresAt),
        records.map((r) => r.setAt)]);
    },
    async grantPermissions(projectId, grantId, nowSec) {
      const r = await one<GrantPermissionsRow>(`SELECT publish_streams, subscribe_streams, subscribe_room, set_at FROM grant_permissions
        WHERE grant_id = $1 AND project_id = $2 AND expires_at > $3`, [grantId, projectId, nowSec]);
      return r && toPermissions(r);
    },
    async purgeGrantPermissions(nowSec) { return changed('DELETE FROM grant_permissions WHERE expires_at <= $1', [nowSec]); },
  };
}
