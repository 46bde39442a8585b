import { paginate, type PageQuery } from '../core/cursor.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { admitConsoleRead, getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';
import type { MediaSessionRecord, MediaSessionStore } from './store.ts';
import { AUDIO_KIND, TURN_RELAY_KIND } from './usage-kind.ts';
import type { PriceList } from '../billing/catalog/price-list.ts';
import type { MediaSession, ParticipantDayMinutes } from '@rtc/protocol';

/** A media session as the session history shows it (docs/console.md, "Session history"). */
export type SessionView = MediaSession;

export const sessionView = (s: MediaSessionRecord, now: number): SessionView => ({
  participant_id: s.participantId, room_id: s.roomId, user_id: s.userId, role: s.role, media_node: s.mediaNode,
  joined_at: s.joinedAt, left_at: s.leftAt, reason: s.reason, duration_seconds: Math.max(0, (s.leftAt ?? now) - s.joinedAt),
  usage_kind: s.usageKind, turn_relay: s.relayed,
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
 * first: a session counts on each day it overlaps, an open one up to now; per usage kind of the price
 * list too (docs/console.md, "Usage").
 */
export async function participantMinutesPerDay(
  deps: ServiceDeps<MediaSessionStore>, list: PriceList, projectId: string, fromSec: number, days: readonly string[],
): Promise<DayMinutes[]> {
  const now = nowSec(deps.clock);
  const [seconds, byKind] = await Promise.all([
    deps.store.mediaSecondsPerDay(projectId, fromSec, days.length, now),
    deps.store.mediaSecondsPerDayByKind(projectId, fromSec, days.length, now),
  ]);
  const kindSeconds = days.map(() => new Map<string, number>(list.usage_kinds.map((k) => [k.id, 0])));
  for (const row of byKind) {
    const held = kindSeconds[Math.round((row.dayStart - fromSec) / 86_400)];
    if (!held) continue;
    // a session is classed at its leave: until then (or when its media node was lost) its minutes are audio
    const kind = row.usageKind ?? AUDIO_KIND;
    held.set(kind, (held.get(kind) ?? 0) + row.seconds);
    if (row.relayed) held.set(TURN_RELAY_KIND, (held.get(TURN_RELAY_KIND) ?? 0) + row.seconds);
  }
  return days.map((day, i) => {
    const s = seconds[i] ?? 0;
    const minutes = Object.fromEntries([...(kindSeconds[i] ?? [])].map(([kind, sec]) => [kind, Math.ceil(sec / 60)]));
    return { day, participant_seconds: s, participant_minutes: Math.ceil(s / 60), minutes_by_kind: minutes };
  });
}
