import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.ts';

/** Route config flag: the route authenticates with HTTP Basic (its 401 carries WWW-Authenticate). */
export interface RouteFlags {
  readonly basicAuth?: boolean;
  readonly bearerAuth?: boolean;
}

const INTERNAL = { error: 'internal_error', message: 'internal error; the request id identifies it in the logs' };

/** Turns a framework error into the platform's catalogue, or undefined when it is a bug. */
function fromFrameworkError(err: FastifyError, req: FastifyRequest): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', `the request body exceeds ${req.routeOptions.bodyLimit} bytes`, { status: 413 });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_request', 'the request body must be application/json', { status: 415 });
    default:
      if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
        return new ApiError('invalid_request', 'the request could not be read', { status: err.statusCode });
      }
      return undefined;
  }
}

/** The only place where errors become responses (an ApiError's status and body, or a fixed 500). */
export function replyWithError(err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const apiError = err instanceof ApiError ? err : fromFrameworkError(err as FastifyError, req);
  if (!apiError) {
    req.log.error({ err }, 'unhandled error');
    req.errorCode = INTERNAL.error;
    return reply.code(500).send(INTERNAL);
  }
  req.errorCode = apiError.code;
  if (apiError.retryAfterSec !== undefined) reply.header('retry-after', String(apiError.retryAfterSec));
  const flags = req.routeOptions.config as RouteFlags;
  if (apiError.status === 401) {
    if (flags.basicAuth) reply.header('www-authenticate', 'Basic realm="rtc"');
    else if (flags.bearerAuth) reply.header('www-authenticate', 'Bearer realm="rtc"');
  }
  return reply.code(apiError.status).send(apiError.toJSON());
}
