import type pg from 'pg';
import { pgQueries } from '../sql/postgres.ts';
import { SESSION_COLUMNS, toMediaSession, type MediaSessionRow } from './rows.ts';
import type { MediaSessionStore } from './store.ts';

/**
 * A statement that ends the open sessions of the media nodes named in a CTE `nodes(node_id, seen_at)`
 * at each node's last heartbeat (not before their join): see rooms/postgres.ts.
 */
export const POSTGRES_CLOSE_NODE_SESSIONS = `UPDATE media_sessions s SET reason = 'node_lost',
  left_at = GREATEST(s.joined_at, COALESCE(n.seen_at, s.joined_at))
  FROM nodes n WHERE s.media_node = n.node_id AND s.left_at IS NULL`;

export function postgresSessionStore(pool: pg.Pool): MediaSessionStore {
  const { rows, one, changed } = pgQueries(pool);
  return {
    async openMediaSession(s) {
      await pool.query(`INSERT INTO media_sessions (participant_id, project_id, room_id, user_id, role, media_node, joined_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (participant_id) DO NOTHING`,
      [s.participantId, s.projectId, s.roomId, s.userId, s.role, s.mediaNode, s.joinedAt]);
    },
    async closeMediaSession(participantId, leftAt, reason, usage) {
      await pool.query(`UPDATE media_sessions SET left_at = GREATEST(joined_at, $2), reason = $3, usage_kind = $4, relayed = $5
        WHERE participant_id = $1 AND left_at IS NULL`, [participantId, leftAt, reason, usage?.usageKind ?? null, usage?.relayed === true]);
    },
    async getMediaSession(projectId, participantId) {
      const r = await one<MediaSessionRow>(`SELECT ${SESSION_COLUMNS} FROM media_sessions WHERE project_id = $1 AND participant_id = $2`,
        [projectId, participantId]);
      return r && toMediaSession(r);
    },
    async listMediaSessions(projectId, page) {
      return (await rows<MediaSessionRow>(`SELECT ${SESSION_COLUMNS} FROM media_sessions
        WHERE project_id = $1 AND ($2::text IS NULL OR room_id = $2)
        AND ($3::text IS NULL OR seq < (SELECT seq FROM media_sessions WHERE participant_id = $3))
        ORDER BY seq DESC LIMIT $4`, [projectId, page.roomId ?? null, page.afterId ?? null, page.limit])).map(toMediaSession);
    },
    async mediaSecondsPerDay(projectId, fromSec, days, nowSec) {
      if (days <= 0) return [];
      // GREATEST and LEAST skip NULLs: the row of a day without sessions is filtered out, not counted whole
      const found = await rows<{ d: number; seconds: number }>(`SELECT d, COALESCE(sum(GREATEST(0,
          LEAST(COALESCE(s.left_at, $4), d + 86400) - GREATEST(s.joined_at, d))) FILTER (WHERE s.seq IS NOT NULL), 0)::bigint AS seconds
        FROM generate_series($2::bigint, $3::bigint, 86400) AS d
        LEFT JOIN media_sessions s ON s.project_id = $1 AND s.joined_at < d + 86400 AND COALESCE(s.left_at, $4) > d
        GROUP BY d ORDER BY d`, [projectId, fromSec, fromSec + (days - 1) * 86_400, nowSec]);
      return found.map((r) => Number(r.seconds));
    },
    async mediaSecondsPerDayByKind(projectId, fromSec, days, nowSec) {
      if (days <= 0) return [];
      const found = await rows<{ d: string; usage_kind: string | null; relayed: boolean; seconds: string }>(`SELECT d, s.usage_kind, s.relayed,
          sum(GREATEST(0, LEAST(COALESCE(s.left_at, $4), d + 86400) - GREATEST(s.joined_at, d)))::bigint AS seconds
        FROM generate_series($2::bigint, $3::bigint, 86400) AS d
        JOIN media_sessions s ON s.project_id = $1 AND s.joined_at < d + 86400 AND COALESCE(s.left_at, $4) > d
        GROUP BY d, s.usage_kind, s.relayed`, [projectId, fromSec, fromSec + (days - 1) * 86_400, nowSec]);
      return found.map((r) => ({ dayStart: Number(r.d), usageKind: r.usage_kind, relayed: r.relayed, seconds: Number(r.seconds) }));
    },
    async purgeMediaSessions(leftBefore) { return changed('DELETE FROM media_sessions WHERE left_at < $1', [leftBefore]); },
  };
}
