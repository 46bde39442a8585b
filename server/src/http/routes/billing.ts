import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PRICE_LIST } from '../../catalog/price-list.ts';
import { quoteCreateSchema, quotesQuerySchema } from '../../schemas/billing.ts';
import { validateQuery } from '../../schemas/public.ts';
import { parseJsonBody, validate } from '../../schemas/validate.ts';
import { createQuote, getOwnQuote, listQuotes } from '../../services/quotes.ts';
import type { HttpContext } from '../context.ts';
import { withSchemas } from '../openapi/registry.ts';
import { BEARER_ROUTE, requireSession } from './auth.ts';

interface QuoteParams { quote_id: string }

const bodyOf = (req: FastifyRequest): unknown => parseJsonBody(req.body as Buffer | undefined);

/** Billing quotes of the signed-in account (docs/billing.md): create, get, list. Quotes never change. */
export function registerBillingRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const opts = { ...BEARER_ROUTE, onRequest: requireSession(ctx) };

  app.post('/v1/billing/quotes', withSchemas(opts, { body: quoteCreateSchema }), async (req, reply) => {
    const body = validate(quoteCreateSchema, bodyOf(req));
    return reply.code(201).send(await createQuote(ctx.deps, PRICE_LIST, req.accountId, body));
  });

  app.get('/v1/billing/quotes', withSchemas(opts, { query: quotesQuerySchema }), async (req, reply) =>
    reply.send(await listQuotes(ctx.deps, req.accountId, validateQuery(quotesQuerySchema, req.query))));

  app.get<{ Params: QuoteParams }>('/v1/billing/quotes/:quote_id', opts, async (req, reply) =>
    reply.send(await getOwnQuote(ctx.deps, req.accountId, req.params.quote_id)));
}
