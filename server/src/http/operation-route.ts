import type {
  FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onResponseHookHandler, RouteShorthandOptions,
} from 'fastify';
import type { z } from 'zod';
import { validateQuery } from './query.ts';
import { parseJsonBody, validate } from './validate.ts';
import type { Auth, Host, Operation } from './registry.ts';
import type { RouteFlags } from './reply.ts';

/** The body an operation's schema admits; `never` for operations without a body. */
type BodyOf<O extends Operation> = O extends { readonly body: infer S extends z.ZodType } ? z.output<S> : never;
/** The query an operation's schema admits; `undefined` for operations that declare none. */
type QueryOf<O extends Operation> = O extends { readonly query: infer S extends z.ZodObject } ? z.output<S> : undefined;
/** One string per `{name}` of the operation's path. */
type ParamsOf<O extends Operation> = O extends { readonly pathParams: infer P } ? { readonly [K in keyof P]: string } : Readonly<Record<never, string>>;

/** What a handler gets besides the request: the path parameters, the validated query, and the body on demand. */
export interface OperationInput<O extends Operation> {
  readonly params: ParamsOf<O>;
  /** Validated before the handler runs (400 naming the parameter). */
  readonly query: QueryOf<O>;
  /**
   * The body parsed as JSON and validated with the operation's schema (400 naming the rule). It is
   * read only when asked, so the route's own checks come first.
   */
  readonly body: () => BodyOf<O>;
  /** `json`, a body the route has parsed itself, validated with the operation's schema. */
  bodyFrom(json: unknown): BodyOf<O>;
}

export type OperationHandler<O extends Operation> =
  (req: FastifyRequest, reply: FastifyReply, input: OperationInput<O>) => Promise<FastifyReply>;

export interface OperationRouteOptions {
  /** Checks that run before the body is read (authentication, the token API's gate). */
  readonly onRequest?: onRequestHookHandler | undefined;
  /** Runs once the answer is sent, whatever it was (the token routes' metrics). */
  readonly onResponse?: onResponseHookHandler | undefined;
  /** Replaces the flags the operation's auth kind implies. */
  readonly flags?: RouteFlags | undefined;
}

/** Which challenge a 401 of the route carries. */
const AUTH_FLAGS: Readonly<Record<Auth, RouteFlags>> = {
  none: {},
  basic: { basicAuth: true },
  bearer: { bearerAuth: true },
  signaling: { bearerAuth: true },
  signalingBody: { bearerAuth: true },
};

/** `/v1/projects/{id}` → `/v1/projects/:id`: the document's path form to fastify's. */
export function routePath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/** Whether the app serves routes of a record that names `hosts`: the record alone says where a route is served. */
export function servedHere(app: FastifyInstance, hosts: readonly Host[]): boolean {
  return (hosts as readonly string[]).includes(app.servedRole);
}

/**
 * Registers the route of `op` when the app's role is one of the record's hosts (and nothing
 * otherwise): method, path, body limit and auth flags come from the record, the query is validated
 * with its schema, and the body with its schema when the handler asks for it.
 */
export function registerOperation<O extends Operation>(
  app: FastifyInstance, op: O, handler: OperationHandler<O>, options: OperationRouteOptions = {},
): void {
  if (!servedHere(app, op.hosts)) return;
  const route: RouteShorthandOptions = {
    config: { ...(options.flags ?? AUTH_FLAGS[op.auth]) },
    ...(op.bodyLimitBytes !== undefined && { bodyLimit: op.bodyLimitBytes }),
    ...(options.onRequest && { onRequest: options.onRequest }),
    ...(options.onResponse && { onResponse: options.onResponse }),
  };
  const bodySchema = op.body;
  const querySchema = op.query;
  app.route({
    ...route,
    method: op.method,
    url: routePath(op.path),
    handler: async (req, reply) => {
      const input: OperationInput<O> = {
        params: req.params as ParamsOf<O>,
        query: (querySchema ? validateQuery(querySchema, req.query) : undefined) as QueryOf<O>,
        body: () => {
          const raw = req.body as Buffer | undefined;
          return input.bodyFrom(op.bodyOptional === true && (raw === undefined || raw.length === 0) ? {} : parseJsonBody(raw));
        },
        bodyFrom(json) {
          if (!bodySchema) throw new TypeError(`${op.id} declares no body`);
          return validate(bodySchema, json) as BodyOf<O>;
        },
      };
      return handler(req, reply, input);
    },
  });
}
