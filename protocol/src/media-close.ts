/**
 * WebSocket close codes of the media connection (docs/protocol/media.md, "Close codes"): the
 * server closes with them and clients decide on them. `reconnect` says whether a client should
 * come back with a fresh token.
 */
export const MEDIA_CLOSE = {
  normal: { code: 1000, reason: 'normal', reconnect: false },
  going_away: { code: 1001, reason: 'going_away', reconnect: true },
  message_too_big: { code: 1009, reason: 'message_too_big', reconnect: false },
  internal_error: { code: 1011, reason: 'internal_error', reconnect: true },
  unauthorized: { code: 4001, reason: 'unauthorized', reconnect: false },
  expired: { code: 4002, reason: 'expired', reconnect: false },
  revoked: { code: 4003, reason: 'revoked', reconnect: false },
  protocol_error: { code: 4004, reason: 'protocol_error', reconnect: false },
  replaced: { code: 4005, reason: 'replaced', reconnect: false },
  timeout: { code: 4008, reason: 'timeout', reconnect: true },
  room_full: { code: 4009, reason: 'room_full', reconnect: false },
  slow_consumer: { code: 4010, reason: 'slow_consumer', reconnect: true },
  rate_limited: { code: 4029, reason: 'rate_limited', reconnect: false },
} as const;

export type MediaCloseName = keyof typeof MEDIA_CLOSE;
