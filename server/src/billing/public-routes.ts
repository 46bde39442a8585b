import { createHash } from 'node:crypto';
import { TEMPORARY_TOKEN_MAX_TTL_SECONDS } from '@rtc/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MARKETPLACE } from './catalog/marketplace.ts';
import { PLATFORM } from './catalog/platform.ts';
import { PRICE_LIST } from './catalog/price-list.ts';
import { platformCatalog, pricingCurrencies, type CatalogSettings, type PlatformCatalog, pricingDiscount, pricingPlans, pricingRates } from './pricing.ts';
import { listCategories, searchExtensions } from './marketplace.ts';
import type { HttpContext } from '../http/context.ts';
import { PUBLIC_API } from './public-operations.ts';
import { registerOperation } from '../http/operation-route.ts';

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
  const catalogOf = (mediaHosts: CatalogSettings['mediaHosts']): PlatformCatalog => platformCatalog(PLATFORM, {
    mediaHosts,
    appRequestsPerMinute: ctx.limits.appPerMinute, addressRequestsPerMinute: ctx.limits.addressPerMinute,
    temporaryTokenMaxTtlSeconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
  });
  const { mediaNodes } = ctx.deps;
  if (mediaNodes) {
    // a cluster: the live media nodes as this process last read them (at most a second old), in
    // a stable order so that an unchanged list keeps its ETag (docs/operations/scale-out.md)
    let last: { key: string; body: string; etag: string } | undefined;
    registerOperation(app, PUBLIC_API.getPlatformCatalog, async (req, reply) => {
      const hosts = [...mediaNodes.nodes()].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
      const key = JSON.stringify(hosts.map((n) => [n.host, n.port]));
      if (last?.key !== key) last = { key, ...fixedDocument(catalogOf(hosts)) };
      return sendCacheable(req, reply, last.body, last.etag);
    });
  }
  const fixed = [
    ...(mediaNodes ? [] : [[PUBLIC_API.getPlatformCatalog, catalogOf([{ host: ctx.issuer.sfuHost, port: ctx.issuer.sfuPort }])] as const]),
    [PUBLIC_API.listPlans, pricingPlans(PRICE_LIST)],
    [PUBLIC_API.listRates, pricingRates(PRICE_LIST)],
    [PUBLIC_API.getVolumeDiscount, pricingDiscount(PRICE_LIST)],
    [PUBLIC_API.listCurrencies, pricingCurrencies(PRICE_LIST)],
    [PUBLIC_API.listMarketplaceCategories, listCategories(MARKETPLACE)],
  ] as const;
  for (const [op, value] of fixed) {
    const doc = fixedDocument(value);
    registerOperation(app, op, async (req, reply) => sendCacheable(req, reply, doc.body, doc.etag));
  }

  registerOperation(app, PUBLIC_API.listMarketplaceExtensions, async (req, reply, input) =>
    sendCacheable(req, reply, JSON.stringify(await searchExtensions(MARKETPLACE, input.query))));
}
