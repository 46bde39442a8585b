export { useConnectionQuality, useParticipants, useSession, useTracks } from './hooks.ts';
export type { SessionView } from './hooks.ts';
export { VideoTile, boundsForBox } from './video-tile.tsx';
export type { VideoTileProps } from './video-tile.tsx';
export { AudioRenderer } from './audio-renderer.tsx';
export type { AudioRendererProps } from './audio-renderer.tsx';
export { ParticipantGrid } from './participant-grid.tsx';
export type { ParticipantGridProps } from './participant-grid.tsx';
export { LeaveButton, MuteButton } from './controls.tsx';
export type { LeaveButtonProps, MuteButtonProps } from './controls.tsx';
export type {
  AttachableTrack, ClosableSession, MutableTrack, ParticipantsSource, SessionEvents, SessionLike, TracksSource,
} from './session-types.ts';
