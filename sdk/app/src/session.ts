import { MEDIA_CLOSE } from '@rtc/protocol';
import { Connection, type ConnectionHandlers, type JoinedMessage, type ServerMessage } from './connection.ts';
import { Emitter } from './emitter.ts';
import { MediaError, requestError } from './errors.ts';
import type { FrameKind, MediaSessionEvents, MediaToken, PublishOptions, RemoteParticipant, RemoteStream } from './types.ts';
import type { E2eeStats } from './webrtc/e2ee-worker.ts';
import type { LocalTrack } from './webrtc/local-track.ts';
import type { RemoteTrack } from './webrtc/remote-track.ts';
import { SessionMedia, type PublishTrackOptions } from './webrtc/media.ts';
import { resolveBounds, type VideoBounds } from './webrtc/video-bounds.ts';
import type { LocalStream } from './session/local-stream.ts';
import { Publishing } from './session/publishing.ts';
import { Receiving, joinedRoom } from './session/receiving.ts';
import { Reconnection } from './session/reconnection.ts';
import { Renewal } from './session/renewal.ts';
import { importStreamKey } from './session/stream-key.ts';
import { decodeBase64 } from './encoding.ts';
import type { SessionSettings, SessionState } from './session/types.ts';

/**
 * A joined media session: one user in one room, publishing and receiving encrypted frames,
 * renewing its grant before expiry and reconnecting after a network loss (never after a revocation).
 * Created by `connect`.
 *
 * @example
 * ```ts
 * session.on('frame', (f) => play(f.streamId, f.payload));
 * session.on('revoked', () => showRemoved());
 * const cam = await session.publish(2, 'video');
 * ```
 */
export class MediaSession {
  private readonly settings: SessionSettings;
  private readonly events: Emitter<MediaSessionEvents>;
  private connection: Connection | undefined;
  private currentState: SessionState = 'connecting';
  private token: MediaToken;
  private identity = { participantId: '', userId: '', roomId: '', projectId: '', role: '', expiresAt: 0 };
  private roomMeta = '';
  private ownMetadata = { metadata: '', attributes: {} as Readonly<Record<string, string>> };
  private joinedOnce = false;
  /** `host:port` of the media node of the current connection, and of the one lost. */
  private node = '';
  private lostNode = '';
  private readonly media: SessionMedia;
  private readonly publishing: Publishing;
  private readonly receiving: Receiving;
  private readonly renewal: Renewal;
  private readonly reconnection: Reconnection;
  /** Remote tracks received now, by stream id: what `remoteTracks()` lists. */
  private readonly received = new Map<number, RemoteTrack>();

  /** @internal use `connect` */
  constructor(settings: SessionSettings, token: MediaToken) {
    this.settings = settings;
    this.token = token;
    this.events = new Emitter<MediaSessionEvents>((err) => setTimeout(() => {
      throw err;
    }, 0));
    // listening first, so that the list is current when the application's handlers run
    this.events.on('trackSubscribed', (t) => this.received.set(t.streamId, t));
    this.events.on('trackUnsubscribed', (t) => {
      if (this.received.get(t.streamId)?.track === t.track) this.received.delete(t.streamId);
    });
    this.media = new SessionMedia({
      request: async (body) => {
        const connection = this.connected();
        if (!connection) throw new MediaError('connection_failed', 'the session is not connected');
        const reply = await connection.request(body);
        if (reply.type === 'error') throw requestError(reply);
        return reply;
      },
      notify: (message) => {
        const connection = this.connected();
        if (!connection) return false;
        void connection.sendControl(message);
        return true;
      },
      publish: (streamId, kind, source) => this.publishing.request({ streamId, kind, source }),
      unpublish: (streamId) => this.publishing.unpublishId(streamId),
      emit: (type, payload) => this.events.emit(type, payload),
    }, { webrtc: settings.webrtc, adaptiveStream: settings.adaptiveStream });
    const connected = { connection: () => this.connected() };
    this.publishing = new Publishing(connected, this.events, this.media);
    this.receiving = new Receiving(this.events, this.media);
    this.renewal = new Renewal(settings, {
      ...connected,
      expiresAt: () => this.identity.expiresAt,
      renewed: (next) => {
        this.token = next;
        this.media.renewed(next);
      },
    }, this.events);
    this.reconnection = new Reconnection(settings, {
      ...connected,
      state: () => this.currentState,
      open: (next) => this.openConnection(next),
      resume: () => this.resume(),
      end: (error, code, reason) => this.end(error, code, reason),
    }, this.events);
  }

  get state(): SessionState {
    return this.currentState;
  }

  get participantId(): string {
    return this.identity.participantId;
  }

  get userId(): string {
    return this.identity.userId;
  }

  get roomId(): string {
    return this.identity.roomId;
  }

  get projectId(): string {
    return this.identity.projectId;
  }

  get role(): string {
    return this.identity.role;
  }

  /** The room's metadata as the customer's server set it ('' when none); `roomMetadataChanged` tells of changes. */
  get roomMetadata(): string {
    return this.roomMeta;
  }

  /** This session's metadata as the customer's server set it ('' when none). */
  get metadata(): string {
    return this.ownMetadata.metadata;
  }

  /** This session's attributes as the customer's server set them ({} when none). */
  get attributes(): Readonly<Record<string, string>> {
    return this.ownMetadata.attributes;
  }

  /** Expiry of the grant in use, seconds since the epoch (moves forward on renewal). */
  get expiresAt(): number {
    return this.identity.expiresAt;
  }

  /** The media node the session is on, `host:port` (after a move, the new one). */
  get mediaNode(): string {
    return this.node;
  }

  /** Bytes waiting in the socket. */
  get bufferedAmount(): number {
    return this.connection?.bufferedAmount ?? 0;
  }

  /** The other participants of the room now. */
  participants(): RemoteParticipant[] {
    return this.receiving.participants();
  }

  /** Every stream published by others in the room now, received or not. */
  streams(): RemoteStream[] {
    return this.receiving.streams();
  }

  /** Listens to an event; returns a function that stops listening. */
  on<K extends keyof MediaSessionEvents>(type: K, handler: (payload: MediaSessionEvents[K]) => void): () => void {
    return this.events.on(type, handler);
  }

  off<K extends keyof MediaSessionEvents>(type: K, handler: (payload: MediaSessionEvents[K]) => void): void {
    this.events.off(type, handler);
  }

  /**
   * Publishes a stream id of the grant's `publish_streams`; rejects with `stream_not_allowed` otherwise.
   * `options.source` tells the server what the stream carries (the room service API lists it).
   */
  publish(streamId: number, kind: FrameKind, options: PublishOptions = {}): Promise<LocalStream> {
    return this.publishing.publish(streamId, kind, options);
  }

  /**
   * Publishes a camera, microphone or screen track over WebRTC as a stream id of the grant's
   * `publish_streams` (by default the first one not in use), encrypted end to end under its stream
   * key. Browsers only; rejects with `rtc_unavailable` elsewhere.
   */
  publishTrack(track: MediaStreamTrack, options: PublishTrackOptions = {}): Promise<LocalTrack> {
    return this.media.publishTrack(track, options, this.publishing.unusedStreamIds());
  }

  /**
   * Bounds the video received of a stream (`null`: no bound), as `RemoteTrack.setVideoBounds` does,
   * also before its track arrives: the server forwards the largest simulcast layer within them that
   * fits the downlink, and no video at all for a `maxWidth` or `maxHeight` of 0. The bounds hold for
   * the stream id, across reconnections, until changed. Throws TypeError for a bound out of range.
   *
   * @example
   * ```ts
   * session.setVideoBounds(2, { maxWidth: 0 });                   // hidden tile: no video
   * session.setVideoBounds(3, { maxWidth: 1280, maxHeight: 720 }); // speaker view
   * ```
   */
  setVideoBounds(streamId: number, bounds: VideoBounds | null): void {
    if (!Number.isInteger(streamId) || streamId < 1 || streamId > 0xffffffff) throw new TypeError('streamId must be an integer from 1 to 4294967295');
    this.media.setVideoBounds(streamId, resolveBounds(bounds));
  }

  /** Audio and video tracks this session publishes now. */
  localTracks(): LocalTrack[] {
    return this.media.localTracks();
  }

  /** Remote audio and video tracks received now: each came with `trackSubscribed` and has not ended. */
  remoteTracks(): RemoteTrack[] {
    return [...this.received.values()];
  }

  /** Whether this session can carry audio and video over WebRTC (a browser, and not turned off). */
  get webrtcEnabled(): boolean {
    return this.media.enabled;
  }

  /** Frames encrypted, decrypted and dropped by the end-to-end encryption of audio and video. */
  e2eeStats(): Promise<E2eeStats> {
    return this.media.e2eeStats();
  }

  /**
   * Statistics of the audio and video connection (those of `RTCPeerConnection.getStats()`, as plain
   * objects: `inbound-rtp` with `framesDecoded` and `audioLevel`, `candidate-pair` with the round trip, ...).
   */
  getStats(): Promise<Readonly<Record<string, unknown>>[]> {
    return this.media.rtcStats();
  }

  /** Renews the grant now with a token from `getToken` (the SDK also does this on its own before expiry). */
  renew(): Promise<void> {
    return this.renewal.renew();
  }

  /** Leaves the room and closes the connection; no reconnection follows. */
  async close(): Promise<void> {
    if (this.currentState === 'closed') return;
    const connection = this.connection;
    this.shutdown();
    if (connection?.isOpen) {
      await connection.sendControl({ type: 'leave' }).catch(() => false);
      connection.abandon('normal');
    }
    const { code, reason } = MEDIA_CLOSE.normal;
    this.events.emit('disconnected', { code, reason, willReconnect: false, error: new MediaError('closed', 'the session was closed') });
  }

  /** @internal opens the first connection; rejects when the join fails. */
  async start(): Promise<void> {
    await this.openConnection(this.token);
  }

  /** The connection while the session is connected. */
  private connected(): Connection | undefined {
    return this.currentState === 'connected' ? this.connection : undefined;
  }

  private shutdown(): void {
    this.currentState = 'closed';
    this.renewal.stop();
    this.reconnection.stopKeepalive();
    this.connection = undefined;
    this.publishing.end();
    this.media.end();
    this.received.clear();
  }

  /** Ends the session for good after a loss, telling why. */
  private end(error: MediaError, code: number, reason: string): void {
    this.shutdown();
    if (error.code === 'revoked') this.events.emit('revoked', { error });
    if (error.code === 'expired') this.events.emit('expired', { error });
    this.events.emit('disconnected', { code, reason, willReconnect: false, error });
  }

  private async openConnection(token: MediaToken): Promise<void> {
    const url = this.settings.urlFor(token);
    const opening = Connection.open({
      url,
      token,
      WebSocket: this.settings.WebSocket,
      timeoutMs: this.settings.connectTimeoutMs,
    }, this.handlersFor(token, new URL(url).host));
    // the socket is on its way: the peer connection gathers its candidates while it opens and joins
    this.media.prepare(token);
    try {
      await opening;
    } catch (err) {
      this.media.cancelPrepared();
      throw err;
    }
  }

  private handlersFor(token: MediaToken, node: string): ConnectionHandlers {
    let connection: Connection | undefined;
    return {
      onJoined: (c, joined) => {
        connection = c;
        return this.adopt(c, joined, token, node);
      },
      onControl: (message) => (connection === this.connection ? this.onServerMessage(message) : undefined),
      onFrame: (header, message) => (connection === this.connection ? this.receiving.onFrame(header, message) : undefined),
      onClose: (code, reason) => {
        if (connection && connection === this.connection) this.onConnectionLost(code, reason, connection.errorForClose(code, reason));
      },
    };
  }

  private async adopt(connection: Connection, joined: JoinedMessage, token: MediaToken, node: string): Promise<void> {
    if (this.currentState === 'closed') {
      connection.abandon('normal');
      return;
    }
    const room = await joinedRoom(joined);
    this.connection = connection;
    this.node = node;
    this.currentState = 'connected';
    this.token = token;
    this.identity = {
      participantId: joined.participant_id,
      userId: joined.user_id,
      roomId: joined.room_id,
      projectId: joined.project_id,
      role: joined.role,
      expiresAt: joined.expires_at,
    };
    this.renewal.joined(joined, token);
    const metadataBefore = this.roomMeta;
    this.roomMeta = joined.room_metadata ?? '';
    // every connection is a new participant: the server's metadata of the one before is gone
    this.ownMetadata = { metadata: '', attributes: {} };
    const previous = this.receiving.replace(room);
    this.publishing.forgetKeys();
    this.publishing.allow(joined.publish_streams);
    this.media.attach(token);
    if (this.joinedOnce) {
      this.receiving.announceChanges(previous);
      if (metadataBefore !== this.roomMeta) this.events.emit('roomMetadataChanged', { metadata: this.roomMeta });
    }
    this.joinedOnce = true;
    this.renewal.schedule();
    this.reconnection.keepAlive(connection);
    this.receiving.keyMedia();
  }

  private async onServerMessage(message: ServerMessage): Promise<void> {
    this.renewal.takeNonce(message);
    switch (message.type) {
      case 'participant_joined':
        return this.receiving.participantJoined(message.participant);
      case 'participant_left':
        return this.receiving.participantLeft(message.participant_id);
      case 'stream_added':
        return this.receiving.streamAdded(message.stream);
      case 'stream_removed':
        if (message.participant_id === this.identity.participantId) return this.publishing.removed(message.stream_id);
        return this.receiving.streamRemoved(message.stream_id);
      case 'published':
        return this.publishing.keyed(message.stream_id, message.epoch, await importStreamKey(message.key));
      case 'stream_key': {
        const key = await importStreamKey(message.key);
        if (!this.publishing.rekeyed(message.stream_id, message.epoch, key)) this.receiving.rekeyed(message.stream_id, message.epoch, key);
        return;
      }
      case 'stream_unsubscribed':
        return this.receiving.unsubscribed(message.stream_id);
      case 'renewed':
        this.identity = { ...this.identity, role: message.role, expiresAt: message.expires_at };
        this.publishing.allow(message.publish_streams);
        return;
      case 'publish_layers':
        return this.media.publishLayers(message.stream_id, message.active);
      case 'stream_paused':
      case 'stream_resumed':
      case 'stream_layer':
        return this.media.videoReport(message);
      case 'permissions':
        this.publishing.allow(message.publish_streams);
        this.events.emit('permissions', {
          publishStreams: [...message.publish_streams],
          subscribeStreams: [...message.subscribe_streams],
          subscribeRoom: message.subscribe_room,
        });
        return;
      case 'room_metadata':
        this.roomMeta = message.metadata;
        this.events.emit('roomMetadataChanged', { metadata: message.metadata });
        return;
      case 'participant_metadata':
        return this.participantMetadata(message.participant_id, message.user_id, message.metadata, message.attributes);
      case 'server_data':
        this.events.emit('serverData', { data: decodeBase64(message.data), topic: message.topic });
        return;
      case 'stream_muted':
        this.events.emit('streamMuted', { streamId: message.stream_id, participantId: message.participant_id, muted: message.muted });
        return;
      default:
        // replies (pong, error, unpublished) go to their requests; unknown types are ignored
        return;
    }
  }

  private participantMetadata(participantId: string, userId: string, metadata: string, attributes: Readonly<Record<string, string>>): void {
    const local = participantId === this.identity.participantId;
    const before = local
      ? this.ownMetadata
      : this.receiving.participants().find((p) => p.participantId === participantId);
    if (!before) return;
    if (local) this.ownMetadata = { metadata, attributes: { ...attributes } };
    else this.receiving.participantMetadata(participantId, metadata, attributes);
    const keys = new Set([...Object.keys(before.attributes), ...Object.keys(attributes)]);
    this.events.emit('participantMetadataChanged', {
      participantId, userId, local, metadata, attributes: { ...attributes },
      changedAttributes: [...keys].filter((k) => before.attributes[k] !== attributes[k]),
      metadataChanged: before.metadata !== metadata,
    });
  }

  private onConnectionLost(code: number, reason: string, error: MediaError): void {
    this.reconnection.stopKeepalive();
    this.renewal.stop();
    this.connection = undefined;
    this.lostNode = this.node;
    this.publishing.forgetKeys();
    this.media.detach();
    if (!this.reconnection.follows(code)) {
      this.end(error, code, reason);
      return;
    }
    this.currentState = 'reconnecting';
    this.events.emit('disconnected', { code, reason, willReconnect: true, error });
    void this.reconnection.run(error);
  }

  /** After a reconnection, on the same media node or another: publishes again, then tells the application. */
  private async resume(): Promise<void> {
    await this.publishing.republish();
    await this.media.republish();
    this.events.emit('reconnected', { participantId: this.identity.participantId, moved: this.node !== this.lostNode, mediaNode: this.node });
  }
}
