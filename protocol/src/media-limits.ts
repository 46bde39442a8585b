/** Names and numbers of the media protocol that the server and the clients share (docs/protocol/media.md). */

/**
 * Path of the media WebSocket endpoint on `sfu_host:sfu_port`.
 *
 * @example
 * ```ts
 * const url = `wss://${token.media.sfu_host}:${token.media.sfu_port}${MEDIA_PATH}`;
 * ```
 */
export const MEDIA_PATH = '/v1/media';

export const MEDIA_KINDS = ['audio', 'video', 'data'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/**
 * What a published stream carries, as its publisher says in `publish` (docs/protocol/media.md,
 * "publish"); `unknown` when it did not say.
 */
export const STREAM_SOURCES = ['camera', 'microphone', 'screen_share', 'screen_share_audio', 'unknown'] as const;
export type StreamSource = (typeof STREAM_SOURCES)[number];

/** Largest message a client may send (text or binary); larger ones close with 1009. */
export const MAX_CLIENT_MESSAGE_BYTES = 65_536;
/** Longest grant in `join` and `renew`. */
export const MAX_GRANT_CHARS = 8192;
/** Request ids of control messages are 0..2^32-1. */
export const MAX_REQUEST_ID = 0xffffffff;
/** Bytes of the challenge, client and renewal nonces. */
export const NONCE_BYTES = 32;
/** Bytes of media keys, session keys and stream keys. */
export const KEY_BYTES = 32;
/** Media frames more than this many sequence numbers behind the newest are dropped. */
export const REPLAY_WINDOW = 1024;

/** HMAC and HKDF labels of the handshake (docs/protocol/media.md, "Handshake"). */
export const KEY_LABEL = {
  proof: 'rtc/pop/v1',
  clientToServer: 'rtc/media/c2s/v1',
  serverToClient: 'rtc/media/s2c/v1',
} as const;

/** Longest SDP in `rtc_offer` (the whole control message must stay within the 64 KiB message limit). */
export const MAX_SDP_CHARS = 60_000;
/** Most m-lines an `rtc_offer` may map: 8 published and 32 received streams. */
export const MAX_RTC_TRACKS = 40;
/** Most simulcast layers a published video m-line may carry (`a=simulcast:send`, smallest first). */
export const MAX_SIMULCAST_LAYERS = 3;
/** Largest width or height an `rtc_video` bound may name. */
export const MAX_VIDEO_DIMENSION = 16_384;
