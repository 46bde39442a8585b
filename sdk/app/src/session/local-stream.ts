import { HEADER_BYTES, MAX_CLIENT_MESSAGE_BYTES, TAG_BYTES } from '@rtc/protocol';
import { MediaError } from '../errors.ts';
import type { FrameKind, StreamSource } from '../types.ts';

/**
 * Largest frame payload: the server's 64 KiB message limit less header and tag.
 *
 * @example
 * ```ts
 * for (let at = 0; at < keyframe.length; at += MAX_FRAME_PAYLOAD_BYTES) await cam.send(keyframe.subarray(at, at + MAX_FRAME_PAYLOAD_BYTES));
 * ```
 */
export const MAX_FRAME_PAYLOAD_BYTES = MAX_CLIENT_MESSAGE_BYTES - HEADER_BYTES - TAG_BYTES;

/** What a local stream asks of its session. */
export interface LocalStreamOwner {
  sendOn(stream: LocalStream, payload: Uint8Array): Promise<boolean>;
  unpublish(stream: LocalStream): Promise<void>;
}

/**
 * A stream this session publishes. Frames sent on it are sealed under the stream key that the
 * media server handed to this session; subscribers receive them as they were sealed.
 *
 * @example
 * ```ts
 * const mic = await session.publish(1, 'audio');
 * await mic.send(opusPacket);
 * await mic.close();
 * ```
 */
export class LocalStream {
  readonly streamId: number;
  readonly kind: FrameKind;
  /** What the stream carries, as told to the server (the room service API lists it); undefined: not said. */
  readonly source: StreamSource | undefined;
  private readonly owner: LocalStreamOwner;
  private endedWith: MediaError | undefined;

  /** @internal */
  constructor(owner: LocalStreamOwner, streamId: number, kind: FrameKind, source?: StreamSource) {
    this.owner = owner;
    this.streamId = streamId;
    this.kind = kind;
    this.source = source;
  }

  /** Whether the stream still publishes. */
  get active(): boolean {
    return this.endedWith === undefined;
  }

  /**
   * Seals and sends one frame. Resolves `true` once handed to the socket, `false` when the frame
   * was dropped because the session is reconnecting (real-time media is not buffered).
   */
  send(payload: Uint8Array): Promise<boolean> {
    if (!(payload instanceof Uint8Array)) return Promise.reject(new TypeError('payload must be a Uint8Array'));
    if (payload.length > MAX_FRAME_PAYLOAD_BYTES) {
      return Promise.reject(new TypeError(`payload exceeds ${MAX_FRAME_PAYLOAD_BYTES} bytes`));
    }
    if (this.endedWith) return Promise.reject(this.endedWith);
    return this.owner.sendOn(this, payload);
  }

  /** Stops publishing (`stream_removed` for the others). */
  async close(): Promise<void> {
    if (this.endedWith) return;
    this.end(new MediaError('not_published', 'the stream was closed'));
    await this.owner.unpublish(this);
  }

  /** @internal */
  end(error: MediaError): void {
    this.endedWith ??= error;
  }
}
