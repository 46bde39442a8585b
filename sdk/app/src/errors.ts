/**
 * Stable error codes of the app SDK; branch on `code`, never on the message.
 *
 * @example
 * ```ts
 * const isFinal = (code: MediaErrorCode) => ['revoked', 'expired', 'unauthorized'].includes(code);
 * console.log(MEDIA_ERROR_CODES.length);
 * ```
 */
export const MEDIA_ERROR_CODES = [
  'unauthorized', 'expired', 'revoked', 'protocol_error', 'replaced', 'timeout', 'room_full', 'rate_limited',
  'slow_consumer', 'going_away', 'message_too_big', 'internal_error', 'connection_failed', 'closed',
  'stream_not_allowed', 'stream_in_use', 'already_published', 'not_published', 'renew_refused', 'token_unavailable',
] as const;

/**
 * One of `MEDIA_ERROR_CODES`.
 *
 * @example
 * ```ts
 * const code: MediaErrorCode = 'revoked';
 * ```
 */
export type MediaErrorCode = (typeof MEDIA_ERROR_CODES)[number];

/**
 * An error of the media connection: a close code from the server, a refused request, or a
 * local failure. `closeCode` is the WebSocket close code when the connection ended.
 *
 * @example
 * ```ts
 * try {
 *   await session.publish(7, 'video');
 * } catch (err) {
 *   if (err instanceof MediaError && err.code === 'stream_not_allowed') showNotAllowed();
 * }
 * ```
 */
export class MediaError extends Error {
  readonly code: MediaErrorCode;
  readonly closeCode: number | undefined;
  /** For `renew_refused`: why the server refused the renewal. */
  readonly reason: string | undefined;

  constructor(code: MediaErrorCode, message: string, options: { closeCode?: number; reason?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MediaError';
    this.code = code;
    this.closeCode = options.closeCode;
    this.reason = options.reason;
  }
}

/** Close codes of docs/protocol/media.md and what they mean to the SDK. */
export const CLOSE_CODES: Readonly<Record<number, { readonly code: MediaErrorCode; readonly reconnect: boolean }>> = {
  1000: { code: 'closed', reconnect: false },
  1001: { code: 'going_away', reconnect: true },
  1006: { code: 'connection_failed', reconnect: true },
  1009: { code: 'message_too_big', reconnect: false },
  1011: { code: 'internal_error', reconnect: true },
  1012: { code: 'going_away', reconnect: true },
  1013: { code: 'going_away', reconnect: true },
  4001: { code: 'unauthorized', reconnect: false },
  4002: { code: 'expired', reconnect: false },
  4003: { code: 'revoked', reconnect: false },
  4004: { code: 'protocol_error', reconnect: false },
  4005: { code: 'replaced', reconnect: false },
  4008: { code: 'timeout', reconnect: true },
  4009: { code: 'room_full', reconnect: false },
  4010: { code: 'slow_consumer', reconnect: true },
  4029: { code: 'rate_limited', reconnect: false },
};

export function errorForClose(closeCode: number, reason: string): MediaError {
  const known = CLOSE_CODES[closeCode];
  return new MediaError(known?.code ?? 'connection_failed', `the media connection closed (${closeCode}${reason ? ` ${reason}` : ''})`, { closeCode });
}
