/** Public shapes of the app SDK. */
import type { MediaError } from './errors.ts';

export type FrameKind = 'audio' | 'video' | 'data';

/**
 * What the SDK needs of a token response (`POST /v1/rtc/tokens`): pass the whole response.
 * `media.key` is the secret media key; the SDK proves it holds it and never sends it.
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
}

/** The WHATWG `WebSocket` surface the SDK uses; browsers' `WebSocket` and the `ws` package both fit. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: Uint8Array | string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: WebSocketEventLike) => void): void;
}

/** The fields the SDK reads from WebSocket events. */
export interface WebSocketEventLike {
  readonly type: string;
  readonly data?: unknown;
  readonly code?: number;
  readonly reason?: string;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface ReconnectOptions {
  /** Attempts after a network loss before giving up (default 10). */
  readonly maxAttempts?: number;
  /** First delay; doubles per attempt up to `maxDelayMs` (defaults 250 and 5000). */
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

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
  /** A ping every this many milliseconds (default 15000). */
  readonly keepaliveIntervalMs?: number;
  /** With nothing heard from the server for this long, the connection counts as lost (default 30000). */
  readonly keepaliveTimeoutMs?: number;
}

export interface RemoteParticipant {
  readonly participantId: string;
  readonly userId: string;
  readonly role: string;
}

export interface RemoteStream {
  readonly streamId: number;
  readonly kind: FrameKind;
  readonly participantId: string;
  readonly userId: string;
  /** Whether this session receives the stream's frames (its grant lists it, or `subscribe_room`). */
  readonly subscribed: boolean;
}

export interface ReceivedFrame {
  readonly streamId: number;
  readonly kind: FrameKind;
  readonly participantId: string;
  readonly userId: string;
  /** The publisher's sequence number under the stream key in use. */
  readonly sequence: number;
  readonly payload: Uint8Array;
}

export interface DisconnectInfo {
  readonly code: number;
  readonly reason: string;
  readonly willReconnect: boolean;
  readonly error: MediaError;
}

/** Events of a media session and their payloads. */
export interface MediaSessionEvents {
  frame: ReceivedFrame;
  participantJoined: RemoteParticipant;
  participantLeft: RemoteParticipant;
  streamAdded: RemoteStream;
  streamRemoved: RemoteStream;
  /** A stream became (un)subscribed after a renewal changed the grant. */
  streamUpdated: RemoteStream;
  renewed: { readonly expiresAt: number };
  renewalFailed: { readonly error: MediaError };
  reconnecting: { readonly attempt: number; readonly error: MediaError };
  reconnected: { readonly participantId: string };
  revoked: { readonly error: MediaError };
  expired: { readonly error: MediaError };
  disconnected: DisconnectInfo;
  /** A stream this session published ended without `LocalStream.close()` (server removal, or refused after a reconnection). */
  localStreamEnded: { readonly streamId: number; readonly error: MediaError };
}
