/**
 * Limits and vocabulary of the signaling protocol (docs/protocol/signaling.md), named once: the
 * signaling role enforces them and the HTTP reference documents them.
 */

/** Largest `data` of one message, measured as UTF-8 JSON. */
export const MAX_MESSAGE_BYTES = 16_384;
/** Largest request body; a larger one is refused before it is read. */
export const MAX_BODY_BYTES = 65_536;
/** Requests one signaling token may make per window (every endpoint counts). */
export const TOKEN_REQUESTS_PER_WINDOW = 50;
export const TOKEN_RATE_WINDOW_SECONDS = 1;
/** How long, and how many, past events of a room are kept for resuming streams. */
export const RETENTION_SECONDS = 60;
export const RETENTION_EVENTS = 1024;
/** A joined session without an open event stream for this long leaves (reason `timeout`). */
export const PRESENCE_GRACE_SECONDS = 30;
/** A comment line on every open stream at this interval keeps proxies and clients aware of it. */
export const KEEPALIVE_SECONDS = 15;
/** Open event streams per session; opening one more ends the oldest. */
export const MAX_STREAMS_PER_SESSION = 4;
/** Joined sessions per room. */
export const MAX_SESSIONS_PER_ROOM = 1000;
/** Bytes a stream may have waiting for a slow reader before it is ended (the reader resumes). */
export const MAX_STREAM_BUFFER_BYTES = 1_048_576;
