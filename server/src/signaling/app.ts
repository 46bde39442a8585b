import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from '../config.ts';
import type { AddressSet } from '../core/address.ts';
import { ApiError } from '../core/errors.ts';
import { MAX_BODY_BYTES } from './limits.ts';
import { createEdge, type RegisteredRoute } from '../http/edge.ts';
import { SIGNALING } from './operations.ts';
import { TOKEN_API } from '../tokens/operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { parseJsonBody } from '../http/validate.ts';
import type { Readiness } from '../http/readiness.ts';
import type { EventSink } from './rooms.ts';
import type { SignalingService } from './service.ts';
import type { SessionIdentity } from './verify-token.ts';
import { SSE_KEEPALIVE } from './sse.ts';

export interface SignalingAppOptions {
  readonly logger: Logger;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /**
   * Connection caps and timeouts of the listener (`config.listeners.signaling`); the defaults when
   * omitted. The request timeout ends with the request: an event stream's response is not limited.
   */
  readonly listener?: ListenerLimits | undefined;
  /** Trusted reverse proxies: not held to the per-address connection cap. */
  readonly trustProxy?: AddressSet | undefined;
  /** Told of every route as it is registered (the OpenAPI contract test lists them). */
  readonly onRoute?: ((route: RegisteredRoute) => void) | undefined;
  /** What `GET /ready` reports (the process's readiness); undefined: ready while it runs. */
  readonly readiness?: Readiness | undefined;
}

/** The signaling app and the way to end its open streams before it closes. */
export interface SignalingApp {
  readonly app: FastifyInstance;
  /** Ends every event stream (the connections then close) and stops the keep-alive timer. */
  endStreams(): void;
  /** Event streams open now (docs/operations/metrics.md). */
  readonly openStreams: number;
}

const CORS_HEADERS = 'authorization, content-type, last-event-id';

/** The signaling role's HTTP app (docs/protocol/signaling.md), errors as on the token API. */
export function createSignalingApp(service: SignalingService, options: SignalingAppOptions): SignalingApp {
  const app = createEdge({
    role: 'signaling', logger: options.logger, tls: options.tls, onRoute: options.onRoute,
    listener: options.listener ?? DEFAULT_LISTENER_LIMITS.signaling, trustProxy: options.trustProxy,
    bodyLimit: MAX_BODY_BYTES, refuseWhileClosing: true, answerClientErrors: false,
    // a HEAD of the event stream would hold a stream open that can carry nothing
    headRoutes: false,
  });

  let closing = false;
  const streams = new Set<ServerResponse>();
  const keepalive = setInterval(() => {
    for (const res of streams) if (!res.writableEnded && !res.destroyed) res.write(SSE_KEEPALIVE);
  }, service.settings.keepaliveMs);
  keepalive.unref();

  app.addHook('onRequest', async (req, reply) => {
    // apps call this service from browsers; tokens travel in bodies and headers, never cookies
    if (req.headers.origin !== undefined) {
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', 'retry-after, x-request-id');
    }
  });
  // while closing, answers end their connection so keep-alive clients do not hold the process open
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  app.options('/v1/signaling/*', async (_req, reply) => reply.code(204)
    .header('access-control-allow-methods', 'GET, POST')
    .header('access-control-allow-headers', CORS_HEADERS)
    .header('access-control-max-age', '600')
    .send());

  // no store here: healthy while it runs
  registerOperation(app, TOKEN_API.getHealth, async (_req, reply) => reply.send({ status: 'ok' }));
  const readiness = options.readiness;
  registerOperation(app, TOKEN_API.getReady, async (_req, reply) => {
    const report = readiness ? await readiness.check() : { status: 'ready' as const };
    return reply.code(report.status === 'ready' ? 200 : 503).send(report);
  });

  /** POST bodies carry the token (docs/protocol/signaling.md, "Tokens"): parsed JSON, then the token, then the rest. */
  const authenticatePost = async (req: FastifyRequest): Promise<{ body: unknown; identity: SessionIdentity }> => {
    const body = parseJsonBody(req.body as Buffer | undefined);
    const token = typeof body === 'object' && body !== null && 'token' in body && typeof body.token === 'string' ? body.token : undefined;
    return { body, identity: await service.authenticate(token) };
  };

  registerOperation(app, SIGNALING.joinSignalingRoom, async (req, reply, input) => {
    const { body, identity } = await authenticatePost(req);
    input.bodyFrom(body);
    return reply.send(await service.join(identity));
  });

  registerOperation(app, SIGNALING.leaveSignalingRoom, async (req, reply, input) => {
    const { body, identity } = await authenticatePost(req);
    input.bodyFrom(body);
    await service.leave(identity);
    return reply.send({ left: true });
  });

  registerOperation(app, SIGNALING.sendSignalingMessage, async (req, reply, input) => {
    const { body, identity } = await authenticatePost(req);
    const message = input.bodyFrom(body);
    const dataJson = JSON.stringify(message.data);
    const limit = service.settings.maxMessageBytes;
    if (Buffer.byteLength(dataJson) > limit) {
      throw new ApiError('invalid_request', `data exceeds ${limit} bytes of JSON`, { status: 413 });
    }
    return reply.send(await service.send(identity, dataJson, message.to));
  });

  registerOperation(app, SIGNALING.listSignalingParticipants, async (req, reply) => {
    const identity = await service.authenticate(bearerToken(req));
    return reply.send({ room_id: identity.roomId, participants: await service.participants(identity) });
  });

  registerOperation(app, SIGNALING.openSignalingEvents, async (req, reply) => {
    const identity = await service.authenticate(bearerToken(req));
    const res = reply.raw;
    // frames wait in the sink until the head is written: a refusal (not joined) is still an
    // ordinary error reply, and the replay reaches the reader before any live event
    const sink = streamSink(res, service.settings.maxStreamBufferBytes);
    const detach = await service.openStream(identity, headerText(req.headers['last-event-id']), sink);
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-accel-buffering': 'no' });
    res.write('retry: 1000\n\n');
    sink.release();
    const opened = Date.now();
    const closed = (): void => {
      streams.delete(res);
      detach();
      req.log.info({ method: 'GET', path: '/v1/signaling/events', status: 200, ms: Date.now() - opened }, 'event stream closed');
    };
    if (res.destroyed) closed();
    else {
      streams.add(res);
      res.once('close', closed);
    }
    return reply;
  });

  return {
    app,
    endStreams() {
      closing = true;
      clearInterval(keepalive);
      for (const res of streams) if (!res.writableEnded) res.end();
      streams.clear();
    },
    get openStreams() {
      return streams.size;
    },
  };
}

interface HeldSink extends EventSink {
  /** Writes what was queued before the response head existed; later writes go straight out. */
  release(): void;
}

function streamSink(res: ServerResponse, maxBuffered: number): HeldSink {
  let held: string[] | undefined = [];
  let endPending = false;
  const sink: HeldSink = {
    write(frame) {
      if (held) {
        held.push(frame);
        return true;
      }
      if (res.destroyed || res.writableEnded) return true;
      if (res.writableLength > maxBuffered) return false;
      res.write(frame);
      return true;
    },
    end() {
      if (held) endPending = true;
      else if (!res.writableEnded) res.end();
    },
    release() {
      const frames = held ?? [];
      held = undefined;
      if (frames.length > 0) res.write(frames.join(''));
      if (endPending) sink.end();
    },
  };
  return sink;
}

function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer +([^\s]+) *$/i.exec(header);
  return match?.[1];
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

