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
/**
 * The longest lifetime of a console test token (`POST /v1/projects/{id}/temporary-token`) and of a
 * share-link guest's token: ten minutes (docs/console.md); the public catalog's
 * `token_lifetimes.temporary_token_max_ttl_seconds`.
 */
export const TEMPORARY_TOKEN_MAX_TTL_SECONDS = 600;

/** The longest ban a removal may ask for (`ban_seconds`, docs/reference/room-api.md, "Banning"): seven days. */
export const MAX_BAN_SECONDS = 7 * 24 * 3600;

/** Bounds of the room service API's metadata and data messages (docs/reference/room-api.md, "Limits"). */
export const MAX_ROOM_METADATA_BYTES = 16_384;
export const MAX_PARTICIPANT_METADATA_BYTES = 4_096;
export const MAX_PARTICIPANT_ATTRIBUTES = 32;
export const MAX_ATTRIBUTE_KEY_BYTES = 64;
export const MAX_ATTRIBUTE_VALUE_BYTES = 1_024;
/** Keys and values of a participant's attributes together, in UTF-8 bytes. */
export const MAX_PARTICIPANT_ATTRIBUTES_BYTES = 8_192;
/** A data message from the customer's server, decoded; its base64 fits a media control message. */
export const MAX_SERVER_DATA_BYTES = 16_384;
export const MAX_DATA_TOPIC_BYTES = 128;
/** Participant and user ids a data message may name, each list. */
export const MAX_DATA_DESTINATIONS = 256;
/** The longest `empty_timeout` of a room: seven days. */
export const MAX_EMPTY_TIMEOUT_SECONDS = 7 * 24 * 3600;
/** The `empty_timeout` of a room created with `POST /v1/rtc/rooms` that names none. */
export const DEFAULT_EMPTY_TIMEOUT_SECONDS = 300;
/**
 * Rooms a project may hold created ahead with `POST /v1/rtc/rooms` that nobody joined yet and whose
 * `empty_timeout` has not run out (docs/reference/room-api.md, "Limits"): one more is 409 `conflict`.
 */
export const MAX_ROOMS_CREATED_AHEAD = 1_000;
/** `POST /v1/rtc/rooms` calls a project may make a minute; one more is 429 `rate_limited`. */
export const ROOM_CREATIONS_PER_MINUTE = 600;
/** Body limit of the room service operations that carry metadata or data. */
export const ROOM_DATA_BODY_LIMIT_BYTES = 65_536;
