import { convertMinor, fraction, roundHalfEven, toSafeNumber } from './money.ts';
import { discountTierFor, findCurrency, findPlan, type PriceList } from './price-list.ts';

/** Expected monthly usage: minutes per usage kind of the price list. */
export type UsageMinutes = Readonly<Partial<Record<string, number>>>;

export interface QuoteInput {
  readonly plan: string;
  /** Defaults to the plan's own currency. */
  readonly currency?: string | undefined;
  readonly usage: UsageMinutes;
}

export interface QuoteUsageLine {
  readonly usage_kind: string;
  readonly description: string;
  readonly minutes: number;
  readonly included_minutes: number;
  readonly billable_minutes: number;
  /** Price of `unit_minutes` minutes, in minor units of `price_currency`. */
  readonly unit_price_minor: number;
  readonly unit_minutes: number;
  readonly price_currency: string;
  /** billable_minutes * unit_price_minor / unit_minutes, converted, rounded half to even. */
  readonly amount_minor: number;
}

/** A priced quote: what `POST /v1/billing/quotes` stores and returns, minus its id and time. */
export interface QuoteBreakdown {
  readonly price_list_version: string;
  readonly plan: string;
  readonly currency: string;
  readonly minor_units: number;
  readonly exchange: {
    readonly base_currency: string;
    readonly from_currency: string;
    readonly to_currency: string;
    readonly from_per_base: string;
    readonly to_per_base: string;
    readonly rates_as_of: string;
  };
  readonly usage: Readonly<Record<string, number>>;
  readonly plan_fee: {
    readonly description: string;
    readonly price_minor: number;
    readonly price_currency: string;
    readonly amount_minor: number;
  };
  readonly lines: readonly QuoteUsageLine[];
  readonly usage_subtotal_minor: number;
  readonly discount: {
    readonly total_minutes: number;
    readonly from_minutes: number;
    readonly up_to_minutes: number | null;
    readonly discount_bps: number;
    readonly amount_minor: number;
  };
  readonly total_minor: number;
  readonly rounding: 'half_even_per_line';
}

/**
 * Prices expected usage on a plan, in a currency (docs/billing.md):
 * - a usage line's exact amount is billable minutes (minutes above the plan's included minutes)
 *   times the plan's price per `unit_minutes`, converted exactly into the quote currency, then
 *   rounded once, half to even, to the currency's minor unit; the monthly fee likewise;
 * - the volume discount tier is chosen by the total minutes of every usage kind; its rate applies
 *   to the sum of the rounded usage lines and is itself rounded half to even;
 * - total = monthly fee + usage subtotal - discount, so every shown figure adds up exactly.
 * The input must already be valid (plan, currency and usage kinds of this price list).
 */
export function computeQuote(list: PriceList, input: QuoteInput): QuoteBreakdown {
  const plan = findPlan(list, input.plan);
  if (!plan) throw new RangeError(`unknown plan ${input.plan}`);
  const from = findCurrency(list, plan.currency);
  const to = findCurrency(list, input.currency ?? plan.currency);
  if (!from || !to) throw new RangeError('unknown currency');

  const usage: Record<string, number> = {};
  const lines: QuoteUsageLine[] = [];
  let totalMinutes = 0;
  for (const kind of list.usage_kinds) {
    const minutes = input.usage[kind.id];
    if (minutes === undefined) continue;
    usage[kind.id] = minutes;
    totalMinutes += minutes;
    const included = plan.included_minutes[kind.id] ?? 0;
    const price = plan.unit_prices_minor[kind.id] ?? 0;
    const billable = Math.max(0, minutes - included);
    const exact = fraction(BigInt(billable) * BigInt(price), list.unit_minutes);
    lines.push({
      usage_kind: kind.id, description: kind.name, minutes, included_minutes: included, billable_minutes: billable,
      unit_price_minor: price, unit_minutes: list.unit_minutes, price_currency: plan.currency,
      amount_minor: toSafeNumber(roundHalfEven(convertMinor(exact, from, to))),
    });
  }

  const fee = toSafeNumber(roundHalfEven(convertMinor(fraction(plan.monthly_fee_minor), from, to)));
  const subtotal = lines.reduce((sum, line) => sum + BigInt(line.amount_minor), 0n);
  const tier = discountTierFor(list, totalMinutes);
  const discount = roundHalfEven(fraction(subtotal * BigInt(tier.discount_bps), 10_000));

  return {
    price_list_version: list.version,
    plan: plan.id,
    currency: to.code,
    minor_units: to.minor_units,
    exchange: {
      base_currency: list.base_currency, from_currency: from.code, to_currency: to.code,
      from_per_base: from.per_base, to_per_base: to.per_base, rates_as_of: list.exchange_rates_as_of,
    },
    usage,
    plan_fee: {
      description: `${plan.name} plan, monthly fee`, price_minor: plan.monthly_fee_minor, price_currency: plan.currency,
      amount_minor: fee,
    },
    lines,
    usage_subtotal_minor: toSafeNumber(subtotal),
    discount: {
      total_minutes: totalMinutes, from_minutes: tier.from_minutes, up_to_minutes: tier.up_to_minutes,
      discount_bps: tier.discount_bps, amount_minor: toSafeNumber(discount),
    },
    total_minor: toSafeNumber(BigInt(fee) + subtotal - discount),
    rounding: 'half_even_per_line',
  };
}
