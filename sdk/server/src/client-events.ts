import type { TokenOperation } from './errors.ts';

/**
 * What the client reports to an optional logger. No event ever carries the App Secret, the
 * `Authorization` header, a request or response body, or a media key.
 *
 * @example
 * ```ts
 * const logger = (e: TokenClientEvent) => {
 *   if (e.type === 'retry') console.warn(`token API: retry ${e.attempt} in ${e.delayMs} ms`);
 * };
 * ```
 */
export type TokenClientEvent =
  | { readonly type: 'request'; readonly operation: TokenOperation; readonly attempt: number; readonly url: string }
  | {
      readonly type: 'response';
      readonly operation: TokenOperation;
      readonly attempt: number;
      readonly status: number;
      /** The error code of an error answer. */
      readonly code: string | undefined;
      readonly retryAfterSec: number | undefined;
      readonly requestId: string | undefined;
      readonly durationMs: number;
    }
  | {
      readonly type: 'network_error';
      readonly operation: TokenOperation;
      readonly attempt: number;
      readonly reason: 'network' | 'timeout';
      readonly durationMs: number;
    }
  | {
      readonly type: 'retry';
      readonly operation: TokenOperation;
      /** Number of the attempt about to be made after the wait. */
      readonly attempt: number;
      readonly delayMs: number;
      /** `retry-after`: the wait is the server's `Retry-After`; `backoff`: exponential backoff with full jitter. */
      readonly basis: 'backoff' | 'retry-after';
    };

/**
 * Receives the client's events. Exceptions it throws are swallowed: logging never breaks a call.
 *
 * @example
 * ```ts
 * const tokens = new TokenClient({ baseUrl, appId, appSecret, logger: (e) => pinoLogger.debug(e, 'token api') });
 * ```
 */
export type TokenClientLogger = (event: TokenClientEvent) => void;
