/** Public shapes of the app SDK. */
import type { MediaError } from './errors.ts';
import type { RemoteTrack, StreamLayer } from './webrtc/remote-track.ts';

/**
 * What a stream carries; the media server drops video before data and audio when a subscriber falls behind.
 *
 * @example
 * ```ts
 * const kind: FrameKind = 'video';
 * await session.publish(2, kind);
 * ```
 */
export type FrameKind = 'audio' | 'video' | 'data';

/**
 * What a published stream carries, told to the server with `publish` and listed by the room
 * service API (docs/protocol/media.md, "publish").
 *
 * @example
 * ```ts
 * const screen = await session.publish(3, 'video', { source: 'screen_share' });
 * ```
 */
export type StreamSource = 'camera' | 'microphone' | 'screen_share' | 'screen_share_audio' | 'unknown';

/**
 * Options of `publish`.
 *
 * @example
 * ```ts
 * const mic = await session.publish(1, 'audio', { source: 'microphone' });
 * ```
 */
export interface PublishOptions {
  /** What the stream carries; left out, the room service API lists it as `unknown`. */
  readonly source?: StreamSource;
}

/**
 * What the SDK needs of a token response (`POST /v1/rtc/tokens`): pass the whole response.
 * `media.key` is the secret media key; the SDK proves it holds it and never sends it.
 *
 * @example
 * ```ts
 * const token: MediaToken = await (await fetch('/my-backend/rtc-token')).json();
 * const session = await connect({ token });
 * ```
 */
export interface MediaToken {
  readonly media: {
    readonly grant: string;
    readonly key: string;
    readonly sfu_host: string;
    readonly sfu_port: number;
  };
  readonly expires_at: number;
  readonly issued_at?: number;
  /** TURN relay credentials (asked with `turn: true`): the peer connection's ICE servers. */
  readonly turn?: { readonly username: string; readonly credential: string; readonly uris: readonly string[] };
}

/**
 * The WHATWG `WebSocket` surface the SDK uses; browsers' `WebSocket` and the `ws` package both fit.
 *
 * @example
 * ```ts
 * import WebSocket from 'ws';
 * const socket: WebSocketLike = new WebSocket('wss://media.example.com/v1/media');
 * ```
 */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: Uint8Array | string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: WebSocketEventLike) => void): void;
}

/**
 * The fields the SDK reads from WebSocket events.
 *
 * @example
 * ```ts
 * socket.addEventListener('close', (event: WebSocketEventLike) => console.log(event.code, event.reason));
 * ```
 */
export interface WebSocketEventLike {
  readonly type: string;
  readonly data?: unknown;
  readonly code?: number;
  readonly reason?: string;
}

/**
 * A WebSocket class; Node 20 has none built in, so pass `ws` there.
 *
 * @example
 * ```ts
 * import WebSocket from 'ws';
 * const session = await connect({ token, WebSocket: WebSocket satisfies WebSocketConstructor });
 * ```
 */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/**
 * How the SDK retries after a network loss (each attempt asks `getToken` for a fresh token).
 * Attempts made while moving off a media node that is leaving or not coming back (every 500 ms,
 * for up to 30 s: docs/protocol/media.md, section 8.1) do not count against `maxAttempts`.
 *
 * @example
 * ```ts
 * await connect({ token, getToken, reconnect: { maxAttempts: 20, maxDelayMs: 10_000 } });
 * ```
 */
export interface ReconnectOptions {
  /** Attempts after a network loss before giving up (default 10). */
  readonly maxAttempts?: number;
  /** First delay; doubles per attempt up to `maxDelayMs` (defaults 250 and 5000). */
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

/**
 * Options of `connect`.
 *
 * @example
 * ```ts
 * const options: ConnectOptions = { token, getToken: fetchToken, renewBeforeSeconds: 120 };
 * const session = await connect(options);
 * ```
 */
export interface ConnectOptions {
  /** A token response from the customer's server; without it, `getToken` provides the first one. */
  readonly token?: MediaToken;
  /** Asks the customer's server for a fresh token: used for renewal before expiry and to reconnect. */
  readonly getToken?: () => Promise<MediaToken>;
  /** The media server's WebSocket URL; by default built from the token's `sfu_host` and `sfu_port`. */
  readonly url?: string;
  /** `wss:` (default) or `ws:` when the URL is built from the token. */
  readonly secure?: boolean;
  /** The WebSocket class; defaults to `globalThis.WebSocket` (Node 20 has none: pass `ws`). */
  readonly WebSocket?: WebSocketConstructor;
  /** Renew this many seconds before `expires_at` (default 60, or half the lifetime for tokens of under two minutes). */
  readonly renewBeforeSeconds?: number;
  /** Reconnection after a network loss (never after a revocation); `false` turns it off. */
  readonly reconnect?: boolean | ReconnectOptions;
  /** Time allowed to open the socket and complete the join (default 10000). */
  readonly connectTimeoutMs?: number;
  /**
   * Audio and video over WebRTC (browsers): extra ICE servers besides the token's `turn`, and
   * `iceTransportPolicy: 'relay'` to send every packet through TURN. `false` turns WebRTC off.
   */
  readonly webrtc?: boolean | WebRtcOptions;
  /** A ping every this many milliseconds (default 15000). */
  readonly keepaliveIntervalMs?: number;
  /** With nothing heard from the server for this long, the connection counts as lost (default 30000). */
  readonly keepaliveTimeoutMs?: number;
  /**
   * Adaptive video (default `false`): each received video is bounded by the elements it is
   * attached to with `RemoteTrack.attach`, the largest visible one in device pixels, and paused
   * (no video sent at all) while none is visible or the page is hidden. Changes go to the server
   * at most every 500 ms. Off by default because the SDK cannot see every use of a track: a video
   * drawn to a canvas, recorded or analysed needs its frames whatever an element shows.
   */
  readonly adaptiveStream?: boolean;
}

/**
 * WebRTC settings of `connect`.
 *
 * @example
 * ```ts
 * await connect({ token, getToken, webrtc: { iceTransportPolicy: 'relay' } });
 * ```
 */
export interface WebRtcOptions {
  /** ICE servers used besides the token's `turn` credentials. */
  readonly iceServers?: readonly { readonly urls: string | readonly string[]; readonly username?: string; readonly credential?: string }[];
  /** `relay` sends every packet through TURN (the token must carry `turn`); default `all`. */
  readonly iceTransportPolicy?: 'all' | 'relay';
}

/**
 * How well audio and video flow, measured every two seconds while a peer connection exists.
 *
 * @example
 * ```ts
 * session.on('connectionQuality', (q: ConnectionQuality) => (bars.dataset.quality = q.quality));
 * ```
 */
export interface ConnectionQuality {
  readonly quality: 'excellent' | 'good' | 'poor' | 'lost';
  /** Round-trip time to the media server, ms (undefined before it is measured). */
  readonly rttMs: number | undefined;
  /** Share of incoming packets lost over the last interval, 0 to 1. */
  readonly packetLoss: number;
}

/**
 * Another participant of the room.
 *
 * @example
 * ```ts
 * session.on('participantJoined', (p: RemoteParticipant) => console.log(`${p.userId} joined as ${p.role}`));
 * ```
 */
export interface RemoteParticipant {
  readonly participantId: string;
  readonly userId: string;
  readonly role: string;
  /** Set by the customer's server (room service API); '' when none. */
  readonly metadata: string;
  /** Set by the customer's server, key by key; {} when none. */
  readonly attributes: Readonly<Record<string, string>>;
}

/** A participant's metadata or attributes changed (`participantMetadataChanged`); `local`: this session's own. */
export interface ParticipantMetadataChange {
  readonly participantId: string;
  readonly userId: string;
  readonly local: boolean;
  readonly metadata: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** Keys whose value changed, was added or was deleted (deleted ones are absent from `attributes`). */
  readonly changedAttributes: readonly string[];
  /** Whether `metadata` changed. */
  readonly metadataChanged: boolean;
}

/** A data message from the customer's server (`serverData`). */
export interface ServerData {
  readonly data: Uint8Array;
  /** The topic the server gave, or null. */
  readonly topic: string | null;
}

/**
 * A stream another participant publishes.
 *
 * @example
 * ```ts
 * const received = session.streams().filter((s: RemoteStream) => s.subscribed);
 * ```
 */
export interface RemoteStream {
  readonly streamId: number;
  readonly kind: FrameKind;
  readonly participantId: string;
  readonly userId: string;
  /** Whether this session receives the stream's frames (its grant lists it, or `subscribe_room`). */
  readonly subscribed: boolean;
}

/**
 * A frame received, authenticated and decrypted.
 *
 * @example
 * ```ts
 * session.on('frame', (f: ReceivedFrame) => decoders.get(f.streamId)?.decode(f.payload));
 * ```
 */
export interface ReceivedFrame {
  readonly streamId: number;
  readonly kind: FrameKind;
  readonly participantId: string;
  readonly userId: string;
  /** The publisher's sequence number under the stream key in use. */
  readonly sequence: number;
  readonly payload: Uint8Array;
}

/**
 * Why the connection ended, and whether the SDK is reconnecting.
 *
 * @example
 * ```ts
 * session.on('disconnected', (d: DisconnectInfo) => { if (!d.willReconnect) showEnded(d.error.code); });
 * ```
 */
export interface DisconnectInfo {
  readonly code: number;
  readonly reason: string;
  readonly willReconnect: boolean;
  readonly error: MediaError;
}

/** What a session may publish and receive now. */
export interface MediaPermissions {
  readonly publishStreams: readonly number[];
  readonly subscribeStreams: readonly number[];
  readonly subscribeRoom: boolean;
}

/**
 * Events of a media session and their payloads.
 *
 * @example
 * ```ts
 * const onRevoked = (e: MediaSessionEvents['revoked']) => showRemoved(e.error.code);
 * session.on('revoked', onRevoked);
 * ```
 */
export interface MediaSessionEvents {
  frame: ReceivedFrame;
  participantJoined: RemoteParticipant;
  participantLeft: RemoteParticipant;
  streamAdded: RemoteStream;
  streamRemoved: RemoteStream;
  /** A stream became (un)subscribed after a renewal changed the grant. */
  streamUpdated: RemoteStream;
  renewed: { readonly expiresAt: number };
  /**
   * The customer's server changed what this session may publish and receive, without a reconnection
   * (the room service API). Streams no longer allowed have already ended (`localStreamEnded`, `streamUpdated`).
   */
  permissions: MediaPermissions;
  /** The customer's server set the room's metadata (`session.roomMetadata` holds it too). */
  roomMetadataChanged: { readonly metadata: string };
  /** The customer's server set a participant's metadata or attributes, this session's own (`local`) or another's. */
  participantMetadataChanged: ParticipantMetadataChange;
  /** A data message from the customer's server to the room, or to this session. */
  serverData: ServerData;
  /**
   * The customer's server muted or unmuted a stream of the room (the room service API): while muted
   * the server forwards none of its media. Told to its publisher (`participantId` is this session's
   * own) and to every other participant; a session joining a room with a muted stream hears of it too.
   */
  streamMuted: { readonly streamId: number; readonly participantId: string; readonly muted: boolean };
  renewalFailed: { readonly error: MediaError };
  /**
   * An attempt to join again is about to be made. `moving`: the media node is leaving (`going_away`)
   * or not coming back (its address refuses connections, or two attempts failed), so the SDK asks
   * `getToken` every half second for a token that names a live node (docs/protocol/media.md).
   */
  reconnecting: { readonly attempt: number; readonly error: MediaError; readonly moving: boolean };
  /**
   * Joined again, local streams published again under the same stream ids. `moved`: on another media
   * node than before the loss; `mediaNode` is the `host:port` the session is on now.
   */
  reconnected: { readonly participantId: string; readonly moved: boolean; readonly mediaNode: string };
  revoked: { readonly error: MediaError };
  expired: { readonly error: MediaError };
  disconnected: DisconnectInfo;
  /** A remote audio or video track is ready to play. */
  trackSubscribed: RemoteTrack;
  /** A remote track ended: the stream was removed or is no longer allowed, or the connection was lost (a reconnection brings it back). */
  trackUnsubscribed: RemoteTrack;
  connectionQuality: ConnectionQuality;
  /**
   * The server stopped forwarding a received video: even its smallest layer does not fit this
   * session's downlink (`reason: 'bandwidth'`), or the media node lost for a moment its link to the
   * node the stream is published on (`'relay'`); later servers may name others. Audio goes on.
   */
  streamPaused: { readonly streamId: number; readonly reason: string };
  /** Video of a paused stream flows again, from a key frame. */
  streamResumed: { readonly streamId: number };
  /** The simulcast layer the server now forwards of a received video (after a bandwidth change or new bounds). */
  streamLayer: { readonly streamId: number } & StreamLayer;
  /** Audio or video could not be negotiated for a change (the peer connection keeps what it had). */
  mediaError: { readonly error: MediaError };
  /** The peer connection's state (`new`, `connecting`, `connected`, `disconnected`, `failed`, `closed`). */
  mediaConnectionState: { readonly state: string };
  /** A stream this session published ended without `LocalStream.close()` (server removal, or refused after a reconnection). */
  localStreamEnded: { readonly streamId: number; readonly error: MediaError };
}
