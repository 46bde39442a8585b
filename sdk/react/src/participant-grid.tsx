/** A tile for every other participant of the room: their video, their name, and room for the application's own buttons. */
import type { RemoteParticipant } from '@rtc/app-sdk';
import type { ReactNode } from 'react';
import { useParticipants, useTracks } from './hooks.ts';
import type { ParticipantsSource, TracksSource } from './session-types.ts';
import { VideoTile } from './video-tile.tsx';

/**
 * Props of `ParticipantGrid`.
 *
 * @example
 * ```tsx
 * <ParticipantGrid session={session} className="tiles" actions={(p) => <button onClick={() => kick(p.userId)}>Remove</button>} />
 * ```
 */
export interface ParticipantGridProps {
  readonly session: (ParticipantsSource & TracksSource) | undefined;
  /** Class of the grid's element (a `<div>`). */
  readonly className?: string;
  /** Class of each tile (a `<figure>` with `data-user` and `data-participant`). */
  readonly tileClassName?: string;
  /** Tiles shown before the others' (this page's own preview). */
  readonly children?: ReactNode;
  /** What a tile shows besides the video and the name (buttons of the application). */
  readonly actions?: (participant: RemoteParticipant) => ReactNode;
  /** A tile's caption; the user id by default. */
  readonly caption?: (participant: RemoteParticipant) => ReactNode;
}

/**
 * One tile per other participant, in the order they joined, from the moment they join until they
 * leave: their first video (a `VideoTile`, whose size bounds the video received) or an empty tile
 * while they send none, and their user id as the caption. A tile whose video the server paused
 * (the downlink fits not even its smallest layer) has `data-paused`, and `data-layer` is the size
 * of the layer forwarded (`640x360`) once the server told it. Audio is not played here: add an
 * `AudioRenderer`.
 *
 * @example
 * ```tsx
 * function Call({ session }: { session: MediaSession }) {
 *   return (
 *     <>
 *       <ParticipantGrid session={session} className="tiles" />
 *       <AudioRenderer tracks={useTracks(session)} />
 *     </>
 *   );
 * }
 * ```
 */
export function ParticipantGrid({ session, className, tileClassName, children, actions, caption }: ParticipantGridProps) {
  const people = useParticipants(session);
  const videos = useTracks(session, (t) => t.kind === 'video');
  return (
    <div className={className}>
      {children}
      {people.map((p) => {
        const video = videos.find((t) => t.participantId === p.participantId);
        return (
          <figure key={p.participantId} className={tileClassName} data-user={p.userId} data-participant={p.participantId}
            data-paused={video?.paused ? 'true' : undefined} data-layer={video?.layer ? `${video.layer.width}x${video.layer.height}` : undefined}>
            <VideoTile track={video} label={p.userId} />
            <figcaption>{caption ? caption(p) : p.userId}</figcaption>
            {actions?.(p)}
          </figure>
        );
      })}
    </div>
  );
}
