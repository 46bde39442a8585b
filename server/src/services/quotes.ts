import { randomBytes } from 'node:crypto';
import type { PriceList } from '../catalog/price-list.ts';
import { computeQuote } from '../catalog/quote.ts';
import { decodeCursor, encodeCursor, INVALID_CURSOR } from '../core/cursor.ts';
import { ApiError, notFound, rateLimited } from '../core/errors.ts';
import type { QuoteRecord } from '../ports.ts';
import type { QuoteCreate, QuoteView } from '../schemas/billing.ts';
import { DEFAULT_PAGE_LIMIT } from '../schemas/public.ts';
import { nowSec, type ServiceDeps } from './deps.ts';

/** Quotes an account may create per minute. */
export const QUOTES_PER_MINUTE = 60;
export const QUOTE_ID_PREFIX = 'quo_';

const newQuoteId = (): string => QUOTE_ID_PREFIX + randomBytes(16).toString('base64url');

const viewOf = (record: QuoteRecord): QuoteView => JSON.parse(record.document) as QuoteView;

/**
 * Prices expected usage with the price list in force and stores the result as it is shown: a
 * quote never changes afterwards, and names the price-list version it used.
 */
export async function createQuote(deps: ServiceDeps, prices: PriceList, accountId: string, body: QuoteCreate): Promise<QuoteView> {
  const rate = await deps.limiter.hit(`quotes:${accountId}`, QUOTES_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  const createdAt = nowSec(deps.clock);
  const usage: Record<string, number> = {};
  for (const [kind, minutes] of Object.entries(body.usage)) if (minutes !== undefined) usage[kind] = minutes;
  const breakdown = computeQuote(prices, { plan: body.plan, currency: body.currency, usage });
  const view: QuoteView = { id: newQuoteId(), created_at: createdAt, ...breakdown, lines: [...breakdown.lines] };
  await deps.store.insertQuote({
    id: view.id, accountId, priceListVersion: view.price_list_version, createdAt, document: JSON.stringify(view),
  });
  return view;
}

/** Another account's quote is 404, like an unknown one. */
export async function getOwnQuote(deps: ServiceDeps, accountId: string, id: string): Promise<QuoteView> {
  const record = await deps.store.getQuote(accountId, id);
  if (!record) throw notFound('quote');
  return viewOf(record);
}

export async function listQuotes(
  deps: ServiceDeps, accountId: string, query: { limit?: number | undefined; cursor?: string | undefined },
): Promise<{ quotes: QuoteView[]; next_cursor: string | null }> {
  const scope = { listing: 'quotes', filters: {} };
  const afterId = query.cursor === undefined ? undefined : decodeCursor(scope, query.cursor);
  if (afterId !== undefined && !(await deps.store.getQuote(accountId, afterId))) {
    throw new ApiError('invalid_request', INVALID_CURSOR);
  }
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const records = await deps.store.listQuotes(accountId, { limit: limit + 1, afterId });
  const page = records.slice(0, limit);
  const last = page[page.length - 1];
  return {
    quotes: page.map(viewOf),
    next_cursor: records.length > limit && last ? encodeCursor(scope, last.id) : null,
  };
}
