import { z } from 'zod';
import type { PageQuery } from '../core/cursor.ts';
import type { SubscriptionRequestStatus } from './store.ts';
import type { QuoteCreate, QuoteView } from './quotes.ts';
import type { SubscriptionRequestCreate, SubscriptionRequestQuery, SubscriptionRequestView } from './subscriptions.ts';
import { MAX_QUOTE_MINUTES, PRICE_LIST } from './catalog/price-list.ts';
import { typeError } from '../http/validate.ts';
import { responseComponent } from '../http/registry.ts';
import { cursorParam, limitParam, queryText } from '../http/query.ts';
import { usageKindMap } from './public-schemas.ts';

const planIds = PRICE_LIST.plans.map((p) => p.id) as [string, ...string[]];
const currencyCodes = PRICE_LIST.currencies.map((c) => c.code) as [string, ...string[]];
const usageKinds = PRICE_LIST.usage_kinds.map((k) => k.id);

export const SUBSCRIPTION_STATUSES = ['pending', 'approved', 'rejected', 'cancelled'] as const satisfies readonly SubscriptionRequestStatus[];
export const MAX_NOTE_LENGTH = 500;

const oneOf = (field: string, values: readonly string[]) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined
    ? `${field} is required`
    : `${field} must be one of ${values.join(', ')}`),
});

const planSchema = z.enum(planIds, oneOf('plan', planIds)).meta({ description: 'a plan id of GET /v1/public/pricing/plans' });

const minutes = (kind: string) => {
  const rule = `usage.${kind} must be an integer from 0 to ${MAX_QUOTE_MINUTES}`;
  return z.number({ error: rule }).int({ error: rule }).min(0, { error: rule }).max(MAX_QUOTE_MINUTES, { error: rule });
};

/** Body of `POST /v1/billing/quotes`: expected monthly usage on a plan, priced in a currency. */
export const quoteCreateSchema = z.strictObject({
  plan: planSchema,
  currency: z.enum(currencyCodes, oneOf('currency', currencyCodes)).optional()
    .meta({ description: "a currency of GET /v1/public/pricing/currencies; default: the plan's currency" }),
  usage: z.strictObject(
    Object.fromEntries(usageKinds.map((kind) => [kind, minutes(kind).optional()])),
    typeError('usage', 'an object of minutes per usage kind'),
  ).meta({ description: 'expected minutes per usage kind in one month; kinds left out are not quoted' }),
}) satisfies z.ZodType<QuoteCreate>;

const idField = (field: string, what: string) => z.string(typeError(field, what))
  .min(1, { error: `${field} must not be empty` })
  .max(64, { error: `${field} must be at most 64 characters` });

/** Body of `POST /v1/billing/subscription-requests`. */
export const subscriptionRequestCreateSchema = z.strictObject({
  project_id: idField('project_id', 'a project id').meta({ description: 'a project of the signed-in account' }),
  plan: planSchema,
  quote_id: idField('quote_id', 'a quote id').optional()
    .meta({ description: 'a quote of the signed-in account for the same plan, shown to the operator' }),
  note: z.string(typeError('note', 'a string'))
    .trim()
    .min(1, { error: 'note must not be empty' })
    .max(MAX_NOTE_LENGTH, { error: `note must be at most ${MAX_NOTE_LENGTH} characters` })
    .regex(/^(?:[^\p{Cc}]|\n)*$/u, { error: 'note must not contain control characters other than line breaks' })
    .optional()
    .meta({ description: `free text for the operator, at most ${MAX_NOTE_LENGTH} characters` }),
}) satisfies z.ZodType<SubscriptionRequestCreate>;

/** Query of `GET /v1/billing/quotes`. */
export const quotesQuerySchema = z.strictObject({
  limit: limitParam.optional(),
  cursor: cursorParam.optional(),
}) satisfies z.ZodType<PageQuery>;

/** Query of `GET /v1/billing/subscription-requests`. */
export const subscriptionRequestsQuerySchema = z.strictObject({
  project_id: queryText('project_id', 'a project id').min(1, { error: 'project_id must not be empty' })
    .max(64, { error: 'project_id must be at most 64 characters' }).optional()
    .meta({ description: 'only the requests of this project' }),
  status: z.enum(SUBSCRIPTION_STATUSES, {
    error: (issue) => (Array.isArray(issue.input) ? 'status must be given once' : `status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}`),
  }).optional().meta({ description: 'only the requests in this state' }),
  limit: limitParam.optional(),
  cursor: cursorParam.optional(),
}) satisfies z.ZodType<SubscriptionRequestQuery>;

// ---- responses ----

const int = z.int().min(0);

export const quoteSchema = z.strictObject({
  id: z.string().meta({ description: 'quo_ followed by 22 base64url characters' }),
  created_at: int,
  price_list_version: z.string().meta({ description: 'the price list the quote was priced with' }),
  plan: z.string(),
  currency: z.string(),
  minor_units: int.meta({ description: 'every *_minor amount is an integer of 10^-minor_units of currency' }),
  exchange: z.strictObject({
    base_currency: z.string(),
    from_currency: z.string().meta({ description: "the plan's currency" }),
    to_currency: z.string().meta({ description: "the quote's currency" }),
    from_per_base: z.string(),
    to_per_base: z.string(),
    rates_as_of: z.string(),
  }),
  usage: usageKindMap(int).partial().meta({ description: 'the usage the quote was asked for' }),
  plan_fee: z.strictObject({
    description: z.string(),
    price_minor: int.meta({ description: "monthly fee in minor units of the plan's currency" }),
    price_currency: z.string(),
    amount_minor: int.meta({ description: 'the fee converted into the quote currency, rounded half to even' }),
  }),
  lines: z.array(z.strictObject({
    usage_kind: z.string(),
    description: z.string(),
    minutes: int,
    included_minutes: int,
    billable_minutes: int.meta({ description: 'max(0, minutes - included_minutes)' }),
    unit_price_minor: int,
    unit_minutes: int,
    price_currency: z.string(),
    amount_minor: int.meta({ description: 'billable_minutes * unit_price_minor / unit_minutes, converted, rounded half to even' }),
  })),
  usage_subtotal_minor: int.meta({ description: 'sum of the amount_minor of lines' }),
  discount: z.strictObject({
    total_minutes: int,
    from_minutes: int,
    up_to_minutes: int.nullable(),
    discount_bps: int,
    amount_minor: int.meta({ description: 'usage_subtotal_minor * discount_bps / 10000, rounded half to even' }),
  }),
  total_minor: int.meta({ description: 'plan_fee.amount_minor + usage_subtotal_minor - discount.amount_minor' }),
  rounding: z.literal('half_even_per_line'),
}) satisfies z.ZodType<QuoteView>;

export const quoteListSchema = z.strictObject({
  quotes: z.array(quoteSchema),
  next_cursor: z.string().nullable(),
});

export const subscriptionRequestSchema = z.strictObject({
  id: z.string().meta({ description: 'sreq_ followed by 22 base64url characters' }),
  project_id: z.string(),
  plan: z.string(),
  quote_id: z.string().nullable(),
  note: z.string().nullable(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  created_at: int,
  updated_at: int,
  decided_at: int.nullable().meta({ description: 'when the request left pending' }),
  reason: z.string().nullable().meta({ description: "the operator's reason for a rejection" }),
}) satisfies z.ZodType<SubscriptionRequestView>;

export const subscriptionRequestListSchema = z.strictObject({
  subscription_requests: z.array(subscriptionRequestSchema),
  next_cursor: z.string().nullable(),
});

/** The console's usage view of a project (usage.ts). */
export const projectUsageSchema = responseComponent(z.strictObject({
  tokens_per_day: z.array(z.strictObject({
    day: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
    tokens: z.int().min(0).meta({ description: 'tokens issued for the project that day (token API and temporary tokens)' }),
  })).meta({ description: 'the last 14 days, oldest first, today last' }),
  participant_minutes_per_day: z.array(z.strictObject({
    day: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
    participant_seconds: z.int().min(0).meta({ description: 'seconds spent in media sessions of the project that day, summed over participants' }),
    participant_minutes: z.int().min(0).meta({ description: 'participant_seconds in minutes, rounded up' }),
    minutes_by_kind: z.record(z.string(), z.int().min(0)).meta({
      description: 'the day\'s minutes per usage kind of the price list (every kind, 0 when none), each kind\'s seconds rounded up; '
        + 'a session counts as the usage_kind it ended with, an open one as audio; turn_relay counts on top',
    }),
  })).meta({ description: 'the same days; a session counts on each day it overlaps, an open one up to now' }),
  cost: z.strictObject({
    plan: z.string().meta({ description: 'the plan the minutes are priced on' }),
    plan_source: z.enum(['subscription', 'default']).meta({
      description: 'subscription: the project\'s newest approved subscription request; default: none, the price list\'s first plan (developer)',
    }),
    from_day: z.string().meta({ description: 'first UTC day of the period, YYYY-MM-DD' }),
    to_day: z.string().meta({ description: 'last UTC day of the period (today)' }),
    usage: z.record(z.string(), z.int().min(0)).meta({ description: 'minutes per usage kind over the period: the sum of the days\' minutes_by_kind' }),
    currency: z.string(),
    minor_units: z.int().min(0),
    price_list_version: z.string(),
    plan_fee_minor: z.int().min(0).meta({ description: 'plan_fee.amount_minor of POST /v1/billing/quotes for plan and usage' }),
    usage_subtotal_minor: z.int().min(0).meta({ description: 'usage_subtotal_minor of that quote' }),
    discount_minor: z.int().min(0).meta({ description: 'discount.amount_minor of that quote' }),
    total_minor: z.int().min(0).meta({ description: 'total_minor of that quote: the monthly fee included' }),
  }).meta({ description: 'what the period\'s minutes would cost on the project\'s plan, priced as POST /v1/billing/quotes prices them (docs/console.md, "Usage")' }),
}), 'ProjectUsage');
