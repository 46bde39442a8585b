import { ERROR_STATUS, type ErrorCode, type ErrorBody } from '@rtc/protocol';

/** The one exception type of the server: a catalogue code, a message safe to show, a status. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfterSec: number | undefined;

  constructor(code: ErrorCode, message: string, opts: { status?: number; retryAfterSec?: number; cause?: unknown } = {}) {
    // an answer to the caller, not a bug: no stack trace to capture (it was a tenth of the CPU of
    // a refused authentication); a cause keeps its own
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, { cause: opts.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ApiError';
    this.code = code;
    this.status = opts.status ?? ERROR_STATUS[code];
    this.retryAfterSec = opts.retryAfterSec;
  }

  toJSON(): ErrorBody {
    return { error: this.code, message: this.message };
  }
}

// docs/decisions/tokens.md, "Identical 401": one 401 for every cause of an authentication failure
export const INVALID_CREDENTIALS_MESSAGE = 'invalid App ID or App Secret';
export const badCredentials = (): ApiError => new ApiError('invalid_credentials', INVALID_CREDENTIALS_MESSAGE);

export const notFound = (what: string): ApiError => new ApiError('not_found', `${what} not found`);

export const rateLimited = (retryAfterSec: number): ApiError =>
  new ApiError('rate_limited', 'rate limit exceeded; retry after the time in Retry-After', {
    retryAfterSec: Math.max(1, Math.ceil(retryAfterSec)),
  });
