import type { Logger } from 'pino';
import type { MediaCloseName, MediaLimits, ParticipantLeftReason } from '@rtc/protocol';
import type { GrantKeys, MediaGrant } from './grant-check.ts';
import type { GrantHolders } from '../../grant-guard/grant-holders.ts';
import type { MediaStats } from '../../metrics/media-stats.ts';
import type { RtcOptions } from '../webrtc/options.ts';
import type { Room, RoomSettings } from '../room/room.ts';
import type { Session } from './session.ts';
import type { RenewalChecks } from './renewal.ts';

/**
 * What a session needs of the server that holds it: grant keys, the clock, revocations, rooms and
 * the bookkeeping of open sessions. `MediaHub` implements it.
 */
export interface SessionHost extends Pick<RenewalChecks, 'grantPermissions'> {
  readonly keys: GrantKeys;
  readonly logger: Logger;
  readonly limits: MediaLimits;
  readonly stats: MediaStats;
  /** WebRTC media (docs/protocol/media.md, "WebRTC media"); undefined: `rtc_offer` is refused with `rtc_unavailable`. */
  readonly rtc: RtcOptions | undefined;
  readonly grantHolders: GrantHolders<Session>;
  nowMs(): number;
  /** Revoked, or cut off by its project's archive: asks the store when memory does not know. */
  isRefused(grant: MediaGrant): Promise<boolean>;
  /** The same, from memory only: re-checked once the store answered, as events may arrive meanwhile. */
  isRefusedInMemory(grant: MediaGrant): boolean;
  /**
   * The room, opened with `settings` when it is not open on this node. Settings are those of
   * `roomSettings`, read before the join is admitted.
   */
  roomFor(projectId: string, roomId: string, settings?: RoomSettings): Room;
  /** The stored settings of a room not open on this node; undefined when it is open (its own are current) or has none. */
  roomSettings(projectId: string, roomId: string): Promise<RoomSettings | undefined>;
  dropIfEmpty(room: Room): void;
  joined(session: Session, grant: MediaGrant): void;
  /** After a renewal: the session's grants and permissions changed. */
  renewed(session: Session): void;
  /** After permissions set through the room service API were applied to the session. */
  permissionsApplied(session: Session): void;
  left(session: Session, room: Room): void;
  forget(session: Session): void;
}

/** The reason `participant.left` gives for a close by the server (docs/reference/webhooks.md, "Why a participant left"). */
export function leftReasonOf(name: MediaCloseName): ParticipantLeftReason {
  switch (name) {
    case 'normal': return 'left';
    case 'going_away': return 'going_away';
    case 'expired': return 'expired';
    case 'replaced': return 'replaced';
    case 'timeout': return 'timeout';
    case 'slow_consumer': return 'slow_consumer';
    case 'rate_limited': return 'rate_limited';
    case 'revoked': return 'revoked';
    case 'protocol_error': case 'message_too_big': case 'unauthorized': return 'protocol_error';
    // only before the join, when no participant event is sent
    case 'room_full': case 'internal_error': return 'disconnected';
  }
}
