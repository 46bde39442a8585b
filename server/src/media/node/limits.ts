/** Numbers of the media server alone (docs/protocol/media.md); those clients share are in @rtc/protocol. */

/** Largest handshake (text) message; the grant alone is at most 8192 characters. */
export const MAX_HANDSHAKE_MESSAGE_BYTES = 16_384;

/** The client must send `join` within this time of the connection opening. */
export const HANDSHAKE_TIMEOUT_MS = 5_000;
/** A joined session that sends nothing (not even `ping`) for this long is closed. */
export const IDLE_TIMEOUT_MS = 45_000;
export const IDLE_SWEEP_INTERVAL_MS = 5_000;
/** A closing peer that does not finish the close handshake is dropped after this. */
export const CLOSE_GRACE_MS = 1_000;
/** Accepted clock skew for `iat` in the future. */
export const CLOCK_SKEW_SECONDS = 60;

/** After a stream key rotation, frames under the previous key are still accepted this long. */
export const KEY_ROTATION_GRACE_MS = 2_000;

export const MAX_ROOM_PARTICIPANTS = 256;
/** Control messages per session: a token bucket of this size, refilled at this rate per second. */
export const CONTROL_BURST = 40;
export const CONTROL_RATE_PER_SECOND = 20;
/** Grants of one session that are still alive (the current one and those it renewed). */
export const MAX_LIVE_GRANTS_PER_SESSION = 8;

/** Socket backlog above which frames wait in the session's own queue. */
export const SOCKET_HIGH_WATER_BYTES = 256 * 1024;
/** Bounds of the per-subscriber media queue; over them the drop policy applies. */
export const MEDIA_QUEUE_MAX_BYTES = 1024 * 1024;
export const MEDIA_QUEUE_MAX_FRAMES = 1024;
/** Control messages are never dropped; a session that lets this much pile up is closed (4010). */
export const CONTROL_QUEUE_MAX_BYTES = 4 * 1024 * 1024;
