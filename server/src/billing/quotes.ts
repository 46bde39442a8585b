import type { PriceList } from './catalog/price-list.ts';
import { computeQuote, type QuoteBreakdown, type QuoteInput, type UsageMinutes } from './catalog/quote.ts';
import { paginate, type PageQuery } from '../core/cursor.ts';
import { notFound, rateLimited } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { QuoteRecord } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import type { QuoteStore } from './store.ts';

/** Quotes an account may create per minute. */
export const QUOTES_PER_MINUTE = 60;

/** Expected monthly usage on a plan, priced in a currency (the plan's own when left out). */
export type QuoteCreate = QuoteInput;

/** A stored quote as it is shown: the priced breakdown with its id and time of creation. */
export interface QuoteView extends Omit<QuoteBreakdown, 'usage'> {
  readonly id: string;
  readonly created_at: number;
  /** The usage the quote was asked for. */
  readonly usage: UsageMinutes;
}

const viewOf = (record: QuoteRecord): QuoteView => JSON.parse(record.document) as QuoteView;

/**
 * Prices expected usage with the price list in force and stores the result as it is shown: a
 * quote never changes afterwards, and names the price-list version it used.
 */
export async function createQuote(deps: ServiceDeps<QuoteStore>, prices: PriceList, accountId: string, body: QuoteCreate): Promise<QuoteView> {
  const rate = await deps.limiter.hit(`quotes:${accountId}`, QUOTES_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  const createdAt = nowSec(deps.clock);
  const usage: Record<string, number> = {};
  for (const [kind, minutes] of Object.entries(body.usage)) if (minutes !== undefined) usage[kind] = minutes;
  const breakdown = computeQuote(prices, { plan: body.plan, currency: body.currency, usage });
  const view: QuoteView = { id: newId('quote'), created_at: createdAt, ...breakdown, lines: [...breakdown.lines] };
  await deps.store.insertQuote({
    id: view.id, accountId, priceListVersion: view.price_list_version, createdAt, document: JSON.stringify(view),
  });
  return view;
}

/** Another account's quote is 404, like an unknown one. */
export async function getOwnQuote(deps: ServiceDeps<QuoteStore>, accountId: string, id: string): Promise<QuoteView> {
  const record = await deps.store.getQuote(accountId, id);
  if (!record) throw notFound('quote');
  return viewOf(record);
}

export async function listQuotes(
  deps: ServiceDeps<QuoteStore>, accountId: string, query: PageQuery,
): Promise<{ quotes: QuoteView[]; next_cursor: string | null }> {
  const page = await paginate({ listing: 'quotes', filters: {} }, query, {
    has: async (id) => (await deps.store.getQuote(accountId, id)) !== undefined,
    list: (afterId, limit) => deps.store.listQuotes(accountId, { limit, afterId }),
  });
  return {
    quotes: page.items.map(viewOf),
    next_cursor: page.nextCursor,
  };
}
