/** Shapes shared by the parts of a media session. */
import type { MediaToken, WebRtcOptions, WebSocketConstructor } from '../types.ts';

/** Settings of a session, resolved from `ConnectOptions` by `connect`. */
export interface SessionSettings {
  readonly getToken: (() => Promise<MediaToken>) | undefined;
  readonly urlFor: (token: MediaToken) => string;
  readonly WebSocket: WebSocketConstructor;
  readonly renewBeforeSeconds: number | undefined;
  readonly reconnect: ReconnectPolicy | undefined;
  readonly connectTimeoutMs: number;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly webrtc: boolean | WebRtcOptions | undefined;
  readonly adaptiveStream: boolean;
}

/** How often and how fast a session tries to come back after a network loss. */
export interface ReconnectPolicy {
  readonly maxAttempts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
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
