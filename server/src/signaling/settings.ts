import {
  KEEPALIVE_SECONDS, MAX_MESSAGE_BYTES, MAX_SESSIONS_PER_ROOM, MAX_STREAM_BUFFER_BYTES, MAX_STREAMS_PER_SESSION,
  PRESENCE_GRACE_SECONDS, RETENTION_EVENTS, RETENTION_SECONDS, TOKEN_RATE_WINDOW_SECONDS, TOKEN_REQUESTS_PER_WINDOW,
} from './limits.ts';

/** Settings of the signaling service; the protocol's limits are named in signaling/limits.ts. */

export interface SignalingSettings {
  /** `iss` every signaling token must carry. */
  readonly issuer: string;
  readonly maxMessageBytes: number;
  readonly rateLimit: { readonly max: number; readonly windowSec: number };
  readonly retention: { readonly ms: number; readonly events: number };
  readonly presenceGraceMs: number;
  readonly keepaliveMs: number;
  readonly maxStreamsPerSession: number;
  readonly maxSessionsPerRoom: number;
  readonly maxStreamBufferBytes: number;
}

/** The documented settings for a platform whose tokens carry `issuer`. */
export function defaultSignalingSettings(issuer: string): SignalingSettings {
  return {
    issuer,
    maxMessageBytes: MAX_MESSAGE_BYTES,
    rateLimit: { max: TOKEN_REQUESTS_PER_WINDOW, windowSec: TOKEN_RATE_WINDOW_SECONDS },
    retention: { ms: RETENTION_SECONDS * 1000, events: RETENTION_EVENTS },
    presenceGraceMs: PRESENCE_GRACE_SECONDS * 1000,
    keepaliveMs: KEEPALIVE_SECONDS * 1000,
    maxStreamsPerSession: MAX_STREAMS_PER_SESSION,
    maxSessionsPerRoom: MAX_SESSIONS_PER_ROOM,
    maxStreamBufferBytes: MAX_STREAM_BUFFER_BYTES,
  };
}
