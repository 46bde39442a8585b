import { createServer as createHttpServer, STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import { resolveClientAddress } from '../core/address.ts';
import { ApiError } from '../core/errors.ts';
import { newRequestId } from '../core/ids.ts';
import type { HttpContext } from './context.ts';
import { replyWithError } from './reply.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerBillingRoutes } from './routes/billing.ts';
import { registerOpenApiRoutes } from './routes/openapi.ts';
import { registerPublicRoutes } from './routes/public.ts';
import { registerSubscriptionRoutes } from './routes/subscriptions.ts';
import { registerCredentialRoutes } from './routes/credentials.ts';
import { registerProjectRoutes } from './routes/projects.ts';
import { registerRtcTokenRoutes } from './routes/rtc-tokens.ts';
import { registerPublicKeyRoutes, registerTokenServiceRoutes } from './routes/token-service.ts';

export type HttpRole = 'api' | 'token';

export interface HttpAppOptions {
  readonly role: HttpRole;
  readonly logger: Logger;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** Called for every route as it is registered (the OpenAPI contract test lists them this way). */
  readonly onRoute?: ((route: { readonly method: string | string[]; readonly url: string; readonly config: unknown }) => void) | undefined;
}

/** Bodies are kept as bytes and parsed by each route after its own checks (docs/reference/token-api.md, "Order of checks"). */
const DEFAULT_BODY_LIMIT = 64 * 1024;

/** Builds the HTTP app of one role (api or token) on shared services. */
export function createHttpApp(ctx: HttpContext, options: HttpAppOptions): FastifyInstance {
  const tls = options.tls;
  const app = Fastify({
    loggerInstance: options.logger.child({ role: options.role }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: DEFAULT_BODY_LIMIT,
    // while closing, requests already on a connection are still served (with Connection: close)
    return503OnClosing: false,
    clientErrorHandler: replyToClientError,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // one request pipeline for both schemes; an https.Server serves the same handler as an http.Server
    serverFactory: (handler) => (tls
      ? createHttpsServer({ cert: tls.cert, key: tls.key }, handler) as unknown as Server
      : createHttpServer(handler)),
  } satisfies FastifyServerOptions);

  app.decorateRequest('clientAddress', '');
  app.decorateRequest('accountId', '');
  const onRoute = options.onRoute;
  if (onRoute) app.addHook('onRoute', (route) => onRoute({ method: route.method, url: route.url, config: route.config }));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // both hooks are synchronous: callback style spares each request two promises and their ticks
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    reply.header('cache-control', 'no-store');
    req.clientAddress = resolveClientAddress(req.socket.remoteAddress ?? '', headerValue(req.headers['x-forwarded-for']), ctx.trustProxy);
    done();
  });
  // The access line has fixed keys, none of them a redacted path, so it skips the redaction pass
  // that costs more than the rest of the line; its output is the same as req.log's would be.
  const accessLog = app.log.child({}, { redact: [] });
  app.addHook('onResponse', (req, reply, done) => {
    const path = req.url.split('?', 1)[0];
    accessLog.info({ reqId: req.id, method: req.method, path, status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10, address: req.clientAddress }, 'request');
    done();
  });
  app.setErrorHandler((err, req, reply) => replyWithError(err, req, reply));
  app.setNotFoundHandler((req, reply) =>
    replyWithError(new ApiError('not_found', `no route for ${req.method} ${req.url.split('?', 1)[0]}`), req, reply));

  registerRtcTokenRoutes(app, ctx);
  registerPublicKeyRoutes(app, ctx);
  if (options.role === 'token') registerTokenServiceRoutes(app, ctx);
  if (options.role === 'api') {
    registerAuthRoutes(app, ctx);
    registerProjectRoutes(app, ctx);
    registerCredentialRoutes(app, ctx);
    registerPublicRoutes(app, ctx);
    registerBillingRoutes(app, ctx);
    registerSubscriptionRoutes(app, ctx);
    registerOpenApiRoutes(app);
  }
  return app;
}

/**
 * Requests the HTTP parser refuses (malformed, headers over 16 KB) never reach a route: answer them
 * in the platform's error format too, and close the connection.
 */
function replyToClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const body = JSON.stringify({
    error: 'invalid_request',
    message: status === 431 ? 'the request headers are too large' : 'the request is not valid HTTP',
  });
  socket.end([
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`, 'cache-control: no-store', `x-request-id: ${newRequestId()}`,
    'connection: close', '', body,
  ].join('\r\n'));
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
