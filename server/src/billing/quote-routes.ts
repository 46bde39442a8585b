import type { FastifyInstance } from 'fastify';
import { PRICE_LIST } from './catalog/price-list.ts';
import { createQuote, getOwnQuote, listQuotes } from './quotes.ts';
import type { HttpContext } from '../http/context.ts';
import { BILLING_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { requireSession } from '../customers/auth-routes.ts';
import type { QuoteStore } from './store.ts';
import type { AccountStore } from '../customers/store.ts';

/** Billing quotes of the signed-in account (docs/billing.md): create, get, list. Quotes never change. */
export function registerBillingRoutes(app: FastifyInstance, ctx: HttpContext<QuoteStore & AccountStore>): void {
  const session = { onRequest: requireSession(ctx) };

  registerOperation(app, BILLING_API.createQuote, async (req, reply, input) =>
    reply.code(201).send(await createQuote(ctx.deps, PRICE_LIST, req.accountId, input.body())), session);

  registerOperation(app, BILLING_API.listQuotes, async (req, reply, input) =>
    reply.send(await listQuotes(ctx.deps, req.accountId, input.query)), session);

  registerOperation(app, BILLING_API.getQuote, async (req, reply, input) =>
    reply.send(await getOwnQuote(ctx.deps, req.accountId, input.params.quote_id)), session);
}
