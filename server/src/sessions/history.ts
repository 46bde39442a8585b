import { paginate, type PageQuery } from '../core/cursor.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { admitConsoleRead, getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';
import type { MediaSessionRecord, MediaSessionStore } from './store.ts';
import type { MediaSession, ParticipantDayMinutes } from '@rtc/protocol';

/** A media session as the session history shows it (docs/console.md, "Session history"). */
export type SessionView = MediaSession;

export const sessionView = (s: MediaSessionRecord, now: number): SessionView => ({
  participant_id: s.participantId, room_id: s.roomId, user_id: s.userId, role: s.role, media_node: s.mediaNode,
  joined_at: s.joinedAt, left_at: s.leftAt, reason: s.reason, duration_seconds: Math.max(0, (s.leftAt ?? now) - s.joinedAt),
});

/** A project's media sessions, newest join first, one page at a time; of one room with `roomId`. */
export async function listSessions(
  deps: ServiceDeps<MediaSessionStore & ProjectStore>, accountId: string, projectId: string,
  query: PageQuery & { readonly room_id?: string | undefined },
): Promise<{ sessions: SessionView[]; next_cursor: string | null }> {
  const project = await getOwnProject(deps, accountId, projectId);
  await admitConsoleRead(deps, accountId);
  const roomId = query.room_id;
  const page = await paginate({ listing: 'media-sessions', filters: { project: project.id, room: roomId } }, query, {
    has: async (id) => (await deps.store.getMediaSession(project.id, id)) !== undefined,
    list: async (afterId, limit) => (await deps.store.listMediaSessions(project.id, { roomId, afterId, limit }))
      .map((s) => ({ ...s, id: s.participantId })),
  });
  const now = nowSec(deps.clock);
  return { sessions: page.items.map((s) => sessionView(s, now)), next_cursor: page.nextCursor };
}

/** Participant minutes of one UTC day: the seconds spent in sessions, and those seconds in minutes rounded up. */
export type DayMinutes = ParticipantDayMinutes;

/**
 * The project's participant minutes in each of the UTC days from `fromSec` (a day's start), oldest
 * first: a session counts on each day it overlaps, an open one up to now.
 */
export async function participantMinutesPerDay(
  deps: ServiceDeps<MediaSessionStore>, projectId: string, fromSec: number, days: readonly string[],
): Promise<DayMinutes[]> {
  const seconds = await deps.store.mediaSecondsPerDay(projectId, fromSec, days.length, nowSec(deps.clock));
  return days.map((day, i) => {
    const s = seconds[i] ?? 0;
    return { day, participant_seconds: s, participant_minutes: Math.ceil(s / 60) };
  });
}
