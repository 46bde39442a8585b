import type { ErrorCode } from '@rtc/protocol';

/**
 * Which call of the token API failed.
 *
 * @example
 * ```ts
 * if (err instanceof TokenApiError && err.operation === 'revoke') retryLater(handle);
 * ```
 */
export type TokenOperation =
  | 'issue' | 'revoke' | 'listRooms' | 'getRoom' | 'removeParticipant' | 'endRoom' | 'updateParticipant' | 'createRoom' | 'updateRoom'
  | 'sendData' | 'muteStream';

interface FailureDetails {
  readonly operation: TokenOperation;
  /** Attempts made, the failed one included. */
  readonly attempts: number;
  readonly cause?: unknown;
}

/**
 * The token API answered with an error of the platform's catalogue (`{"error": code, "message": text}`).
 *
 * Branch on `code`, never on `message`. `status` is the HTTP status that carried it and
 * `retryAfterSec` the `Retry-After` header in seconds, when the answer had one (always on
 * `429 rate_limited`).
 *
 * @example
 * ```ts
 * try {
 *   await tokens.issue({ room_id: 'r_81', user_id: 'u_7', role: 'speaker', publish_streams: [1] });
 * } catch (err) {
 *   if (err instanceof TokenApiError && err.code === 'scope_denied') {
 *     // the credential lacks the publisher scope: fix the credential, not the request
 *   }
 *   throw err;
 * }
 * ```
 */
export class TokenApiError extends Error {
  /** The platform's error code (docs/reference/errors.md), e.g. `invalid_request`, `rate_limited`, `turn_unavailable`. */
  readonly code: ErrorCode;
  /** HTTP status of the answer (400, 401, 403, 404, 413, 415, 429, 502, ...). */
  readonly status: number;
  /** The `message` of the answer's body, verbatim: for people (a tool may print it), not for branching. */
  readonly serverMessage: string;
  /** `Retry-After` of the answer, in whole seconds; undefined when the header was absent. */
  readonly retryAfterSec: number | undefined;
  /** `X-Request-Id` of the answer: quote it when asking the platform's support. */
  readonly requestId: string | undefined;
  readonly operation: TokenOperation;
  /** Attempts made, the failed one included. */
  readonly attempts: number;

  constructor(
    code: ErrorCode,
    status: number,
    serverMessage: string,
    details: FailureDetails & { readonly retryAfterSec?: number | undefined; readonly requestId?: string | undefined },
  ) {
    super(`${details.operation}: ${status} ${code}: ${serverMessage}`);
    this.name = 'TokenApiError';
    this.code = code;
    this.status = status;
    this.serverMessage = serverMessage;
    this.retryAfterSec = details.retryAfterSec;
    this.requestId = details.requestId;
    this.operation = details.operation;
    this.attempts = details.attempts;
  }
}

/**
 * No HTTP answer arrived: the connection failed (refused, reset, name not resolved, TLS) or the
 * attempt's timeout elapsed (`reason: 'timeout'`). `cause` holds the underlying error.
 *
 * @example
 * ```ts
 * try {
 *   await tokens.revoke(handle);
 * } catch (err) {
 *   if (err instanceof TokenNetworkError) {
 *     // the platform was unreachable after every retry: queue the revocation and try again later
 *   }
 * }
 * ```
 */
export class TokenNetworkError extends Error {
  readonly reason: 'network' | 'timeout';
  readonly operation: TokenOperation;
  /** Attempts made, the failed one included. */
  readonly attempts: number;

  constructor(reason: 'network' | 'timeout', message: string, details: FailureDetails) {
    super(`${details.operation}: ${message}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'TokenNetworkError';
    this.reason = reason;
    this.operation = details.operation;
    this.attempts = details.attempts;
  }
}

/**
 * An HTTP answer that breaks the token API's contract: an error status without a catalogue error
 * body (for instance a proxy's HTML page), an unknown error code, a redirect, or a success body
 * that is not a token response. The body is never copied into the message.
 *
 * @example
 * ```ts
 * try {
 *   await tokens.issue({ room_id: 'r_81', user_id: 'u_7', role: 'audience', subscribe_room: true });
 * } catch (err) {
 *   if (err instanceof TokenResponseError) console.error(`token API answered ${err.status}`);
 * }
 * ```
 */
export class TokenResponseError extends Error {
  readonly status: number;
  readonly retryAfterSec: number | undefined;
  readonly requestId: string | undefined;
  readonly operation: TokenOperation;
  /** Attempts made, the failed one included. */
  readonly attempts: number;

  constructor(
    status: number,
    problem: string,
    details: FailureDetails & { readonly retryAfterSec?: number | undefined; readonly requestId?: string | undefined },
  ) {
    super(`${details.operation}: unexpected answer from the token API (status ${status}): ${problem}`);
    this.name = 'TokenResponseError';
    this.status = status;
    this.retryAfterSec = details.retryAfterSec;
    this.requestId = details.requestId;
    this.operation = details.operation;
    this.attempts = details.attempts;
  }
}
