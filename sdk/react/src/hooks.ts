/** The hooks: a session's state, participants, received tracks and connection quality, each re-read on the session's events. */
import type { ConnectionQuality, DisconnectInfo, MediaSessionEvents, RemoteParticipant, RemoteTrack, SessionState } from '@rtc/app-sdk';
import { useEffect, useState } from 'react';
import type { ParticipantsSource, SessionEvents, SessionLike, TracksSource } from './session-types.ts';

type EventName = keyof MediaSessionEvents;

/**
 * A value read from a session, read again on each of `events`: the session's own getters stay the
 * truth, the hook only says when to look again. `undefined` session: `empty`.
 */
function useSessionValue<S extends SessionEvents, T>(session: S | undefined, events: readonly EventName[], read: (s: S) => T, empty: T): T {
  const [snapshot, setSnapshot] = useState(() => ({ session, value: session ? read(session) : empty }));
  useEffect(() => {
    if (!session) {
      setSnapshot({ session, value: empty });
      return undefined;
    }
    const update = (): void => setSnapshot({ session, value: read(session) });
    // events may have come between the render and this effect
    update();
    const offs = events.map((type) => session.on(type, update));
    return () => {
      for (const off of offs) off();
    };
    // the events and the reading belong to the hook that calls this one, fixed for its life
  }, [session]);
  if (snapshot.session === session) return snapshot.value;
  return session ? read(session) : empty;
}

/**
 * What `useSession` tells of a session.
 *
 * @example
 * ```tsx
 * const { state, reconnecting } = useSession(session);
 * ```
 */
export interface SessionView {
  /** `undefined` without a session; `closed` is final. */
  readonly state: SessionState | undefined;
  /** Whether the SDK is joining again after a network loss or a node's departure. */
  readonly reconnecting: boolean;
  /** This session's participant id ('' before the join or without a session). */
  readonly participantId: string;
  readonly userId: string;
  readonly roomId: string;
  /** Set by the customer's server (room service API); '' when none. */
  readonly roomMetadata: string;
  /** How the session ended, once it ended for good (left, removed, expired, or reconnection gave up). */
  readonly ended: DisconnectInfo | undefined;
}

const NO_SESSION: Omit<SessionView, 'ended'> = { state: undefined, reconnecting: false, participantId: '', userId: '', roomId: '', roomMetadata: '' };
const SESSION_EVENTS: readonly EventName[] = ['reconnecting', 'reconnected', 'disconnected', 'revoked', 'expired', 'roomMetadataChanged'];

/**
 * A session's state, identity and room metadata, rendered again when they change.
 *
 * @example
 * ```tsx
 * function Banner({ session }: { session: MediaSession }) {
 *   const { state, ended } = useSession(session);
 *   if (ended) return <p>Call ended: {ended.error.code}</p>;
 *   return state === 'reconnecting' ? <p>Reconnecting…</p> : null;
 * }
 * ```
 */
export function useSession(session: SessionLike | undefined): SessionView {
  const [ended, setEnded] = useState<{ session: SessionLike; info: DisconnectInfo } | undefined>(undefined);
  useEffect(() => session?.on('disconnected', (info) => {
    if (!info.willReconnect) setEnded({ session, info });
  }), [session]);
  const view = useSessionValue<SessionLike, Omit<SessionView, 'ended'>>(session, SESSION_EVENTS, (s) => ({
    state: s.state, reconnecting: s.state === 'reconnecting', participantId: s.participantId, userId: s.userId, roomId: s.roomId,
    roomMetadata: s.roomMetadata,
  }), NO_SESSION);
  return { ...view, ended: ended && ended.session === session ? ended.info : undefined };
}

const NO_PARTICIPANTS: readonly RemoteParticipant[] = [];
const PARTICIPANT_EVENTS: readonly EventName[] = ['participantJoined', 'participantLeft', 'participantMetadataChanged', 'reconnected', 'disconnected'];

/**
 * The other participants of the room, in the order they came, rendered again as they join, leave
 * or change their metadata.
 *
 * @example
 * ```tsx
 * const people = useParticipants(session);
 * return <ul>{people.map((p) => <li key={p.participantId}>{p.userId}</li>)}</ul>;
 * ```
 */
export function useParticipants(session: ParticipantsSource | undefined): readonly RemoteParticipant[] {
  return useSessionValue(session, PARTICIPANT_EVENTS, (s) => s.participants(), NO_PARTICIPANTS);
}

const NO_TRACKS: readonly RemoteTrack[] = [];
// a track's `paused` and `layer` change with the server's reports: a render after them shows them
const TRACK_EVENTS: readonly EventName[] = ['trackSubscribed', 'trackUnsubscribed', 'disconnected', 'streamPaused', 'streamResumed', 'streamLayer'];

/**
 * The audio and video tracks the session receives now (`MediaSession.remoteTracks()`), rendered
 * again when one arrives or ends, and when the server reports a video paused, resumed or on another
 * simulcast layer (read `paused` and `layer` of the track); `filter` keeps some (a participant's,
 * or one kind).
 *
 * @example
 * ```tsx
 * const videos = useTracks(session, (t) => t.kind === 'video');
 * return <>{videos.map((t) => <VideoTile key={t.streamId} track={t} />)}</>;
 * ```
 */
export function useTracks(session: TracksSource | undefined, filter?: (track: RemoteTrack) => boolean): readonly RemoteTrack[] {
  const tracks = useSessionValue(session, TRACK_EVENTS, (s) => s.remoteTracks(), NO_TRACKS);
  return filter ? tracks.filter(filter) : tracks;
}

/**
 * How well audio and video flow (the SDK measures every two seconds while a peer connection
 * exists); `undefined` until the first measurement.
 *
 * @example
 * ```tsx
 * const quality = useConnectionQuality(session);
 * return <span data-quality={quality?.quality ?? 'unknown'} />;
 * ```
 */
export function useConnectionQuality(session: SessionEvents | undefined): ConnectionQuality | undefined {
  const [quality, setQuality] = useState<{ session: SessionEvents; value: ConnectionQuality } | undefined>(undefined);
  useEffect(() => session?.on('connectionQuality', (value) => setQuality({ session, value })), [session]);
  return quality && quality.session === session ? quality.value : undefined;
}
