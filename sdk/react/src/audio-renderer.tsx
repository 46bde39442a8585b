/** Plays the received audio tracks, one hidden `<audio>` element each. */
import { useEffect, useRef } from 'react';
import type { AttachableTrack } from './session-types.ts';

type AttachTarget = Parameters<AttachableTrack['attach']>[0];

function AudioTrack({ track, muted }: { readonly track: AttachableTrack; readonly muted: boolean }) {
  const ref = useRef<HTMLAudioElement>(null);
  useEffect(() => {
    const element = ref.current;
    if (!element) return undefined;
    track.attach(element as unknown as AttachTarget);
    void (element as unknown as { play?: () => Promise<void> }).play?.()?.catch(() => undefined);
    return () => track.detach(element as unknown as AttachTarget);
  }, [track]);
  return <audio ref={ref} autoPlay muted={muted} data-user={track.userId} data-stream={track.streamId} />;
}

/**
 * Props of `AudioRenderer`.
 *
 * @example
 * ```tsx
 * <AudioRenderer tracks={useTracks(session)} muted={deafened} />
 * ```
 */
export interface AudioRendererProps {
  /** Received tracks; the video ones are left out. */
  readonly tracks: readonly AttachableTrack[];
  /** Silences every track without detaching them (default false). */
  readonly muted?: boolean;
}

/**
 * Plays every received audio track in an `<audio>` element of its own (not shown), attached while
 * the track is listed and detached when it leaves the list or the renderer unmounts.
 *
 * @example
 * ```tsx
 * function Sound({ session }: { session: MediaSession }) {
 *   return <AudioRenderer tracks={useTracks(session, (t) => t.kind === 'audio')} />;
 * }
 * ```
 */
export function AudioRenderer({ tracks, muted = false }: AudioRendererProps) {
  return (
    <div hidden>
      {tracks.filter((t) => t.kind === 'audio').map((t) => <AudioTrack key={`${t.participantId}:${t.streamId}`} track={t} muted={muted} />)}
    </div>
  );
}
