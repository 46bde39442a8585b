import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions,
} from 'fastify';
import type { Logger } from 'pino';
import type { ListenerLimits } from '../config.ts';
import { resolveClientAddress, type AddressSet } from '../core/address.ts';
import { ApiError } from '../core/errors.ts';
import { newRequestId } from '../core/ids.ts';
import { createRoleServer } from './connection-guard.ts';
import { replyWithError } from './reply.ts';
import { deferredRequestLogger } from './request-logger.ts';

/** A route as fastify registers it: what `onRoute` is told. */
export interface RegisteredRoute {
  readonly method: string | string[];
  readonly url: string;
  readonly config: unknown;
}

/** The longest path parameter (an id) the router takes; a longer one is 414. */
const MAX_PARAM_LENGTH = 200;

/** The setup every HTTP role shares; each role adds its own routes and hooks. */
export interface EdgeOptions {
  /** The role named on every log line: `api`, `token` or `signaling`. */
  readonly role: string;
  readonly logger: Logger;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** The connection caps and timeouts of the role's listener (`config.listeners[role]`). */
  readonly listener: ListenerLimits;
  /** Trusted reverse proxies: not held to the per-address connection cap. */
  readonly trustProxy?: AddressSet | undefined;
  /** Bodies over this many bytes are 413 unless the route sets its own limit. */
  readonly bodyLimit: number;
  /** Answer requests that arrive while the app closes with 503 instead of serving them. */
  readonly refuseWhileClosing: boolean;
  /** Register a HEAD route beside every GET route. */
  readonly headRoutes: boolean;
  /** Answer requests the HTTP parser refuses in the platform's error format (else fastify's own). */
  readonly answerClientErrors: boolean;
  /**
   * Resolve `req.clientAddress` for every request (X-Forwarded-For only from these proxies) and log
   * it; omitted, the address is neither resolved nor logged.
   */
  readonly clientAddress?: { readonly trustProxy: AddressSet | undefined } | undefined;
  /** Told of every route as it is registered. */
  readonly onRoute?: ((route: RegisteredRoute) => void) | undefined;
}

/**
 * One fastify instance with the platform's request pipeline: request ids, `no-store`, one access
 * line per request, JSON bodies kept as bytes (each route parses its body after its own checks,
 * docs/decisions/tokens.md, "Order of checks"), and every error answered by `replyWithError`.
 */
export function createEdge(options: EdgeOptions): FastifyInstance {
  const tls = options.tls;
  const app = Fastify({
    loggerInstance: options.logger.child({ role: options.role }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // req.log is made on a request's first line of its own: most log only their access line
    childLoggerFactory: deferredRequestLogger,
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: options.bodyLimit,
    // while closing, requests already on a connection are still served (with Connection: close)
    return503OnClosing: options.refuseWhileClosing,
    ...(options.answerClientErrors && { clientErrorHandler: replyToClientError }),
    frameworkErrors: replyToUnroutablePath,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_PARAM_LENGTH },
    exposeHeadRoutes: options.headRoutes,
    // one request pipeline for both schemes; an https.Server serves the same handler as an http.Server.
    // The server carries the role's connection caps and timeouts: fastify's own timeout options
    // apply only to a server it creates itself.
    serverFactory: (handler) => createRoleServer({
      role: options.role, limits: options.listener, tls, exempt: options.trustProxy, logger: options.logger,
    }, handler),
  } satisfies FastifyServerOptions);

  // registerOperation serves an operation only on the hosts its record names (http/registry.ts)
  app.decorate('servedRole', options.role);
  const onRoute = options.onRoute;
  if (onRoute) app.addHook('onRoute', (route) => onRoute({ method: route.method, url: route.url, config: route.config }));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  const address = options.clientAddress;
  if (address) app.decorateRequest('clientAddress', '');
  app.decorateRequest('errorCode', '');
  app.decorateRequest('routeState', null);
  // both hooks are synchronous: callback style spares each request two promises and their ticks
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    reply.header('cache-control', 'no-store');
    if (address) {
      req.clientAddress = resolveClientAddress(req.socket.remoteAddress ?? '', headerValue(req.headers['x-forwarded-for']), address.trustProxy);
    }
    done();
  });
  // The access line has fixed keys, none of them a redacted path, so it skips the redaction pass
  // that costs more than the rest of the line; its output is the same as req.log's would be.
  const accessLog = app.log.child({}, { redact: [] });
  app.addHook('onResponse', (req, reply, done) => {
    const path = req.url.split('?', 1)[0];
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    accessLog.info(address
      ? { reqId: req.id, method: req.method, path, status: reply.statusCode, ms, address: req.clientAddress }
      : { reqId: req.id, method: req.method, path, status: reply.statusCode, ms }, 'request');
    done();
  });
  app.setErrorHandler((err, req, reply) => replyWithError(err, req, reply));
  app.setNotFoundHandler((req, reply) =>
    replyWithError(new ApiError('not_found', `no route for ${req.method} ${shortPath(req.url)}`), req, reply));
  return app;
}

/** Longest part of a request path an error message repeats (docs/reference/errors.md: never long input). */
const ECHOED_PATH_LENGTH = 100;

/** The request's path without its query, cut to ECHOED_PATH_LENGTH characters. */
function shortPath(url: string): string {
  const path = url.split('?', 1)[0] ?? '';
  return path.length > ECHOED_PATH_LENGTH ? `${path.slice(0, ECHOED_PATH_LENGTH)}…` : path;
}

/** What a path the router cannot take answers, in the platform's error format (never echoing the path). */
const UNROUTABLE_PATHS: Readonly<Record<string, readonly [number, string]>> = {
  FST_ERR_BAD_URL: [400, 'the request path has a malformed percent escape'],
  FST_ERR_MAX_PARAM_LENGTH: [414, `a segment of the request path is longer than ${MAX_PARAM_LENGTH} characters`],
};

/**
 * Paths the router refuses before any route or hook runs (a malformed `%` escape, a path parameter
 * over the limit): the documented error body, with the request id and `no-store` the hooks would add.
 */
function replyToUnroutablePath(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const [status, message] = UNROUTABLE_PATHS[err.code] ?? [400, 'the request path is not valid'];
  req.errorCode = 'invalid_request';
  void reply.code(status).header('x-request-id', req.id).header('cache-control', 'no-store')
    .send({ error: 'invalid_request', message });
}

const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'the request headers are too large'],
  // the headers or the whole request did not arrive within the role's timeout
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request did not arrive in time'],
};

/**
 * Requests the HTTP parser refuses (malformed, headers over 16 KB, too slow) never reach a route:
 * answer them in the platform's error format too, and close the connection.
 */
function replyToClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'the request is not valid HTTP'];
  const body = JSON.stringify({ error: 'invalid_request', message });
  socket.end([
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`, 'cache-control: no-store', `x-request-id: ${newRequestId()}`,
    'connection: close', '', body,
  ].join('\r\n'));
}

/** A header that may arrive more than once, as one comma-separated value. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
