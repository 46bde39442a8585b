import type { FastifyInstance, FastifyRequest } from 'fastify';
import { subscriptionRequestCreateSchema, subscriptionRequestsQuerySchema } from '../../schemas/billing.ts';
import { validateQuery } from '../../schemas/public.ts';
import { parseJsonBody, validate } from '../../schemas/validate.ts';
import {
  cancelSubscriptionRequest, createSubscriptionRequest, getOwnSubscriptionRequest, listSubscriptionRequests,
} from '../../services/subscriptions.ts';
import type { HttpContext } from '../context.ts';
import { withSchemas } from '../openapi/registry.ts';
import { BEARER_ROUTE, requireSession } from './auth.ts';

interface RequestParams { request_id: string }

const bodyOf = (req: FastifyRequest): unknown => parseJsonBody(req.body as Buffer | undefined);

/**
 * Subscription requests of the signed-in account (docs/billing.md): ask for a plan for a project,
 * list, get, cancel. Operators approve or reject with `rtc subscriptions`.
 */
export function registerSubscriptionRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const opts = { ...BEARER_ROUTE, onRequest: requireSession(ctx) };
  const base = '/v1/billing/subscription-requests';

  app.post(base, withSchemas(opts, { body: subscriptionRequestCreateSchema }), async (req, reply) => {
    const body = validate(subscriptionRequestCreateSchema, bodyOf(req));
    return reply.code(201).send(await createSubscriptionRequest(ctx.deps, req.accountId, body));
  });

  app.get(base, withSchemas(opts, { query: subscriptionRequestsQuerySchema }), async (req, reply) =>
    reply.send(await listSubscriptionRequests(ctx.deps, req.accountId, validateQuery(subscriptionRequestsQuerySchema, req.query))));

  app.get<{ Params: RequestParams }>(`${base}/:request_id`, opts, async (req, reply) =>
    reply.send(await getOwnSubscriptionRequest(ctx.deps, req.accountId, req.params.request_id)));

  app.post<{ Params: RequestParams }>(`${base}/:request_id/cancel`, opts, async (req, reply) =>
    reply.send(await cancelSubscriptionRequest(ctx.deps, req.accountId, req.params.request_id)));
}
