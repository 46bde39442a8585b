import { z } from 'zod';
import rawPriceList from './price-list.v1.json' with { type: 'json' };
import { deepFreeze } from '../../core/freeze.ts';
import { CatalogError, duplicates, issueLines } from './catalog-error.ts';
import { convertMinor, fraction, isDecimal, parseDecimal, roundHalfEven, type Fraction } from './money.ts';

/** The most minutes of one usage kind a quote may carry (ten billion). */
export const MAX_QUOTE_MINUTES = 10_000_000_000;

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const SLUG = /^[a-z][a-z0-9_]*$/;
const CURRENCY_CODE = /^[A-Z]{3}$/;

const count = z.int().min(0);
const text = z.string().min(1).max(300);

const currencySchema = z.strictObject({
  code: z.string().regex(CURRENCY_CODE, { error: 'a currency code is three capital letters (ISO 4217)' }),
  name: text,
  minor_units: z.int().min(0).max(4),
  per_base: z.string().refine(isDecimal, { error: 'per_base is a plain decimal string' }),
});

const usageKindSchema = z.strictObject({
  id: z.string().regex(SLUG),
  name: text,
  medium: z.enum(['audio', 'video', 'relay']),
  max_pixels: z.int().min(1).nullable(),
  description: text,
});

const planSchema = z.strictObject({
  id: z.string().regex(SLUG),
  name: text,
  description: text,
  currency: z.string().regex(CURRENCY_CODE),
  monthly_fee_minor: count,
  included_minutes: z.record(z.string(), count),
  unit_prices_minor: z.record(z.string(), count),
});

const tierSchema = z.strictObject({
  from_minutes: count,
  up_to_minutes: z.int().min(1).nullable(),
  discount_bps: z.int().min(0).max(10_000),
});

const priceListFileSchema = z.strictObject({
  version: z.string().regex(DATE, { error: 'version is the date the price list took effect, YYYY-MM-DD' }),
  effective_from: z.string().regex(DATE),
  base_currency: z.string().regex(CURRENCY_CODE),
  exchange_rates_as_of: z.string().regex(DATE),
  unit_minutes: z.int().min(1).refine((n) => /^10*$/.test(String(n)), { error: 'unit_minutes must be a power of ten' }),
  currencies: z.array(currencySchema).min(1),
  usage_kinds: z.array(usageKindSchema).min(1),
  plans: z.array(planSchema).min(1),
  volume_discount: z.strictObject({ tiers: z.array(tierSchema).min(1) }),
});

export type Currency = z.output<typeof currencySchema>;
export type UsageKind = z.output<typeof usageKindSchema>;
export type Plan = z.output<typeof planSchema>;
export type DiscountTier = z.output<typeof tierSchema>;
/** The price list: plans, per-minute rates, volume discount tiers and currencies (docs/billing.md). */
export type PriceList = z.output<typeof priceListFileSchema>;

function sameKeys(record: Readonly<Record<string, number>>, ids: readonly string[]): string | undefined {
  const missing = ids.filter((id) => !Object.hasOwn(record, id));
  const extra = Object.keys(record).filter((key) => !ids.includes(key));
  if (missing.length > 0) return `lacks ${missing.join(', ')}`;
  if (extra.length > 0) return `names unknown usage kinds ${extra.join(', ')}`;
  return undefined;
}

function currencyProblems(list: PriceList): string[] {
  const problems: string[] = [];
  for (const code of duplicates(list.currencies.map((c) => c.code))) problems.push(`currency ${code} is listed twice`);
  for (const c of list.currencies) {
    if (parseDecimal(c.per_base).num === 0n) problems.push(`currency ${c.code}: per_base must be above zero`);
  }
  const base = list.currencies.find((c) => c.code === list.base_currency);
  if (!base) problems.push(`base_currency ${list.base_currency} is not listed in currencies`);
  else {
    const rate = parseDecimal(base.per_base);
    if (rate.num !== rate.den) problems.push(`the base currency ${base.code} must have per_base 1`);
  }
  return problems;
}

function usageKindProblems(list: PriceList): string[] {
  const problems: string[] = [];
  for (const id of duplicates(list.usage_kinds.map((k) => k.id))) problems.push(`usage kind ${id} is listed twice`);
  const video = list.usage_kinds.filter((k) => k.medium === 'video');
  video.forEach((kind, i) => {
    const next = video[i + 1];
    if (kind.max_pixels === null && next) problems.push(`video tier ${kind.id} has no upper bound but is not the last video tier`);
    if (kind.max_pixels !== null && next?.max_pixels != null && next.max_pixels <= kind.max_pixels) {
      problems.push(`video tiers must be ordered by max_pixels: ${next.id} follows ${kind.id}`);
    }
  });
  for (const kind of list.usage_kinds) {
    if (kind.medium !== 'video' && kind.max_pixels !== null) problems.push(`usage kind ${kind.id} is not video: max_pixels must be null`);
  }
  return problems;
}

function planProblems(list: PriceList): string[] {
  const problems: string[] = [];
  const kinds = list.usage_kinds.map((k) => k.id);
  const codes = new Set(list.currencies.map((c) => c.code));
  for (const id of duplicates(list.plans.map((p) => p.id))) problems.push(`plan ${id} is listed twice`);
  for (const plan of list.plans) {
    if (!codes.has(plan.currency)) problems.push(`plan ${plan.id}: currency ${plan.currency} is not listed in currencies`);
    const included = sameKeys(plan.included_minutes, kinds);
    if (included) problems.push(`plan ${plan.id}: included_minutes ${included}`);
    const prices = sameKeys(plan.unit_prices_minor, kinds);
    if (prices) problems.push(`plan ${plan.id}: unit_prices_minor ${prices}`);
  }
  return problems;
}

function tierProblems(list: PriceList): string[] {
  const problems: string[] = [];
  const tiers = list.volume_discount.tiers;
  if (tiers[0] && tiers[0].from_minutes !== 0) problems.push('the first discount tier must start at 0 minutes');
  tiers.forEach((tier, i) => {
    const next = tiers[i + 1];
    if (tier.up_to_minutes !== null && tier.up_to_minutes <= tier.from_minutes) {
      problems.push(`discount tier ${i}: up_to_minutes must be above from_minutes`);
    }
    if (next) {
      if (tier.up_to_minutes === null) problems.push(`discount tier ${i}: only the last tier may be open-ended`);
      else if (next.from_minutes !== tier.up_to_minutes) {
        problems.push(`discount tier ${i + 1} must start where tier ${i} ends (${tier.up_to_minutes}): tiers are contiguous and do not overlap`);
      }
      if (next.discount_bps < tier.discount_bps) problems.push(`discount tier ${i + 1} gives less than tier ${i}`);
    } else if (tier.up_to_minutes !== null) {
      problems.push('the last discount tier must be open-ended (up_to_minutes null)');
    }
  });
  return problems;
}

/** Every quote of the largest allowed usage must still fit a JSON number exactly, in every currency. */
function rangeProblems(list: PriceList): string[] {
  const problems: string[] = [];
  for (const plan of list.plans) {
    const from = list.currencies.find((c) => c.code === plan.currency);
    if (!from) continue;
    for (const to of list.currencies) {
      let worst: Fraction = fraction(plan.monthly_fee_minor);
      for (const price of Object.values(plan.unit_prices_minor)) {
        worst = { num: worst.num * BigInt(list.unit_minutes) + BigInt(MAX_QUOTE_MINUTES) * BigInt(price) * worst.den, den: worst.den * BigInt(list.unit_minutes) };
      }
      const total = roundHalfEven(convertMinor(worst, from, to)) + BigInt(list.usage_kinds.length + 1);
      if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
        problems.push(`plan ${plan.id} in ${to.code}: a quote of ${MAX_QUOTE_MINUTES} minutes per kind exceeds the safe integer range`);
      }
    }
  }
  return problems;
}

/**
 * Validates a price list against its schema and its coherence rules (every plan's currency listed,
 * every usage kind priced in every plan, discount tiers ordered, contiguous and non-overlapping,
 * ...) and returns it frozen; a CatalogError lists every problem found.
 */
export function parsePriceList(raw: unknown, file = 'price list'): PriceList {
  const parsed = priceListFileSchema.safeParse(raw);
  if (!parsed.success) throw new CatalogError(file, issueLines(parsed.error.issues));
  const list = parsed.data;
  const problems = [...currencyProblems(list), ...usageKindProblems(list), ...planProblems(list), ...tierProblems(list)];
  if (problems.length === 0) problems.push(...rangeProblems(list));
  if (problems.length > 0) throw new CatalogError(file, problems);
  return deepFreeze(list);
}

/** The price list in force, validated when the process starts. */
export const PRICE_LIST: PriceList = parsePriceList(rawPriceList, 'server/src/catalog/price-list.v1.json');

export function findPlan(list: PriceList, id: string): Plan | undefined {
  return list.plans.find((p) => p.id === id);
}

export function findCurrency(list: PriceList, code: string): Currency | undefined {
  return list.currencies.find((c) => c.code === code);
}

/** The one tier whose range holds `minutes` (tiers are contiguous from 0 and the last is open-ended). */
export function discountTierFor(list: PriceList, minutes: number): DiscountTier {
  const tier = list.volume_discount.tiers.find((t) => minutes >= t.from_minutes && (t.up_to_minutes === null || minutes < t.up_to_minutes));
  if (!tier) throw new RangeError(`no discount tier holds ${minutes} minutes`);
  return tier;
}
