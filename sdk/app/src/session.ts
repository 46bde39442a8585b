import {
  HEADER_BYTES, KEY_BYTES, KIND_CODE, MAX_CLIENT_MESSAGE_BYTES, MEDIA_CLOSE, MEDIA_KINDS, NONCE_BYTES, NONCE_LABEL, REPLAY_WINDOW, ReplayWindow, TAG_BYTES,
  type FrameHeader, type ParticipantInfo, type StreamInfo,
} from '@rtc/protocol';
import { Connection, mediaKeyOf, type ConnectionHandlers, type JoinedMessage, type ServerMessage } from './connection.ts';
import { importAesKey, open, proofOfPossession, randomBytes, sha256, type SecretKey } from './crypto.ts';
import { Emitter } from './emitter.ts';
import { fromB64u, toB64u, utf8 } from './encoding.ts';
import { CLOSE_CODES, MEDIA_ERROR_CODES, MediaError, SOCKET_CLOSE, errorForClose, type MediaErrorCode } from './errors.ts';
import type {
  FrameKind, MediaSessionEvents, MediaToken, ReceivedFrame, RemoteParticipant, RemoteStream, WebRtcOptions, WebSocketConstructor,
} from './types.ts';
import type { E2eeStats } from './webrtc/e2ee-worker.ts';
import type { LocalTrack } from './webrtc/local-track.ts';
import { SessionMedia, type PublishTrackOptions } from './webrtc/media.ts';

/**
 * Largest frame payload: the server's 64 KiB message limit less header and tag.
 *
 * @example
 * ```ts
 * for (let at = 0; at < keyframe.length; at += MAX_FRAME_PAYLOAD_BYTES) await cam.send(keyframe.subarray(at, at + MAX_FRAME_PAYLOAD_BYTES));
 * ```
 */
export const MAX_FRAME_PAYLOAD_BYTES = MAX_CLIENT_MESSAGE_BYTES - HEADER_BYTES - TAG_BYTES;
const FRAME_KINDS: readonly FrameKind[] = MEDIA_KINDS;

/** Settings of a session, resolved from `ConnectOptions` by `connect`. */
export interface SessionSettings {
  readonly getToken: (() => Promise<MediaToken>) | undefined;
  readonly urlFor: (token: MediaToken) => string;
  readonly WebSocket: WebSocketConstructor;
  readonly renewBeforeSeconds: number | undefined;
  readonly reconnect: { readonly maxAttempts: number; readonly initialDelayMs: number; readonly maxDelayMs: number } | undefined;
  readonly connectTimeoutMs: number;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly webrtc: boolean | WebRtcOptions | undefined;
}

/**
 * Where a session is in its life; `closed` is final.
 *
 * @example
 * ```ts
 * if (session.state === 'connected') await mic.send(packet);
 * ```
 */
export type SessionState = 'connecting' | 'connected' | 'reconnecting' | 'closed';

interface KeyGeneration {
  readonly epoch: number;
  readonly key: SecretKey;
  readonly window: ReplayWindow;
}

interface RemoteStreamState {
  readonly info: RemoteStream;
  current: KeyGeneration | undefined;
  previous: KeyGeneration | undefined;
}

interface PublishKey {
  epoch: number;
  key: SecretKey;
  seq: number;
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
  private readonly session: MediaSession;
  private endedWith: MediaError | undefined;

  /** @internal */
  constructor(session: MediaSession, streamId: number, kind: FrameKind) {
    this.session = session;
    this.streamId = streamId;
    this.kind = kind;
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
    return this.session.sendOn(this, payload);
  }

  /** Stops publishing (`stream_removed` for the others). */
  async close(): Promise<void> {
    if (this.endedWith) return;
    this.end(new MediaError('not_published', 'the stream was closed'));
    await this.session.unpublish(this);
  }

  /** @internal */
  end(error: MediaError): void {
    this.endedWith ??= error;
  }
}

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
  private lifetimeSeconds = 0;
  private renewNonce: Uint8Array | undefined;
  private serverOffsetMs = 0;
  private joinedOnce = false;
  private renewing: Promise<void> | undefined;
  private renewTimer: ReturnType<typeof setTimeout> | undefined;
  private keepaliveTimer: ReturnType<typeof setInterval> | undefined;
  private participantsById = new Map<string, RemoteParticipant>();
  private streamsById = new Map<number, RemoteStreamState>();
  private readonly local = new Map<number, LocalStream>();
  private readonly publishKeys = new Map<number, PublishKey>();
  private grantPublishStreams: readonly number[] = [];
  private readonly media: SessionMedia;

  /** @internal use `connect` */
  constructor(settings: SessionSettings, token: MediaToken) {
    this.settings = settings;
    this.token = token;
    this.events = new Emitter<MediaSessionEvents>((err) => setTimeout(() => {
      throw err;
    }, 0));
    this.media = new SessionMedia({
      request: async (body) => {
        const connection = this.connection;
        if (this.currentState !== 'connected' || !connection) throw new MediaError('connection_failed', 'the session is not connected');
        const reply = await connection.request(body);
        if (reply.type === 'error') throw requestError(reply);
        return reply;
      },
      publish: (streamId, kind) => this.requestPublish({ streamId, kind }),
      unpublish: (streamId) => this.unpublishId(streamId),
      emit: (type, payload) => this.events.emit(type, payload),
    }, settings.webrtc);
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

  /** Expiry of the grant in use, seconds since the epoch (moves forward on renewal). */
  get expiresAt(): number {
    return this.identity.expiresAt;
  }

  /** Bytes waiting in the socket. */
  get bufferedAmount(): number {
    return this.connection?.bufferedAmount ?? 0;
  }

  /** The other participants of the room now. */
  participants(): RemoteParticipant[] {
    return [...this.participantsById.values()];
  }

  /** Every stream published by others in the room now, received or not. */
  streams(): RemoteStream[] {
    return [...this.streamsById.values()].map((s) => s.info);
  }

  /** Listens to an event; returns a function that stops listening. */
  on<K extends keyof MediaSessionEvents>(type: K, handler: (payload: MediaSessionEvents[K]) => void): () => void {
    return this.events.on(type, handler);
  }

  off<K extends keyof MediaSessionEvents>(type: K, handler: (payload: MediaSessionEvents[K]) => void): void {
    this.events.off(type, handler);
  }

  /** Publishes a stream id of the grant's `publish_streams`; rejects with `stream_not_allowed` otherwise. */
  async publish(streamId: number, kind: FrameKind): Promise<LocalStream> {
    if (!Number.isInteger(streamId) || streamId < 1 || streamId > 0xffffffff) throw new TypeError('streamId must be an integer from 1 to 4294967295');
    if (!FRAME_KINDS.includes(kind)) throw new TypeError('kind must be audio, video or data');
    if (this.local.get(streamId)?.active) throw new MediaError('already_published', 'this stream is already published');
    const stream = new LocalStream(this, streamId, kind);
    await this.requestPublish(stream);
    this.local.set(streamId, stream);
    return stream;
  }

  /**
   * Publishes a camera, microphone or screen track over WebRTC as a stream id of the grant's
   * `publish_streams` (by default the first one not in use), encrypted end to end under its stream
   * key. Browsers only; rejects with `rtc_unavailable` elsewhere.
   */
  publishTrack(track: MediaStreamTrack, options: PublishTrackOptions = {}): Promise<LocalTrack> {
    const used = new Set(this.local.keys());
    return this.media.publishTrack(track, options, this.grantPublishStreams.filter((id) => !used.has(id)));
  }

  /** Audio and video tracks this session publishes now. */
  localTracks(): LocalTrack[] {
    return this.media.localTracks();
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
    if (!this.settings.getToken) return Promise.reject(new TypeError('renewal needs the getToken option'));
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
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

  /** @internal */
  async sendOn(stream: LocalStream, payload: Uint8Array): Promise<boolean> {
    const connection = this.connection;
    const key = this.publishKeys.get(stream.streamId);
    if (this.currentState !== 'connected' || !connection || !key) return false;
    // the sequence number is taken now, with the key it belongs to: never twice under one key
    key.seq += 1;
    return connection.sendFrame(key.key, { kind: KIND_CODE[stream.kind], epoch: key.epoch, streamId: stream.streamId, seq: key.seq }, payload);
  }

  /** @internal */
  async unpublish(stream: LocalStream): Promise<void> {
    if (this.local.get(stream.streamId) === stream) this.local.delete(stream.streamId);
    await this.unpublishId(stream.streamId);
  }

  private async unpublishId(streamId: number): Promise<void> {
    this.publishKeys.delete(streamId);
    const connection = this.connection;
    if (this.currentState === 'connected' && connection) {
      await connection.request({ type: 'unpublish', stream_id: streamId }).catch(() => undefined);
    }
  }

  private async requestPublish(stream: { readonly streamId: number; readonly kind: FrameKind }): Promise<void> {
    const connection = this.connection;
    if (this.currentState !== 'connected' || !connection) throw new MediaError('connection_failed', 'the session is not connected');
    const reply = await connection.request({ type: 'publish', stream_id: stream.streamId, kind: stream.kind });
    if (reply.type !== 'published') throw requestError(reply);
    if (!this.publishKeys.has(stream.streamId)) throw new MediaError('protocol_error', 'the server sent no stream key');
  }

  private shutdown(): void {
    this.currentState = 'closed';
    clearTimeout(this.renewTimer);
    clearInterval(this.keepaliveTimer);
    this.connection = undefined;
    for (const stream of this.local.values()) stream.end(new MediaError('closed', 'the session is closed'));
    this.publishKeys.clear();
    this.media.end();
  }

  private async openConnection(token: MediaToken): Promise<void> {
    await Connection.open({
      url: this.settings.urlFor(token),
      token,
      WebSocket: this.settings.WebSocket,
      timeoutMs: this.settings.connectTimeoutMs,
    }, this.handlersFor(token));
  }

  private handlersFor(token: MediaToken): ConnectionHandlers {
    let connection: Connection | undefined;
    return {
      onJoined: (c, joined) => {
        connection = c;
        return this.adopt(c, joined, token);
      },
      onControl: (message) => (connection === this.connection ? this.onServerMessage(message) : undefined),
      onFrame: (header, message) => (connection === this.connection ? this.onFrame(header, message) : undefined),
      onClose: (code, reason) => {
        if (connection && connection === this.connection) this.onConnectionLost(code, reason);
      },
    };
  }

  private async adopt(connection: Connection, joined: JoinedMessage, token: MediaToken): Promise<void> {
    if (this.currentState === 'closed') {
      connection.abandon('normal');
      return;
    }
    const participants = new Map<string, RemoteParticipant>();
    for (const p of joined.participants) {
      const participant = participantOf(p);
      participants.set(participant.participantId, participant);
    }
    const streams = new Map<number, RemoteStreamState>();
    for (const s of joined.streams) {
      const state = await streamStateOf(s);
      streams.set(state.info.streamId, state);
    }
    const previousParticipants = this.participantsById;
    const previousStreams = this.streamsById;
    this.connection = connection;
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
    this.serverOffsetMs = joined.server_time_ms - Date.now();
    this.takeRenewNonce(joined);
    this.lifetimeSeconds = lifetimeOf(token, this.serverNowMs());
    this.participantsById = participants;
    this.streamsById = streams;
    this.publishKeys.clear();
    this.grantPublishStreams = joined.publish_streams;
    this.media.attach(token);
    if (this.joinedOnce) {
      for (const [id, old] of previousStreams) {
        if (!sameStream(streams.get(id)?.info, old.info)) this.events.emit('streamRemoved', old.info);
      }
      for (const [id, p] of previousParticipants) if (!participants.has(id)) this.events.emit('participantLeft', p);
      for (const [id, p] of participants) if (!previousParticipants.has(id)) this.events.emit('participantJoined', p);
      for (const [id, s] of streams) {
        if (!sameStream(previousStreams.get(id)?.info, s.info)) this.events.emit('streamAdded', s.info);
      }
    }
    this.joinedOnce = true;
    this.scheduleRenewal();
    this.startKeepalive(connection);
    for (const state of streams.values()) if (state.current) this.media.remoteKey(state.info, state.current.epoch, state.current.key);
  }

  private async onServerMessage(message: ServerMessage): Promise<void> {
    this.takeRenewNonce(message);
    switch (message.type) {
      case 'participant_joined': {
        const participant = participantOf(message.participant);
        this.participantsById.set(participant.participantId, participant);
        this.events.emit('participantJoined', participant);
        return;
      }
      case 'participant_left': {
        const participant = this.participantsById.get(message.participant_id);
        if (!participant) return;
        this.participantsById.delete(participant.participantId);
        this.events.emit('participantLeft', participant);
        return;
      }
      case 'stream_added': {
        const state = await streamStateOf(message.stream);
        this.streamsById.set(state.info.streamId, state);
        this.events.emit('streamAdded', state.info);
        if (state.current) this.media.remoteKey(state.info, state.current.epoch, state.current.key);
        return;
      }
      case 'stream_removed': {
        const streamId = message.stream_id;
        if (message.participant_id === this.identity.participantId) {
          const own = this.local.get(streamId);
          this.publishKeys.delete(streamId);
          const error = new MediaError('not_published', 'the server ended this stream');
          if (own) {
            this.local.delete(streamId);
            own.end(error);
            this.events.emit('localStreamEnded', { streamId, error });
          }
          this.media.localEnded(streamId, error);
          return;
        }
        const state = this.streamsById.get(streamId);
        if (!state) return;
        this.media.remoteGone(streamId);
        this.streamsById.delete(streamId);
        this.events.emit('streamRemoved', state.info);
        return;
      }
      case 'published': {
        const key = await keyOf(message.key);
        this.publishKeys.set(message.stream_id, { epoch: message.epoch, key, seq: 0 });
        this.media.ownKey(message.stream_id, message.epoch, key);
        return;
      }
      case 'stream_key':
        return this.onStreamKey(message);
      case 'stream_unsubscribed': {
        const state = this.streamsById.get(message.stream_id);
        if (!state) return;
        state.current = undefined;
        state.previous = undefined;
        this.media.remoteGone(message.stream_id);
        this.updateStream(state, false);
        return;
      }
      case 'renewed': {
        this.identity = { ...this.identity, role: message.role, expiresAt: message.expires_at };
        this.grantPublishStreams = message.publish_streams;
        return;
      }
      case 'permissions': {
        this.grantPublishStreams = message.publish_streams;
        this.events.emit('permissions', {
          publishStreams: [...message.publish_streams],
          subscribeStreams: [...message.subscribe_streams],
          subscribeRoom: message.subscribe_room,
        });
        return;
      }
      default:
        // replies (pong, error, unpublished) go to their requests; unknown types are ignored
        return;
    }
  }

  private async onStreamKey(message: ServerMessage & { readonly type: 'stream_key' }): Promise<void> {
    const streamId = message.stream_id;
    const generation = { epoch: message.epoch, key: await keyOf(message.key) };
    const own = this.publishKeys.get(streamId);
    if (own) {
      // a new stream key: new nonce space, the sequence starts again
      own.epoch = generation.epoch;
      own.key = generation.key;
      own.seq = 0;
      this.media.ownKey(streamId, generation.epoch, generation.key);
      return;
    }
    const state = this.streamsById.get(streamId);
    if (!state) return;
    const wasSubscribed = state.current !== undefined;
    state.previous = state.current;
    state.current = { ...generation, window: new ReplayWindow(REPLAY_WINDOW) };
    if (!wasSubscribed) this.updateStream(state, true);
    this.media.remoteKey(this.streamsById.get(streamId)?.info ?? state.info, generation.epoch, generation.key);
  }

  private updateStream(state: RemoteStreamState, subscribed: boolean): void {
    const info = { ...state.info, subscribed };
    this.streamsById.set(info.streamId, { ...state, info });
    this.events.emit('streamUpdated', info);
  }

  private async onFrame(header: FrameHeader, message: Uint8Array): Promise<void> {
    const state = this.streamsById.get(header.streamId);
    if (!state || KIND_CODE[state.info.kind] !== header.kind) return;
    const generation = state.current?.epoch === header.epoch ? state.current
      : state.previous?.epoch === header.epoch ? state.previous : undefined;
    // replayed, too old, or under a key this session does not hold: dropped
    if (!generation || !generation.window.check(header.seq)) return;
    const payload = await open(generation.key, NONCE_LABEL.streamFrame, message);
    if (!payload || !generation.window.check(header.seq)) return;
    generation.window.commit(header.seq);
    const frame: ReceivedFrame = {
      streamId: header.streamId,
      kind: state.info.kind,
      participantId: state.info.participantId,
      userId: state.info.userId,
      sequence: header.seq,
      payload,
    };
    this.events.emit('frame', frame);
  }

  private takeRenewNonce(message: ServerMessage): void {
    const nonce = 'renew_nonce' in message ? message.renew_nonce : undefined;
    if (nonce !== undefined) this.renewNonce = fromB64u(nonce);
  }

  private serverNowMs(): number {
    return Date.now() + this.serverOffsetMs;
  }

  private async renewOnce(): Promise<void> {
    let token: MediaToken;
    try {
      token = await this.settings.getToken!();
    } catch (cause) {
      throw new MediaError('token_unavailable', 'getToken failed', { cause });
    }
    const connection = this.connection;
    const nonce = this.renewNonce;
    if (this.currentState !== 'connected' || !connection) throw new MediaError('connection_failed', 'the session is not connected');
    if (!nonce) throw new MediaError('renew_refused', 'no renewal challenge is available', { reason: 'stale_challenge' });
    const mediaKey = mediaKeyOf(token);
    const clientNonce = randomBytes(NONCE_BYTES);
    const proof = await proofOfPossession(mediaKey, await sha256(utf8(token.media.grant)), nonce, clientNonce);
    mediaKey.fill(0);
    this.renewNonce = undefined;
    const reply = await connection.request({ type: 'renew', grant: token.media.grant, nonce: toB64u(clientNonce), proof: toB64u(proof) });
    if (reply.type !== 'renewed') throw requestError(reply);
    this.token = token;
    this.media.renewed(token);
    this.lifetimeSeconds = lifetimeOf(token, this.serverNowMs());
    this.events.emit('renewed', { expiresAt: this.identity.expiresAt });
    this.scheduleRenewal();
  }

  private scheduleRenewal(delayMs?: number): void {
    clearTimeout(this.renewTimer);
    if (!this.settings.getToken || this.currentState !== 'connected') return;
    const expiresMs = this.identity.expiresAt * 1000;
    const lead = this.settings.renewBeforeSeconds ?? (this.lifetimeSeconds >= 120 ? 60 : this.lifetimeSeconds / 2);
    const delay = delayMs ?? expiresMs - lead * 1000 - this.serverNowMs();
    this.renewTimer = setTimeout(() => void this.renewOnSchedule(), Math.max(0, delay));
  }

  private async renewOnSchedule(): Promise<void> {
    try {
      await this.renew();
    } catch (err) {
      if (this.currentState !== 'connected') return;
      const error = err instanceof MediaError ? err : new MediaError('renew_refused', 'the renewal failed', { cause: err });
      this.events.emit('renewalFailed', { error });
      const remaining = this.identity.expiresAt * 1000 - this.serverNowMs();
      if (remaining > 0) this.scheduleRenewal(Math.min(10_000, Math.max(250, remaining / 4)));
    }
  }

  private startKeepalive(connection: Connection): void {
    clearInterval(this.keepaliveTimer);
    const { keepaliveIntervalMs, keepaliveTimeoutMs } = this.settings;
    this.keepaliveTimer = setInterval(() => {
      if (connection !== this.connection) return;
      if (Date.now() - connection.lastHeard > keepaliveTimeoutMs) {
        // nothing heard for too long: the network is gone even if the socket does not know it
        connection.abandon('timeout');
        return;
      }
      connection.request({ type: 'ping' }).catch(() => undefined);
    }, Math.min(keepaliveIntervalMs, keepaliveTimeoutMs / 2));
  }

  private onConnectionLost(code: number, reason: string): void {
    clearInterval(this.keepaliveTimer);
    clearTimeout(this.renewTimer);
    this.connection = undefined;
    this.publishKeys.clear();
    this.media.detach();
    const error = errorForClose(code, reason);
    const reconnect = this.settings.reconnect !== undefined && this.settings.getToken !== undefined && CLOSE_CODES[code]?.reconnect === true;
    if (!reconnect) {
      this.shutdown();
      if (error.code === 'revoked') this.events.emit('revoked', { error });
      if (error.code === 'expired') this.events.emit('expired', { error });
      this.events.emit('disconnected', { code, reason, willReconnect: false, error });
      return;
    }
    this.currentState = 'reconnecting';
    this.events.emit('disconnected', { code, reason, willReconnect: true, error });
    void this.reconnect(error);
  }

  private async reconnect(cause: MediaError): Promise<void> {
    const policy = this.settings.reconnect!;
    let error = cause;
    for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
      this.events.emit('reconnecting', { attempt, error });
      const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
      await sleep(base * (0.8 + Math.random() * 0.4));
      if (this.currentState !== 'reconnecting') return;
      let token: MediaToken;
      try {
        token = await this.settings.getToken!();
      } catch (err) {
        error = new MediaError('token_unavailable', 'getToken failed', { cause: err });
        continue;
      }
      if (this.currentState !== 'reconnecting') return;
      try {
        await this.openConnection(token);
      } catch (err) {
        error = err instanceof MediaError ? err : new MediaError('connection_failed', 'the reconnection failed', { cause: err });
        if (error.closeCode !== undefined && CLOSE_CODES[error.closeCode]?.reconnect === false) break;
        continue;
      }
      // the state moved on while awaiting (a close, or a loss of the new connection)
      if (!this.stateIs('connected')) return;
      await this.republish();
      await this.media.republish();
      this.events.emit('reconnected', { participantId: this.identity.participantId });
      return;
    }
    if (this.currentState !== 'reconnecting') return;
    this.shutdown();
    if (error.code === 'revoked') this.events.emit('revoked', { error });
    if (error.code === 'expired') this.events.emit('expired', { error });
    this.events.emit('disconnected', { code: error.closeCode ?? SOCKET_CLOSE.abnormal, reason: error.code, willReconnect: false, error });
  }

  private stateIs(state: SessionState): boolean {
    return this.currentState === state;
  }

  private async republish(): Promise<void> {
    for (const stream of [...this.local.values()]) {
      try {
        await this.requestPublish(stream);
      } catch (err) {
        if (this.currentState !== 'connected') return;
        const error = err instanceof MediaError ? err : new MediaError('protocol_error', 'republishing failed', { cause: err });
        this.local.delete(stream.streamId);
        stream.end(error);
        this.events.emit('localStreamEnded', { streamId: stream.streamId, error });
      }
    }
  }
}

function requestError(reply: ServerMessage): MediaError {
  if (reply.type !== 'error') return new MediaError('protocol_error', 'the request was refused');
  const known: MediaErrorCode = (MEDIA_ERROR_CODES as readonly string[]).includes(reply.code) ? reply.code : 'protocol_error';
  return new MediaError(known, reply.message, reply.reason === undefined ? {} : { reason: reply.reason });
}

function lifetimeOf(token: MediaToken, serverNowMs: number): number {
  const issued = typeof token.issued_at === 'number' ? token.issued_at : serverNowMs / 1000;
  return Math.max(0, token.expires_at - issued);
}

function sameStream(a: RemoteStream | undefined, b: RemoteStream): boolean {
  return a !== undefined && a.participantId === b.participantId && a.kind === b.kind && a.subscribed === b.subscribed;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function protocolError(what: string): MediaError {
  return new MediaError('protocol_error', `the server sent an invalid ${what}`);
}

function participantOf(p: ParticipantInfo): RemoteParticipant {
  return { participantId: p.participant_id, userId: p.user_id, role: p.role };
}

async function keyOf(value: string): Promise<SecretKey> {
  const raw = fromB64u(value);
  if (!raw || raw.length !== KEY_BYTES) throw protocolError('stream key');
  return importAesKey(raw);
}

async function streamStateOf(s: StreamInfo): Promise<RemoteStreamState> {
  const info: RemoteStream = { streamId: s.stream_id, kind: s.kind, participantId: s.participant_id, userId: s.user_id, subscribed: s.subscribed };
  const current = s.subscribed ? { epoch: s.epoch, key: await keyOf(s.key), window: new ReplayWindow(REPLAY_WINDOW) } : undefined;
  return { info, current, previous: undefined };
}
