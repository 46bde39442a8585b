import { z } from 'zod';
import rawMarketplace from './marketplace.v1.json' with { type: 'json' };
import { deepFreeze } from '../../core/freeze.ts';
import { CatalogError, duplicates, issueLines } from './catalog-error.ts';
import { PRICE_LIST, type PriceList } from './price-list.ts';

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const text = z.string().min(1).max(300);

const categorySchema = z.strictObject({
  id: z.string().regex(SLUG).max(64),
  name: text,
  description: text,
});

const pricingSchema = z.discriminatedUnion('model', [
  z.strictObject({ model: z.literal('free') }),
  z.strictObject({
    model: z.literal('per_1000_minutes'),
    currency: z.string().regex(/^[A-Z]{3}$/),
    unit_price_minor: z.int().min(1),
  }),
]);

const extensionSchema = z.strictObject({
  id: z.string().regex(SLUG).max(64),
  name: text,
  category: z.string(),
  publisher: text,
  summary: text,
  tags: z.array(z.string().regex(SLUG).max(32)).max(10),
  runs_on: z.enum(['client', 'server']),
  status: z.enum(['ga', 'beta']),
  availability: z.enum(['available', 'planned']),
  pricing: pricingSchema,
});

const marketplaceFileSchema = z.strictObject({
  version: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  categories: z.array(categorySchema).min(1),
  extensions: z.array(extensionSchema).min(1),
});

export type Category = z.output<typeof categorySchema>;
export type Extension = z.output<typeof extensionSchema>;
export type Marketplace = z.output<typeof marketplaceFileSchema>;

/**
 * Validates the marketplace data (unique ids, every extension in a listed category, every priced
 * extension in a currency of the price list, no empty category) and returns it frozen, with the
 * extensions sorted by id (the order of pagination).
 */
export function parseMarketplace(raw: unknown, prices: PriceList, file = 'marketplace'): Marketplace {
  const parsed = marketplaceFileSchema.safeParse(raw);
  if (!parsed.success) throw new CatalogError(file, issueLines(parsed.error.issues));
  const data = parsed.data;
  const problems: string[] = [];
  for (const id of duplicates(data.categories.map((c) => c.id))) problems.push(`category ${id} is listed twice`);
  for (const id of duplicates(data.extensions.map((e) => e.id))) problems.push(`extension ${id} is listed twice`);
  const categories = new Set(data.categories.map((c) => c.id));
  const currencies = new Set(prices.currencies.map((c) => c.code));
  for (const ext of data.extensions) {
    if (!categories.has(ext.category)) problems.push(`extension ${ext.id}: category ${ext.category} is not listed`);
    if (ext.pricing.model !== 'free' && !currencies.has(ext.pricing.currency)) {
      problems.push(`extension ${ext.id}: currency ${ext.pricing.currency} is not a currency of the price list`);
    }
    for (const tag of duplicates(ext.tags)) problems.push(`extension ${ext.id}: tag ${tag} is listed twice`);
  }
  for (const category of data.categories) {
    if (!data.extensions.some((e) => e.category === category.id)) problems.push(`category ${category.id} has no extension`);
  }
  if (problems.length > 0) throw new CatalogError(file, problems);
  return deepFreeze({ ...data, extensions: [...data.extensions].sort((a, b) => (a.id < b.id ? -1 : 1)) });
}

/** The marketplace in force, validated when the process starts. */
export const MARKETPLACE: Marketplace = parseMarketplace(rawMarketplace, PRICE_LIST, 'server/src/catalog/marketplace.v1.json');
