/**
 * The session's side of the videos it receives, apart from the peer connection: what the server
 * said of each (`stream_paused`, `stream_resumed`, `stream_layer`), the bounds the application set
 * on each, and adaptive video's watch of the elements each is attached to.
 */
import type { RtcVideoPreference } from '@rtc/protocol';
import type { ServerMessage } from '../connection.ts';
import type { MediaSessionEvents } from '../types.ts';
import { ElementWatch, type PageView } from './adaptive-video.ts';
import { browserWebRtc, type MediaElementLike } from './dom.ts';
import type { RemoteTrack, StreamLayer, VideoState } from './remote-track.ts';
import { VideoPreferences, type ResolvedBounds, type Scheduler } from './video-bounds.ts';

/** What received videos ask of the session's media. */
export interface ReceivedVideoHost {
  emit<K extends 'streamPaused' | 'streamResumed' | 'streamLayer'>(type: K, payload: MediaSessionEvents[K]): void;
  /** The remote track announced to the application for a stream now, if any. */
  remoteTrack(streamId: number): RemoteTrack | undefined;
}

export type VideoReport = Extract<ServerMessage, { readonly type: 'stream_paused' | 'stream_resumed' | 'stream_layer' }>;

export class ReceivedVideo {
  private readonly host: ReceivedVideoHost;
  private readonly adaptiveStream: boolean;
  private readonly scheduler: Scheduler;
  /** What the server said of each received video on this connection (`stream_paused`, `stream_layer`). */
  private states = new Map<number, VideoState>();
  private readonly preferences: VideoPreferences;
  /** Adaptive video's watch of each received video's elements. */
  private readonly watches = new Map<RemoteTrack, ElementWatch>();

  constructor(host: ReceivedVideoHost, adaptiveStream: boolean, scheduler: Scheduler) {
    this.host = host;
    this.adaptiveStream = adaptiveStream;
    this.scheduler = scheduler;
    this.preferences = new VideoPreferences(scheduler);
  }

  /** A new media connection: the server's reports start afresh. */
  reset(): void {
    this.states = new Map();
  }

  /** A connection (or a fresh peer connection) to tell the bounds over, again. */
  connected(notify: (message: RtcVideoPreference) => boolean): void {
    this.preferences.connected(notify);
  }

  disconnected(): void {
    this.preferences.disconnected();
  }

  /** The session is closed for good. */
  end(): void {
    for (const watch of this.watches.values()) watch.close();
    this.watches.clear();
  }

  /** A stream removed or no longer allowed. */
  forget(streamId: number): void {
    this.states.delete(streamId);
  }

  /** What the server said of a received video, shared with its remote track. */
  stateOf(streamId: number): VideoState {
    let state = this.states.get(streamId);
    if (!state) {
      state = { paused: false, layer: undefined };
      this.states.set(streamId, state);
    }
    return state;
  }

  /** Bounds the application set on a received video, by stream id (`NO_BOUNDS` clears them). */
  setExplicit(streamId: number, bounds: ResolvedBounds): void {
    this.preferences.setExplicit(streamId, bounds);
  }

  explicitOf(streamId: number): ResolvedBounds | undefined {
    return this.preferences.explicitOf(streamId);
  }

  /** Adaptive video follows the elements a video is attached to. */
  watch(track: RemoteTrack, element: MediaElementLike, on: boolean): void {
    if (!this.adaptiveStream) return;
    let watch = this.watches.get(track);
    if (on && !watch) {
      watch = new ElementWatch(pageView(), this.scheduler, (bounds) => {
        if (this.host.remoteTrack(track.streamId) === track) this.preferences.setAdaptive(track.streamId, bounds);
      });
      this.watches.set(track, watch);
    }
    if (!watch) return;
    if (on) {
      watch.add(element);
      return;
    }
    watch.remove(element);
    if (watch.size > 0) return;
    // no element shows the video: adaptive video no longer bounds it
    watch.close();
    this.watches.delete(track);
    const current = this.host.remoteTrack(track.streamId);
    if (current === track || current === undefined) this.preferences.setAdaptive(track.streamId, undefined);
  }

  /** `stream_paused`, `stream_resumed` and `stream_layer`: kept for the stream's remote track, then told to the application. */
  report(message: VideoReport): void {
    const streamId = message.stream_id;
    const state = this.stateOf(streamId);
    switch (message.type) {
      case 'stream_paused':
        state.paused = true;
        this.host.emit('streamPaused', { streamId, reason: message.reason });
        return;
      case 'stream_resumed':
        state.paused = false;
        this.host.emit('streamResumed', { streamId });
        return;
      case 'stream_layer': {
        const layer: StreamLayer = { layer: message.layer, width: message.width, height: message.height };
        state.layer = layer;
        this.host.emit('streamLayer', { streamId, ...layer });
        return;
      }
    }
  }
}

function pageView(): PageView {
  const web = browserWebRtc();
  return {
    ...(web.ResizeObserver ? { ResizeObserver: web.ResizeObserver } : {}),
    ...(web.IntersectionObserver ? { IntersectionObserver: web.IntersectionObserver } : {}),
    ...(web.document ? { document: web.document } : {}),
    devicePixelRatio: () => browserWebRtc().devicePixelRatio ?? 1,
  };
}
