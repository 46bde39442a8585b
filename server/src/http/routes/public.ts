import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MARKETPLACE } from '../../catalog/marketplace.ts';
import { PLATFORM } from '../../catalog/platform.ts';
import { PRICE_LIST } from '../../catalog/price-list.ts';
import { extensionsQuerySchema, noQuerySchema, validateQuery } from '../../schemas/public.ts';
import { platformCatalog, pricingCurrencies, pricingDiscount, pricingPlans, pricingRates } from '../../services/catalog.ts';
import { listCategories, searchExtensions } from '../../services/marketplace.ts';
import type { HttpContext } from '../context.ts';
import { withSchemas } from '../openapi/registry.ts';
import { TEMPORARY_TOKEN_MAX_TTL_SECONDS } from './projects.ts';

/** Shared caches may keep public documents for five minutes, then revalidate with If-None-Match. */
export const PUBLIC_MAX_AGE_SECONDS = 300;
export const PUBLIC_CACHE_CONTROL = `public, max-age=${PUBLIC_MAX_AGE_SECONDS}`;

/** A strong validator: the SHA-256 of the exact body bytes. */
export function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url')}"`;
}

/** RFC 9110 §13.1.2: `*`, or any listed tag equal to ours under weak comparison. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * Sends a public JSON document with `Cache-Control: public`, a strong `ETag`, and `304 Not
 * Modified` (headers only) when the request's `If-None-Match` names the same document. Anyone
 * may read it from a browser (`Access-Control-Allow-Origin: *`): it holds no account data.
 */
export function sendCacheable(req: FastifyRequest, reply: FastifyReply, body: string, etag = etagOf(body)): FastifyReply {
  reply.header('cache-control', PUBLIC_CACHE_CONTROL);
  reply.header('etag', etag);
  reply.header('access-control-allow-origin', '*');
  if (ifNoneMatchHits(req.headers['if-none-match'], etag)) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(body);
}

/** A document computed once: its bytes and tag are fixed for the life of the process. */
function fixedDocument(value: unknown): { body: string; etag: string } {
  const body = JSON.stringify(value);
  return { body, etag: etagOf(body) };
}

/** The public, unauthenticated and cacheable API: platform catalog, pricing and marketplace. */
export function registerPublicRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const fixed: Record<string, { body: string; etag: string }> = {
    '/v1/public/platform/catalog': fixedDocument(platformCatalog(PLATFORM, {
      sfuHost: ctx.issuer.sfuHost, sfuPort: ctx.issuer.sfuPort,
      appRequestsPerMinute: ctx.limits.appPerMinute, addressRequestsPerMinute: ctx.limits.addressPerMinute,
      temporaryTokenMaxTtlSeconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
    })),
    '/v1/public/pricing/plans': fixedDocument(pricingPlans(PRICE_LIST)),
    '/v1/public/pricing/rates': fixedDocument(pricingRates(PRICE_LIST)),
    '/v1/public/pricing/discount': fixedDocument(pricingDiscount(PRICE_LIST)),
    '/v1/public/pricing/currencies': fixedDocument(pricingCurrencies(PRICE_LIST)),
    '/v1/public/marketplace/categories': fixedDocument(listCategories(MARKETPLACE)),
  };
  for (const [path, doc] of Object.entries(fixed)) {
    app.get(path, withSchemas({}, { query: noQuerySchema }), async (req, reply) => {
      validateQuery(noQuerySchema, req.query);
      return sendCacheable(req, reply, doc.body, doc.etag);
    });
  }

  app.get('/v1/public/marketplace/extensions', withSchemas({}, { query: extensionsQuerySchema }), async (req, reply) => {
    const query = validateQuery(extensionsQuerySchema, req.query);
    return sendCacheable(req, reply, JSON.stringify(searchExtensions(MARKETPLACE, query)));
  });
}
