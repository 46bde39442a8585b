/** What the hooks and components read of the app SDK's objects: `MediaSession`, `RemoteTrack` and `LocalTrack` fit, and so does a small fake in a test. */
import type { LocalTrack, MediaSession, RemoteTrack } from '@rtc/app-sdk';

/**
 * The events of a session (`MediaSession.on`): every hook listens through it.
 *
 * @example
 * ```ts
 * const events: SessionEvents = session;
 * ```
 */
export type SessionEvents = Pick<MediaSession, 'on'>;

/**
 * What `useSession` reads: a `MediaSession`.
 *
 * @example
 * ```ts
 * const view = useSession(session satisfies SessionLike);
 * ```
 */
export type SessionLike = Pick<MediaSession, 'on' | 'state' | 'participantId' | 'userId' | 'roomId' | 'roomMetadata'>;

/**
 * What `useParticipants` reads: a `MediaSession`.
 *
 * @example
 * ```ts
 * const fake: ParticipantsSource = { on: () => () => undefined, participants: () => [] };
 * ```
 */
export type ParticipantsSource = Pick<MediaSession, 'on' | 'participants'>;

/**
 * What `useTracks` reads: a `MediaSession`.
 *
 * @example
 * ```ts
 * const fake: TracksSource = { on: () => () => undefined, remoteTracks: () => [] };
 * ```
 */
export type TracksSource = Pick<MediaSession, 'on' | 'remoteTracks'>;

/**
 * What a `VideoTile` or an `AudioRenderer` needs of a received track: a `RemoteTrack`.
 *
 * @example
 * ```tsx
 * session.on('trackSubscribed', (t) => show(<VideoTile track={t satisfies AttachableTrack} />));
 * ```
 */
export type AttachableTrack = Pick<RemoteTrack, 'streamId' | 'kind' | 'participantId' | 'userId' | 'attach' | 'detach' | 'setVideoBounds'>;

/**
 * What a `MuteButton` needs of a published track: a `LocalTrack`.
 *
 * @example
 * ```ts
 * const mic: MutableTrack = await session.publishTrack(microphone);
 * ```
 */
export type MutableTrack = Pick<LocalTrack, 'muted' | 'mute' | 'unmute'>;

/**
 * What a `LeaveButton` needs of a session: a `MediaSession`.
 *
 * @example
 * ```ts
 * const closable: ClosableSession = session;
 * ```
 */
export type ClosableSession = Pick<MediaSession, 'close'>;
