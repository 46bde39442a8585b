/** A received video in a `<video>` element whose size bounds the video the server forwards. */
import type { VideoBounds } from '@rtc/app-sdk';
import { useEffect, useRef } from 'react';
import type { AttachableTrack } from './session-types.ts';

/** The browser's ResizeObserver, as far as the tile uses it (absent in Node). */
interface SizeObserver {
  observe(element: object): void;
  disconnect(): void;
}
interface SizeEntry {
  readonly contentRect: { readonly width: number; readonly height: number };
}
interface TileGlobals {
  readonly ResizeObserver?: new (callback: (entries: readonly SizeEntry[]) => void) => SizeObserver;
  readonly devicePixelRatio?: number;
}

type AttachTarget = Parameters<AttachableTrack['attach']>[0];

/**
 * The bounds a box of `width` x `height` CSS pixels asks for: its size in device pixels, rounded
 * up; a box of no size (hidden) asks for no video at all.
 *
 * @example
 * ```ts
 * boundsForBox(320, 180, 2); // { maxWidth: 640, maxHeight: 360 }
 * ```
 */
export function boundsForBox(width: number, height: number, pixelRatio: number): VideoBounds {
  const ratio = Number.isFinite(pixelRatio) && pixelRatio > 0 ? pixelRatio : 1;
  return { maxWidth: Math.ceil(width * ratio), maxHeight: Math.ceil(height * ratio) };
}

/**
 * Props of `VideoTile`.
 *
 * @example
 * ```tsx
 * <VideoTile track={track} label={track.userId} className="tile-video" />
 * ```
 */
export interface VideoTileProps {
  /** The received video (`trackSubscribed`, `useTracks`); none shows an empty element. */
  readonly track: AttachableTrack | undefined;
  /** The element's accessible name, and its `data-user`. */
  readonly label?: string;
  readonly className?: string;
  /**
   * Whether the element's size bounds what the server forwards (default true): its size in device
   * pixels, and no video while it has no size (`display: none`). `false` leaves the bounds alone.
   */
  readonly followSize?: boolean;
}

/**
 * Shows a received video: attaches the track to its `<video>` when mounted or given another track,
 * detaches it when unmounted, and tells the SDK the element's size in device pixels as the video's
 * bounds (`RemoteTrack.setVideoBounds`) whenever the size changes, so that a thumbnail receives a
 * small simulcast layer and a large view a large one. Unmounted, it lifts the bounds it set. Its
 * sound is muted: play the audio with `AudioRenderer`.
 *
 * @example
 * ```tsx
 * const videos = useTracks(session, (t) => t.kind === 'video');
 * return <div className="grid">{videos.map((t) => <VideoTile key={t.streamId} track={t} label={t.userId} />)}</div>;
 * ```
 */
export function VideoTile({ track, label, className, followSize = true }: VideoTileProps) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    const element = ref.current;
    if (!element || !track) return undefined;
    track.attach(element as unknown as AttachTarget);
    // autoplay starts it too; play() also covers an element reused for another track
    void (element as unknown as { play?: () => Promise<void> }).play?.()?.catch(() => undefined);
    return () => track.detach(element as unknown as AttachTarget);
  }, [track]);
  useEffect(() => {
    const element = ref.current;
    const globals = globalThis as TileGlobals;
    if (!element || !track || track.kind !== 'video' || !followSize || !globals.ResizeObserver) return undefined;
    let last = '';
    const observer = new globals.ResizeObserver((entries) => {
      const box = entries[entries.length - 1]?.contentRect;
      if (!box) return;
      const bounds = boundsForBox(box.width, box.height, globals.devicePixelRatio ?? 1);
      const key = `${bounds.maxWidth}x${bounds.maxHeight}`;
      if (key === last) return;
      last = key;
      track.setVideoBounds(bounds);
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      if (last !== '') track.setVideoBounds(null);
    };
  }, [track, followSize]);
  return <video ref={ref} className={className} autoPlay playsInline muted aria-label={label} data-user={label} />;
}
