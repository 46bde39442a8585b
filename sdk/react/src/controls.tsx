/** Mute and leave buttons. */
import { useEffect, useState } from 'react';
import type { ClosableSession, MutableTrack } from './session-types.ts';

/**
 * Props of `MuteButton`.
 *
 * @example
 * ```tsx
 * <MuteButton track={mic} label={(muted) => (muted ? 'Unmute microphone' : 'Mute microphone')} />
 * ```
 */
export interface MuteButtonProps {
  /** The published track (`publishTrack`); none disables the button. */
  readonly track: MutableTrack | undefined;
  /** The button's text for the track's state; 'Mute' and 'Unmute' by default. */
  readonly label?: (muted: boolean) => string;
  readonly className?: string;
  /** Called after each toggle with the new state. */
  readonly onChange?: (muted: boolean) => void;
}

/**
 * Toggles a published track between sending and muted (`LocalTrack.mute()`: silence or black
 * frames; the stream stays published). `aria-pressed` tells whether it is muted.
 *
 * @example
 * ```tsx
 * const mic = await session.publishTrack(microphone);
 * root.render(<MuteButton track={mic} />);
 * ```
 */
export function MuteButton({ track, label = (m) => (m ? 'Unmute' : 'Mute'), className, onChange }: MuteButtonProps) {
  const [muted, setMuted] = useState(track?.muted ?? false);
  useEffect(() => setMuted(track?.muted ?? false), [track]);
  const toggle = (): void => {
    if (!track) return;
    if (track.muted) track.unmute();
    else track.mute();
    setMuted(track.muted);
    onChange?.(track.muted);
  };
  return <button type="button" className={className} disabled={!track} aria-pressed={muted} onClick={toggle}>{label(muted)}</button>;
}

/**
 * Props of `LeaveButton`.
 *
 * @example
 * ```tsx
 * <LeaveButton session={session} onLeave={() => setSession(undefined)}>Leave</LeaveButton>
 * ```
 */
export interface LeaveButtonProps {
  readonly session: ClosableSession | undefined;
  /** Called once the session is closed. */
  readonly onLeave?: () => void;
  readonly className?: string;
  /** The button's text; 'Leave' by default. */
  readonly children?: string;
}

/**
 * Leaves the room (`MediaSession.close()`), disabled while it closes and without a session.
 *
 * @example
 * ```tsx
 * <LeaveButton session={session} onLeave={() => stopCamera()}>Leave room</LeaveButton>
 * ```
 */
export function LeaveButton({ session, onLeave, className, children = 'Leave' }: LeaveButtonProps) {
  const [leaving, setLeaving] = useState(false);
  const leave = async (): Promise<void> => {
    if (!session) return;
    setLeaving(true);
    try {
      await session.close();
    } finally {
      setLeaving(false);
    }
    onLeave?.();
  };
  return <button type="button" className={className} disabled={!session || leaving} onClick={() => void leave()}>{children}</button>;
}
