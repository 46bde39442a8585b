import { noQuerySchema } from '../http/query.ts';
import { z } from 'zod';
import {
  categoriesResponseSchema, currenciesResponseSchema, discountResponseSchema, extensionsQuerySchema,
  extensionsResponseSchema, platformCatalogSchema, plansResponseSchema, ratesResponseSchema,
} from './public-schemas.ts';
import { responseComponent, type Operation } from '../http/registry.ts';

const publicOperation = <Q extends z.ZodObject = typeof noQuerySchema>(
  id: string, path: string, tag: string, summary: string, description: string, schema: z.ZodType, query?: Q,
): Operation & { readonly query: Q } => ({
  id, method: 'GET', path, hosts: ['api'], tag, summary, description, auth: 'none', query: query ?? (noQuerySchema as z.ZodObject as Q),
  cacheable: true,
  responses: { 200: { description: 'the document', schema } },
  errors: ['invalid_request'],
});

/** The public, unauthenticated and cacheable API: catalog, pricing, marketplace (docs/billing.md). */
export const PUBLIC_API = {
  getPlatformCatalog: publicOperation('getPlatformCatalog', '/v1/public/platform/catalog', 'Public: platform',
    'What the platform offers',
    'Regions and their media hosts, roles and what each may do, codecs, the limits of the token API as this '
    + 'deployment applies them, and token lifetimes.',
    responseComponent(platformCatalogSchema, 'PlatformCatalog')),
  listPlans: publicOperation('listPlans', '/v1/public/pricing/plans', 'Public: pricing', 'Plans',
    'Each plan with its currency, monthly fee (minor units) and the minutes of each usage kind included every month.',
    responseComponent(plansResponseSchema, 'PricingPlans')),
  listRates: publicOperation('listRates', '/v1/public/pricing/rates', 'Public: pricing', 'Per-minute rates',
    'The usage kinds (audio; video by resolution tier; TURN relay) and every plan\'s price of each, per unit_minutes minutes.',
    responseComponent(ratesResponseSchema, 'PricingRates')),
  getVolumeDiscount: publicOperation('getVolumeDiscount', '/v1/public/pricing/discount', 'Public: pricing', 'Volume discount tiers',
    'Contiguous, non-overlapping tiers of total monthly minutes; the tier holding a quote\'s total minutes discounts its usage subtotal.',
    responseComponent(discountResponseSchema, 'PricingDiscount')),
  listCurrencies: publicOperation('listCurrencies', '/v1/public/pricing/currencies', 'Public: pricing', 'Currencies and exchange rates',
    'Every currency a quote may be priced in, its minor units, and its rate against the base currency as an exact decimal string.',
    responseComponent(currenciesResponseSchema, 'PricingCurrencies')),
  listMarketplaceCategories: publicOperation('listMarketplaceCategories', '/v1/public/marketplace/categories', 'Public: marketplace',
    'Extension categories', 'Every category with the number of its extensions.',
    responseComponent(categoriesResponseSchema, 'MarketplaceCategories')),
  listMarketplaceExtensions: publicOperation('listMarketplaceExtensions', '/v1/public/marketplace/extensions', 'Public: marketplace',
    'Extensions, filtered, searched and paginated',
    'Ordered by id. Filter with category, search with q (every word must occur), page with limit and the next_cursor of '
    + 'the previous page; a cursor is only valid with the filters it was issued for.',
    responseComponent(extensionsResponseSchema, 'MarketplaceExtensions'), extensionsQuerySchema),
  getOpenApiDocument: publicOperation('getOpenApiDocument', '/v1/openapi.json', 'Reference', 'This OpenAPI document',
    'The OpenAPI 3.1 description of every endpoint of the platform, generated from the schemas the routes validate with.',
    responseComponent(z.looseObject({ openapi: z.literal('3.1.0') }), 'OpenApiDocument')),
} satisfies Record<string, Operation>;

export const PUBLIC_API_OPERATIONS: readonly Operation[] = Object.values(PUBLIC_API);
