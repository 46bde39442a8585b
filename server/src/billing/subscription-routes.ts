import type { FastifyInstance } from 'fastify';
import {
  cancelSubscriptionRequest, createSubscriptionRequest, getOwnSubscriptionRequest, listSubscriptionRequests,
} from './subscriptions.ts';
import type { HttpContext } from '../http/context.ts';
import { BILLING_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { requireSession } from '../customers/auth-routes.ts';
import type { QuoteStore, SubscriptionStore } from './store.ts';
import type { AccountStore, ProjectStore } from '../customers/store.ts';

/**
 * Subscription requests of the signed-in account (docs/billing.md): ask for a plan for a project,
 * list, get, cancel. Operators approve or reject with `rtc subscriptions`.
 */
export function registerSubscriptionRoutes(app: FastifyInstance, ctx: HttpContext<SubscriptionStore & QuoteStore & ProjectStore & AccountStore>): void {
  const session = { onRequest: requireSession(ctx) };

  registerOperation(app, BILLING_API.createSubscriptionRequest, async (req, reply, input) =>
    reply.code(201).send(await createSubscriptionRequest(ctx.deps, req.accountId, input.body())), session);

  registerOperation(app, BILLING_API.listSubscriptionRequests, async (req, reply, input) =>
    reply.send(await listSubscriptionRequests(ctx.deps, req.accountId, input.query)), session);

  registerOperation(app, BILLING_API.getSubscriptionRequest, async (req, reply, input) =>
    reply.send(await getOwnSubscriptionRequest(ctx.deps, req.accountId, input.params.request_id)), session);

  registerOperation(app, BILLING_API.cancelSubscriptionRequest, async (req, reply, input) =>
    reply.send(await cancelSubscriptionRequest(ctx.deps, req.accountId, input.params.request_id)), session);
}
