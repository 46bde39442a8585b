import type Database from 'better-sqlite3';
import { SESSION_COLUMNS, toMediaSession, type MediaSessionRow } from './rows.ts';
import type { MediaSessionStore } from './store.ts';

/**
 * Ends the open sessions of a media node that is cleared (restarted after a crash) or purged as
 * stale, at the node's last heartbeat (not before their join): run before the heartbeat is deleted.
 */
export const SQLITE_CLOSE_NODE_SESSIONS = `UPDATE media_sessions SET reason = 'node_lost',
  left_at = max(joined_at, coalesce((SELECT seen_at FROM media_node_heartbeats WHERE node_id = @nodeId), joined_at))
  WHERE media_node = @nodeId AND left_at IS NULL`;

export function sqliteSessionStore(db: Database.Database): MediaSessionStore {
  const q = {
    open: db.prepare(`INSERT INTO media_sessions (participant_id, project_id, room_id, user_id, role, media_node, joined_at)
      VALUES (@participantId, @projectId, @roomId, @userId, @role, @mediaNode, @joinedAt) ON CONFLICT (participant_id) DO NOTHING`),
    close: db.prepare<[number, string, string | null, number, string]>(`UPDATE media_sessions SET left_at = max(joined_at, ?), reason = ?,
      usage_kind = ?, relayed = ? WHERE participant_id = ? AND left_at IS NULL`),
    get: db.prepare<[string, string], MediaSessionRow>(`SELECT ${SESSION_COLUMNS} FROM media_sessions WHERE project_id = ? AND participant_id = ?`),
    list: db.prepare<{ projectId: string; roomId: string | null; afterId: string | null; limit: number }, MediaSessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM media_sessions WHERE project_id = @projectId AND (@roomId IS NULL OR room_id = @roomId)
       AND (@afterId IS NULL OR seq < (SELECT seq FROM media_sessions WHERE participant_id = @afterId))
       ORDER BY seq DESC LIMIT @limit`),
    perDay: db.prepare<{ projectId: string; from: number; to: number; now: number }, { d: number; seconds: number }>(
      `WITH RECURSIVE days(d) AS (SELECT @from UNION ALL SELECT d + 86400 FROM days WHERE d + 86400 < @to)
       SELECT d, coalesce(sum(max(0, min(coalesce(s.left_at, @now), d + 86400) - max(s.joined_at, d))), 0) AS seconds
       FROM days LEFT JOIN media_sessions s ON s.project_id = @projectId AND s.joined_at < d + 86400
         AND coalesce(s.left_at, @now) > d
       GROUP BY d ORDER BY d`),
    perDayByKind: db.prepare<{ projectId: string; from: number; to: number; now: number },
      { d: number; usage_kind: string | null; relayed: number; seconds: number }>(
      `WITH RECURSIVE days(d) AS (SELECT @from UNION ALL SELECT d + 86400 FROM days WHERE d + 86400 < @to)
       SELECT d, s.usage_kind, s.relayed, sum(max(0, min(coalesce(s.left_at, @now), d + 86400) - max(s.joined_at, d))) AS seconds
       FROM days JOIN media_sessions s ON s.project_id = @projectId AND s.joined_at < d + 86400
         AND coalesce(s.left_at, @now) > d
       GROUP BY d, s.usage_kind, s.relayed`),
    purge: db.prepare<[number]>('DELETE FROM media_sessions WHERE left_at < ?'),
  };
  return {
    async openMediaSession(s) { q.open.run(s); },
    async closeMediaSession(participantId, leftAt, reason, usage) {
      q.close.run(leftAt, reason, usage?.usageKind ?? null, usage?.relayed === true ? 1 : 0, participantId);
    },
    async getMediaSession(projectId, participantId) {
      const r = q.get.get(projectId, participantId);
      return r && toMediaSession(r);
    },
    async listMediaSessions(projectId, page) {
      return q.list.all({ projectId, roomId: page.roomId ?? null, afterId: page.afterId ?? null, limit: page.limit }).map(toMediaSession);
    },
    async mediaSecondsPerDay(projectId, fromSec, days, nowSec) {
      if (days <= 0) return [];
      return q.perDay.all({ projectId, from: fromSec, to: fromSec + days * 86_400, now: nowSec }).map((r) => r.seconds);
    },
    async mediaSecondsPerDayByKind(projectId, fromSec, days, nowSec) {
      if (days <= 0) return [];
      return q.perDayByKind.all({ projectId, from: fromSec, to: fromSec + days * 86_400, now: nowSec })
        .map((r) => ({ dayStart: r.d, usageKind: r.usage_kind, relayed: r.relayed === 1, seconds: r.seconds }));
    },
    async purgeMediaSessions(leftBefore) { return q.purge.run(leftBefore).changes; },
  };
}
