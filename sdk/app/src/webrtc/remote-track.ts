import type { MediaElementLike, MediaStreamTrackLike, MediaTrackKind } from './dom.ts';
import { resolveBounds, type ResolvedBounds, type VideoBounds } from './video-bounds.ts';

/**
 * The simulcast layer the server forwards of a received video: 0 is the smallest; width and
 * height are 0 while the server does not know them yet.
 *
 * @example
 * ```ts
 * session.on('streamLayer', (l) => (badge.textContent = `${l.width}x${l.height}`));
 * const layer: StreamLayer | undefined = remote.layer;
 * ```
 */
export interface StreamLayer {
  readonly layer: number;
  readonly width: number;
  readonly height: number;
}

/** What the server last said of a received video: paused or not, and the layer it forwards. */
export interface VideoState {
  paused: boolean;
  layer: StreamLayer | undefined;
}

/** What a remote track asks of its session. */
export interface RemoteTrackOwner {
  /** The application's bounds on a stream (`NO_BOUNDS` clears them). */
  setVideoBounds(streamId: number, bounds: ResolvedBounds): void;
  explicitBounds(streamId: number): ResolvedBounds | undefined;
  /** A `MediaStream` holding the track, for an element's `srcObject`. */
  streamOf(track: MediaStreamTrackLike): unknown;
  /** Adaptive video: starts or stops watching an element that shows the track. */
  watch(track: RemoteTrack, element: MediaElementLike, on: boolean): void;
}

/**
 * An audio or video stream of another participant, received over WebRTC and decrypted. Show it
 * with `attach` (or set `track` as an element's `srcObject` yourself); bound the video it brings
 * with `setVideoBounds`; read `paused` and `layer` for what the server forwards now.
 *
 * @example
 * ```ts
 * session.on('trackSubscribed', (t: RemoteTrack) => {
 *   const el = document.createElement(t.kind);
 *   el.autoplay = true;
 *   t.attach(el); // with `adaptiveStream: true`, the element's size bounds the video
 *   document.body.append(el);
 *   if (t.kind === 'video') t.setVideoBounds({ maxLayer: 1 });
 * });
 * ```
 */
export class RemoteTrack {
  // the identity and the track are own fields, as when this was a plain object (`{ ...t }` keeps them);
  // what changes is read through getters, and the internals are private fields
  readonly streamId: number;
  readonly kind: MediaTrackKind;
  readonly participantId: string;
  readonly userId: string;
  /** The browser `MediaStreamTrack`. */
  readonly track: MediaStreamTrack;
  readonly #remote: MediaStreamTrackLike;
  readonly #owner: RemoteTrackOwner;
  readonly #state: VideoState;
  readonly #elements = new Set<MediaElementLike>();
  #ended = false;

  /** @internal */
  constructor(owner: RemoteTrackOwner, init: {
    readonly streamId: number; readonly kind: MediaTrackKind; readonly participantId: string; readonly userId: string;
    readonly track: MediaStreamTrackLike; readonly state: VideoState;
  }) {
    this.#owner = owner;
    this.streamId = init.streamId;
    this.kind = init.kind;
    this.participantId = init.participantId;
    this.userId = init.userId;
    this.#remote = init.track;
    this.track = init.track as unknown as MediaStreamTrack;
    this.#state = init.state;
  }

  /** Video: whether the server stopped forwarding it because even its smallest layer does not fit the downlink (`streamPaused`). */
  get paused(): boolean {
    return this.#state.paused;
  }

  /** Video: the layer the server forwards now (`streamLayer`); undefined until it says. */
  get layer(): StreamLayer | undefined {
    return this.#state.layer;
  }

  /** Video: the bounds set with `setVideoBounds` (or `session.setVideoBounds`), undefined when none. */
  get videoBounds(): VideoBounds | undefined {
    return this.#owner.explicitBounds(this.streamId);
  }

  /**
   * Bounds the video the server forwards of this stream (`null`: no bound). They hold for the
   * stream id, across reconnections, until changed; with adaptive video, the tighter of these and
   * the elements' sizes applies. Throws TypeError for an audio track or a bound out of range.
   */
  setVideoBounds(bounds: VideoBounds | null): void {
    if (this.kind !== 'video') throw new TypeError('only a video track takes video bounds');
    this.#owner.setVideoBounds(this.streamId, resolveBounds(bounds));
  }

  /**
   * Shows the track in an `<audio>` or `<video>` element (its `srcObject` becomes a MediaStream of
   * the track, unless it holds the track already). With `adaptiveStream: true`, the elements a video
   * is attached to bound what the server sends: the largest visible one, in device pixels, and no
   * video at all while none is visible.
   */
  attach(element: MediaElementLike): void {
    if (typeof element !== 'object' || element === null || !('srcObject' in element)) throw new TypeError('attach needs an audio or video element');
    if (!holds(element.srcObject, this.#remote)) element.srcObject = this.#owner.streamOf(this.#remote);
    if (this.#elements.has(element) || this.#ended) return;
    this.#elements.add(element);
    if (this.kind === 'video') this.#owner.watch(this, element, true);
  }

  /** Stops showing the track in an element (every element without an argument), clearing its `srcObject`. */
  detach(element?: MediaElementLike): void {
    for (const el of element === undefined ? [...this.#elements] : [element]) {
      if (!this.#elements.delete(el)) continue;
      if (holds(el.srcObject, this.#remote)) el.srcObject = null;
      if (this.kind === 'video') this.#owner.watch(this, el, false);
    }
  }

  /** @internal the track ended: adaptive video stops watching its elements (they keep their `srcObject`). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.kind === 'video') for (const el of this.#elements) this.#owner.watch(this, el, false);
    this.#elements.clear();
  }
}

/** Whether an element's `srcObject` is a MediaStream holding the track. */
function holds(srcObject: unknown, track: MediaStreamTrackLike): boolean {
  const stream = srcObject as { getTracks?: () => readonly unknown[] } | null;
  return typeof stream?.getTracks === 'function' && stream.getTracks().includes(track);
}
