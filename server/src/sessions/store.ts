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
}

/** The media sessions' slice of the store. */
export interface MediaSessionStore {
  /** Records a session that joined (open); a second call for the same participant changes nothing. */
  openMediaSession(session: Omit<MediaSessionRecord, 'leftAt' | 'reason'>): Promise<void>;
  /** Ends an open session; one already ended keeps its end. */
  closeMediaSession(participantId: string, leftAt: number, reason: SessionEndReason): Promise<void>;
  /** A project's session, open or ended. */
  getMediaSession(projectId: string, participantId: string): Promise<MediaSessionRecord | undefined>;
  /** A project's sessions (of one room when `roomId` is given), newest join first, after `afterId` when given. */
  listMediaSessions(projectId: string, page: { readonly roomId?: string | undefined; readonly afterId?: string | undefined; readonly limit: number }): Promise<MediaSessionRecord[]>;
  /**
   * Seconds spent in sessions of the project in each of `days` consecutive UTC days from `fromSec`
   * (a day's start), a session counting on each day it overlaps; an open one counts up to `nowSec`.
   */
  mediaSecondsPerDay(projectId: string, fromSec: number, days: number, nowSec: number): Promise<number[]>;
  /** Forgets sessions that ended before `leftBefore`; how many. */
  purgeMediaSessions(leftBefore: number): Promise<number>;
}

/** How long an ended session stays in the history. */
export const SESSION_RETENTION_DAYS = 90;
