import { z } from 'zod';
import { ROLES } from '@rtc/protocol';
import { MARKETPLACE } from './catalog/marketplace.ts';
import { PRICE_LIST } from './catalog/price-list.ts';
import { cursorParam, limitParam, queryText } from '../http/query.ts';
import type { PlatformCatalog, PricingCurrencies, PricingDiscount, PricingPlans, PricingRates } from './pricing.ts';
import type { ExtensionsPage, ExtensionsQuery, MarketplaceCategories } from './marketplace.ts';

export const MAX_SEARCH_LENGTH = 100;

const categoryIds = MARKETPLACE.categories.map((c) => c.id) as [string, ...string[]];

/** Query of `GET /v1/public/marketplace/extensions`. */
export const extensionsQuerySchema = z.strictObject({
  category: z.enum(categoryIds, {
    error: (issue) => (Array.isArray(issue.input) ? 'category must be given once' : `category must be one of ${categoryIds.join(', ')}`),
  }).optional().meta({ description: 'only extensions of this category' }),
  q: queryText('q', `a search text of 1 to ${MAX_SEARCH_LENGTH} characters`)
    .trim()
    .min(1, { error: `q must be a search text of 1 to ${MAX_SEARCH_LENGTH} characters` })
    .max(MAX_SEARCH_LENGTH, { error: `q must be a search text of 1 to ${MAX_SEARCH_LENGTH} characters` })
    .optional()
    .meta({ description: 'words that must all occur (case-insensitive) in the id, name, summary, publisher or tags' }),
  limit: limitParam.optional(),
  cursor: cursorParam.optional(),
}) satisfies z.ZodType<ExtensionsQuery>;

// ---- responses ----

const int = z.int().min(0);
const usageKindIds = PRICE_LIST.usage_kinds.map((k) => k.id);

/** An object with one property per usage kind of the price list. */
export const usageKindMap = <T extends z.ZodType>(value: T) =>
  z.strictObject(Object.fromEntries(usageKindIds.map((id) => [id, value])) as Record<string, T>);

export const platformCatalogSchema = z.strictObject({
  catalog_version: z.string(),
  api_version: z.literal('v1'),
  regions: z.array(z.strictObject({
    id: z.string(),
    name: z.string(),
    media_hosts: z.array(z.strictObject({ host: z.string(), port: z.int().min(0).max(65535) }))
      .meta({ description: 'what media.sfu_host and media.sfu_port of token responses name: a cluster\'s live media nodes' }),
  })),
  roles: z.array(z.strictObject({
    role: z.enum(ROLES),
    may_publish: z.boolean(),
    may_subscribe: z.boolean().meta({ description: 'with the subscriber scope on the credential' }),
    description: z.string(),
  })),
  codecs: z.strictObject({
    audio: z.array(z.strictObject({ name: z.string(), mime_type: z.string(), clock_rate: int, channels: int })),
    video: z.array(z.strictObject({ name: z.string(), mime_type: z.string(), clock_rate: int })),
  }),
  encryption: z.array(z.literal('aes-256-gcm')),
  limits: z.strictObject({
    token_api: z.strictObject({
      requests_per_minute_per_app_id: int,
      requests_per_minute_per_address: int,
      failed_authentications_per_address: int,
      failed_authentication_window_seconds: int,
      max_request_body_bytes: int,
    }),
    token_request: z.strictObject({
      id_min_length: int,
      id_max_length: int,
      max_publish_streams: int,
      max_subscribe_streams: int,
      max_stream_id: int,
    }),
    revocation_effect_seconds: int,
  }),
  token_lifetimes: z.strictObject({
    default_ttl_seconds: int,
    max_ttl_seconds: int,
    temporary_token_max_ttl_seconds: int,
    console_access_token_seconds: int,
    console_refresh_token_seconds: int,
  }),
}) satisfies z.ZodType<PlatformCatalog>;

export const plansResponseSchema = z.strictObject({
  price_list_version: z.string(),
  plans: z.array(z.strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    currency: z.string().meta({ description: 'currency of the fee and of the plan rates' }),
    monthly_fee_minor: int.meta({ description: 'monthly fee in minor units of currency' }),
    included_minutes: usageKindMap(int).meta({ description: 'minutes of each usage kind included every month' }),
  })),
}) satisfies z.ZodType<PricingPlans>;

export const ratesResponseSchema = z.strictObject({
  price_list_version: z.string(),
  unit_minutes: int.meta({ description: 'unit_price_minor is the price of this many minutes' }),
  usage_kinds: z.array(z.strictObject({
    id: z.string(),
    name: z.string(),
    medium: z.enum(['audio', 'video', 'relay']),
    max_pixels: int.nullable().meta({ description: 'video: the largest aggregate resolution of the tier; null: no upper bound' }),
    description: z.string(),
  })),
  rates: z.array(z.strictObject({
    plan: z.string(),
    usage_kind: z.string(),
    currency: z.string(),
    unit_price_minor: int,
    per_minute: z.string().meta({ description: 'exact price of one minute in major units, as a decimal string' }),
  })),
}) satisfies z.ZodType<PricingRates>;

export const discountResponseSchema = z.strictObject({
  price_list_version: z.string(),
  basis: z.literal('total_minutes').meta({ description: 'the tier is chosen by the total minutes of every usage kind' }),
  applies_to: z.literal('usage_subtotal').meta({ description: 'the discount reduces the usage subtotal, not the monthly fee' }),
  tiers: z.array(z.strictObject({
    from_minutes: int,
    up_to_minutes: int.nullable().meta({ description: 'exclusive; null: no upper bound' }),
    discount_bps: int.meta({ description: 'basis points: 500 is 5%' }),
  })),
}) satisfies z.ZodType<PricingDiscount>;

export const currenciesResponseSchema = z.strictObject({
  price_list_version: z.string(),
  base_currency: z.string(),
  rates_as_of: z.string(),
  currencies: z.array(z.strictObject({
    code: z.string(),
    name: z.string(),
    minor_units: int.meta({ description: 'digits after the decimal point: amounts are integers of 10^-minor_units' }),
    per_base: z.string().meta({ description: 'units of this currency worth one unit of the base currency (exact decimal string)' }),
  })),
}) satisfies z.ZodType<PricingCurrencies>;

export const categoriesResponseSchema = z.strictObject({
  marketplace_version: z.string(),
  categories: z.array(z.strictObject({ id: z.string(), name: z.string(), description: z.string(), extension_count: int })),
}) satisfies z.ZodType<MarketplaceCategories>;

export const extensionSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  category: z.string(),
  publisher: z.string(),
  summary: z.string(),
  tags: z.array(z.string()),
  runs_on: z.enum(['client', 'server']),
  status: z.enum(['ga', 'beta']),
  availability: z.enum(['available', 'planned']).meta({ description: 'planned: listed and priced, but this platform does not run it yet (docs/billing.md)' }),
  pricing: z.discriminatedUnion('model', [
    z.strictObject({ model: z.literal('free') }),
    z.strictObject({ model: z.literal('per_1000_minutes'), currency: z.string(), unit_price_minor: int }),
  ]),
});

export const extensionsResponseSchema = z.strictObject({
  marketplace_version: z.string(),
  extensions: z.array(extensionSchema),
  next_cursor: z.string().nullable().meta({ description: 'pass as cursor for the next page; null on the last page' }),
}) satisfies z.ZodType<ExtensionsPage>;
