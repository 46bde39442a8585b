/**
 * The closed catalogue of error codes and their default HTTP status (docs/reference/errors.md:
 * the token API's codes, plus the platform's own codes for its other endpoints). Every error body is
 * `{"error": code, "message": text}`.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_credentials: 401,
  unauthenticated: 401,
  scope_denied: 403,
  project_archived: 403,
  ip_not_allowed: 403,
  server_side_only: 403,
  not_found: 404,
  unknown_handle: 404,
  conflict: 409,
  rate_limited: 429,
  internal_error: 500,
  issuer_unavailable: 502,
  /** no TURN relay is configured: permanent for that platform, never retried (docs/reference/errors.md) */
  turn_unavailable: 502,
  signaling_unavailable: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The JSON body of every error response. */
export interface ErrorBody {
  readonly error: ErrorCode;
  readonly message: string;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}
