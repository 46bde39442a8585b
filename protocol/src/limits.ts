/** Numbers of docs/reference/token-api.md, "Limits" and "Request rules", named once. */
export const DEFAULT_TTL_SECONDS = 600;
export const MAX_TTL_SECONDS = 3600;
export const MAX_PUBLISH_STREAMS = 8;
export const MAX_SUBSCRIBE_STREAMS = 32;
export const MAX_STREAM_ID = 4294967295;
export const MAX_ID_LENGTH = 128;
export const TOKEN_API_BODY_LIMIT_BYTES = 8192;
export const APP_REQUESTS_PER_MINUTE = 1200;
export const ADDRESS_REQUESTS_PER_MINUTE = 2400;
export const AUTH_FAILURES_PER_WINDOW = 20;
export const AUTH_FAILURE_WINDOW_SECONDS = 300;

/** The longest ban a removal may ask for (`ban_seconds`, docs/reference/room-api.md, "Banning"): seven days. */
export const MAX_BAN_SECONDS = 7 * 24 * 3600;
