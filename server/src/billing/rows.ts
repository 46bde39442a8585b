import type { QuoteRecord, SubscriptionRequestRecord, SubscriptionRequestStatus } from './store.ts';

/** Rows both SQL stores read, with the same column names and types in SQLite and PostgreSQL, and their records. */

export interface QuoteRow { id: string; account_id: string; price_list_version: string; created_at: number; document: string }
export interface SubscriptionRequestRow {
  id: string; account_id: string; project_id: string; plan: string; quote_id: string | null; note: string | null;
  status: SubscriptionRequestStatus; created_at: number; updated_at: number; decided_at: number | null; reason: string | null;
}

export const toQuote = (r: QuoteRow): QuoteRecord => ({
  id: r.id, accountId: r.account_id, priceListVersion: r.price_list_version, createdAt: r.created_at, document: r.document,
});

export const toSubscriptionRequest = (r: SubscriptionRequestRow): SubscriptionRequestRecord => ({
  id: r.id, accountId: r.account_id, projectId: r.project_id, plan: r.plan, quoteId: r.quote_id, note: r.note,
  status: r.status, createdAt: r.created_at, updatedAt: r.updated_at, decidedAt: r.decided_at, reason: r.reason,
});
