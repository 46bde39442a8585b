import type { MediaStreamTrackLike, MediaTrackKind } from './dom.ts';
import type { SendPlan } from './publish-plan.ts';

/** What a local track asks of its session. */
export interface LocalTrackOwner {
  replaceTrack(track: LocalTrack, next: MediaStreamTrackLike): Promise<void>;
  unpublishTrack(track: LocalTrack): Promise<void>;
}

/**
 * A camera, microphone or screen track this session publishes as a stream id of its grant. Its
 * frames are encrypted under the stream key before they leave the browser. A camera goes out as
 * simulcast layers, a screen as one detailed layer (`PublishTrackOptions`).
 *
 * @example
 * ```ts
 * const [camera] = (await navigator.mediaDevices.getUserMedia({ video: true })).getVideoTracks();
 * const local = await session.publishTrack(camera, { streamId: 2 });
 * muteButton.onclick = () => (local.muted ? local.unmute() : local.mute());
 * ```
 */
export class LocalTrack {
  readonly streamId: number;
  readonly kind: MediaTrackKind;
  /** @internal how the track is sent: kept for a new peer connection or a reconnection */
  readonly plan: SendPlan;
  private current: MediaStreamTrackLike;
  private readonly owner: LocalTrackOwner;
  private ended = false;
  private readonly onEnded = (): void => void this.unpublish();

  /** @internal */
  constructor(owner: LocalTrackOwner, streamId: number, track: MediaStreamTrackLike, kind: MediaTrackKind, plan: SendPlan) {
    this.owner = owner;
    this.streamId = streamId;
    this.kind = kind;
    this.plan = plan;
    this.current = track;
    track.addEventListener('ended', this.onEnded);
  }

  /** The track sent now (a browser `MediaStreamTrack`). */
  get track(): MediaStreamTrack {
    return this.current as unknown as MediaStreamTrack;
  }

  /** @internal */
  get source(): MediaStreamTrackLike {
    return this.current;
  }

  /** Whether the track still publishes. */
  get active(): boolean {
    return !this.ended;
  }

  /** Whether the track sends silence or black frames (`mute`). */
  get muted(): boolean {
    return !this.current.enabled;
  }

  /** Sends silence (audio) or black frames (video) until `unmute`; the stream stays published. */
  mute(): void {
    this.current.enabled = false;
  }

  unmute(): void {
    this.current.enabled = true;
  }

  /**
   * Sends another track of the same kind on this stream (switch camera, share a screen) without
   * renegotiation. The stream keeps its layers: a screen sent in place of a camera goes out as the
   * camera's simulcast layers (publish it as a stream of its own for one detailed layer).
   */
  async replaceTrack(track: MediaStreamTrack): Promise<void> {
    const next = track as unknown as MediaStreamTrackLike;
    await this.owner.replaceTrack(this, next);
    next.enabled = this.current.enabled;
    this.current.removeEventListener('ended', this.onEnded);
    this.current = next;
    next.addEventListener('ended', this.onEnded);
  }

  /** Stops publishing (`stream_removed` for the others); the track itself is the application's to stop. */
  async unpublish(): Promise<void> {
    if (this.ended) return;
    this.end();
    await this.owner.unpublishTrack(this);
  }

  /** @internal */
  end(): void {
    this.ended = true;
    this.current.removeEventListener('ended', this.onEnded);
  }
}
