import { MEDIA_CLOSE, type ServerControl } from '@rtc/protocol';

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
  'rtc_invalid_offer', 'rtc_unavailable',
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

type CloseMeaning = { readonly code: MediaErrorCode; readonly reconnect: boolean };

/**
 * Close codes of RFC 6455 that the media server never sends: the WebSocket layer reports 1006
 * itself when a connection dropped without a close frame, and a proxy in front of the server may
 * close with 1012 or 1013.
 */
export const SOCKET_CLOSE = { abnormal: 1006, service_restart: 1012, try_again_later: 1013 } as const;

/**
 * What each close code means to the SDK: the server's codes of docs/protocol/media.md (`normal`
 * ends the session as `closed`), and codes the WebSocket layer itself reports when the server did
 * not close the connection.
 */
export const CLOSE_CODES: Readonly<Record<number, CloseMeaning>> = {
  ...Object.fromEntries(Object.values(MEDIA_CLOSE).map((c): [number, CloseMeaning] =>
    [c.code, { code: c.reason === MEDIA_CLOSE.normal.reason ? 'closed' : c.reason, reconnect: c.reconnect }])),
  [SOCKET_CLOSE.abnormal]: { code: 'connection_failed', reconnect: true },
  [SOCKET_CLOSE.service_restart]: { code: 'going_away', reconnect: true },
  [SOCKET_CLOSE.try_again_later]: { code: 'going_away', reconnect: true },
};

/** Where a connection went: its URL, and whether its socket ever opened. */
export interface ConnectionPlace {
  readonly url: string;
  readonly opened: boolean;
}

/**
 * The error of a close: its code, the URL (ws: or wss:) and, for a socket that never opened, the
 * likely causes (nothing listens there, or TLS on one side only: docs/operations/configuration.md).
 */
export function errorForClose(closeCode: number, reason: string, place?: ConnectionPlace): MediaError {
  const known = CLOSE_CODES[closeCode];
  const code = `(${closeCode}${reason ? ` ${reason}` : ''})`;
  let message = `the media connection closed ${code}`;
  if (place?.opened) message = `the media connection to ${place.url} closed ${code}`;
  else if (place) {
    const tls = place.url.startsWith('wss:') ? 'pass secure: false for a platform without TLS' : 'a platform with TLS needs wss:// (leave secure out)';
    message = `the media role at ${place.url} closed the connection ${code} before it opened: is it reachable, and does it serve TLS? ${tls}`;
  }
  return new MediaError(known?.code ?? 'connection_failed', message, { closeCode });
}

/** The error of a refused request: the server's `error` reply, its code checked against `MEDIA_ERROR_CODES`. */
export function requestError(reply: ServerControl): MediaError {
  if (reply.type !== 'error') return new MediaError('protocol_error', 'the request was refused');
  const known: MediaErrorCode = (MEDIA_ERROR_CODES as readonly string[]).includes(reply.code) ? reply.code : 'protocol_error';
  return new MediaError(known, reply.message, reply.reason === undefined ? {} : { reason: reply.reason });
}
