/**
 * The session history (docs/console.md, "Session history"): every media session a media node
 * admitted, from its join to its leave, kept for `SESSION_RETENTION_DAYS` days after it ended.
 */
import type { ParticipantLeftReason } from '@rtc/protocol';

/** Why a session of the history ended: as `participant.left` says, or `node_lost` when its media node stopped answering. */
export type SessionEndReason = ParticipantLeftReason | 'node_lost';

/** What `media_sessions.reason` holds for a session whose media node was purged as stale, or restarted after a crash. */
export const NODE_LOST: SessionEndReason = 'node_lost';

/** One media session: open while `leftAt` is null. Times in seconds since the epoch. */
export interface MediaSessionRecord {
  readonly participantId: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly userId: string;
  readonly role: string;
  /** `host:port` of the media node, as it announces itself; null for a hub without presence. */
  readonly mediaNode: string | null;
  readonly joinedAt: number;
  readonly leftAt: number | null;
  readonly reason: SessionEndReason | null;
  /** What its minutes are priced as, decided by its media node at the leave (sessions/usage-kind.ts); null before. */
  readonly usageKind: string | null;
  /** Its media went through a TURN relay. */
  readonly relayed: boolean;
}

/** How a media node classed a session's minutes when it ended. */
export interface SessionUsageKind {
  readonly usageKind: string;
  readonly relayed: boolean;
}

/** Seconds of one UTC day (`dayStart`) spent in sessions of one usage kind (null: not classed), relayed or not. */
export interface MediaSecondsOfKind {
  readonly dayStart: number;
  readonly usageKind: string | null;
  readonly relayed: boolean;
  readonly seconds: number;
}

/** The media sessions' slice of the store. */
export interface MediaSessionStore {
  /** Records a session that joined (open); a second call for the same participant changes nothing. */
  openMediaSession(session: Omit<MediaSessionRecord, 'leftAt' | 'reason' | 'usageKind' | 'relayed'>): Promise<void>;
  /** Ends an open session, with its usage kind; one already ended keeps its end. */
  closeMediaSession(participantId: string, leftAt: number, reason: SessionEndReason, usage?: SessionUsageKind): Promise<void>;
  /** A project's session, open or ended. */
  getMediaSession(projectId: string, participantId: string): Promise<MediaSessionRecord | undefined>;
  /** A project's sessions (of one room when `roomId` is given), newest join first, after `afterId` when given. */
  listMediaSessions(projectId: string, page: { readonly roomId?: string | undefined; readonly afterId?: string | undefined; readonly limit: number }): Promise<MediaSessionRecord[]>;
  /**
   * Seconds spent in sessions of the project in each of `days` consecutive UTC days from `fromSec`
   * (a day's start), a session counting on each day it overlaps; an open one counts up to `nowSec`.
   */
  mediaSecondsPerDay(projectId: string, fromSec: number, days: number, nowSec: number): Promise<number[]>;
  /** The same seconds split by usage kind and relay, in any order; groups without seconds may be left out. */
  mediaSecondsPerDayByKind(projectId: string, fromSec: number, days: number, nowSec: number): Promise<MediaSecondsOfKind[]>;
  /** Forgets sessions that ended before `leftBefore`; how many. */
  purgeMediaSessions(leftBefore: number): Promise<number>;
}

/** How long an ended session stays in the history. */
export const SESSION_RETENTION_DAYS = 90;
