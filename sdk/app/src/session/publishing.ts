import { KIND_CODE, MEDIA_KINDS, STREAM_SOURCES } from '@rtc/protocol';
import type { Connection } from '../connection.ts';
import type { SecretKey } from '../crypto.ts';
import type { Emitter } from '../emitter.ts';
import { MediaError, requestError } from '../errors.ts';
import type { FrameKind, MediaSessionEvents, PublishOptions, StreamSource } from '../types.ts';
import type { SessionMedia } from '../webrtc/media.ts';
import { LocalStream, type LocalStreamOwner } from './local-stream.ts';

const FRAME_KINDS: readonly FrameKind[] = MEDIA_KINDS;

/** What the publishing part asks of its session. */
export interface PublishingHost {
  /** The connection while the session is connected, otherwise `undefined`. */
  connection(): Connection | undefined;
}

interface PublishKey {
  epoch: number;
  key: SecretKey;
  seq: number;
}

/**
 * The streams a session publishes: the publish and unpublish requests, the stream key and
 * sequence of each, and publishing them again on the new connection after a reconnection.
 */
export class Publishing implements LocalStreamOwner {
  private readonly host: PublishingHost;
  private readonly events: Emitter<MediaSessionEvents>;
  private readonly media: SessionMedia;
  private readonly local = new Map<number, LocalStream>();
  private readonly keys = new Map<number, PublishKey>();
  /** `publish_streams` of the grant in use. */
  private allowed: readonly number[] = [];

  constructor(host: PublishingHost, events: Emitter<MediaSessionEvents>, media: SessionMedia) {
    this.host = host;
    this.events = events;
    this.media = media;
  }

  /** Publishes a stream id of the grant's `publish_streams`; rejects with `stream_not_allowed` otherwise. */
  async publish(streamId: number, kind: FrameKind, options: PublishOptions = {}): Promise<LocalStream> {
    if (!Number.isInteger(streamId) || streamId < 1 || streamId > 0xffffffff) throw new TypeError('streamId must be an integer from 1 to 4294967295');
    if (!FRAME_KINDS.includes(kind)) throw new TypeError('kind must be audio, video or data');
    const { source } = options;
    if (source !== undefined && !STREAM_SOURCES.includes(source)) throw new TypeError(`source must be one of ${STREAM_SOURCES.join(', ')}`);
    if (this.local.get(streamId)?.active) throw new MediaError('already_published', 'this stream is already published');
    const stream = new LocalStream(this, streamId, kind, source);
    await this.request(stream);
    this.local.set(streamId, stream);
    return stream;
  }

  /** Stream ids of the grant's `publish_streams` that no `LocalStream` uses, in the grant's order. */
  unusedStreamIds(): number[] {
    const used = new Set(this.local.keys());
    return this.allowed.filter((id) => !used.has(id));
  }

  /** The grant's `publish_streams` (at the join, after a renewal, or changed by the room service). */
  allow(publishStreams: readonly number[]): void {
    this.allowed = publishStreams;
  }

  async sendOn(stream: LocalStream, payload: Uint8Array): Promise<boolean> {
    const connection = this.host.connection();
    const key = this.keys.get(stream.streamId);
    if (!connection || !key) return false;
    // the sequence number is taken now, with the key it belongs to: never twice under one key
    key.seq += 1;
    return connection.sendFrame(key.key, { kind: KIND_CODE[stream.kind], epoch: key.epoch, streamId: stream.streamId, seq: key.seq }, payload);
  }

  async unpublish(stream: LocalStream): Promise<void> {
    if (this.local.get(stream.streamId) === stream) this.local.delete(stream.streamId);
    await this.unpublishId(stream.streamId);
  }

  /** `unpublish` on the server, for a `LocalStream` or a WebRTC track. */
  async unpublishId(streamId: number): Promise<void> {
    this.keys.delete(streamId);
    const connection = this.host.connection();
    if (connection) {
      await connection.request({ type: 'unpublish', stream_id: streamId }).catch(() => undefined);
    }
  }

  /** `publish` on the server, resolving once the stream's key is in hand. */
  async request(stream: { readonly streamId: number; readonly kind: FrameKind; readonly source?: StreamSource | undefined }): Promise<void> {
    const connection = this.host.connection();
    if (!connection) throw new MediaError('connection_failed', 'the session is not connected');
    const { source } = stream;
    const reply = await connection.request({ type: 'publish', stream_id: stream.streamId, kind: stream.kind, ...(source !== undefined && { source }) });
    if (reply.type !== 'published') throw requestError(reply);
    if (!this.keys.has(stream.streamId)) throw new MediaError('protocol_error', 'the server sent no stream key');
  }

  /** `published`: the first key of a stream this session publishes. */
  keyed(streamId: number, epoch: number, key: SecretKey): void {
    this.keys.set(streamId, { epoch, key, seq: 0 });
    this.media.ownKey(streamId, epoch, key);
  }

  /** `stream_key` for a stream this session publishes; `false` when the stream is not one of them. */
  rekeyed(streamId: number, epoch: number, key: SecretKey): boolean {
    const own = this.keys.get(streamId);
    if (!own) return false;
    // a new stream key: new nonce space, the sequence starts again
    own.epoch = epoch;
    own.key = key;
    own.seq = 0;
    this.media.ownKey(streamId, epoch, key);
    return true;
  }

  /** `stream_removed` for a stream this session publishes: the server ended it. */
  removed(streamId: number): void {
    const own = this.local.get(streamId);
    this.keys.delete(streamId);
    const error = new MediaError('not_published', 'the server ended this stream');
    if (own) {
      this.local.delete(streamId);
      own.end(error);
      this.events.emit('localStreamEnded', { streamId, error });
    }
    this.media.localEnded(streamId, error);
  }

  /** Stream keys belong to one connection: a new or lost one has none yet. */
  forgetKeys(): void {
    this.keys.clear();
  }

  /** The session closed: every stream ends. */
  end(): void {
    for (const stream of this.local.values()) stream.end(new MediaError('closed', 'the session is closed'));
    this.keys.clear();
  }

  /** Publishes every stream again on a new connection; a stream the server refuses now ends. */
  async republish(): Promise<void> {
    for (const stream of [...this.local.values()]) {
      try {
        await this.request(stream);
      } catch (err) {
        if (!this.host.connection()) return;
        const error = err instanceof MediaError ? err : new MediaError('protocol_error', 'republishing failed', { cause: err });
        this.local.delete(stream.streamId);
        stream.end(error);
        this.events.emit('localStreamEnded', { streamId: stream.streamId, error });
      }
    }
  }
}
