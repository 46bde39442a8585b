import type Database from 'better-sqlite3';
import { toQuote, toSubscriptionRequest, type QuoteRow, type SubscriptionRequestRow } from './rows.ts';
import type { BillingStore } from './store.ts';

/** The billing module's part of the SQLite store (quotes, subscription requests), on its connection. */
export function sqliteBillingStore(db: Database.Database): BillingStore {
  const q = {
    insertQuote: db.prepare(`INSERT INTO quotes (id, account_id, price_list_version, created_at, document)
      VALUES (@id, @accountId, @priceListVersion, @createdAt, @document)`),
    getQuote: db.prepare<[string, string], QuoteRow>('SELECT * FROM quotes WHERE account_id = ? AND id = ?'),
    // newest first: rowid follows insertion order (rows are never deleted)
    listQuotes: db.prepare<{ accountId: string; afterId: string | null; limit: number }, QuoteRow>(
      `SELECT * FROM quotes WHERE account_id = @accountId
       AND (@afterId IS NULL OR rowid < (SELECT rowid FROM quotes WHERE id = @afterId AND account_id = @accountId))
       ORDER BY rowid DESC LIMIT @limit`),
    insertSubscriptionRequest: db.prepare(`INSERT INTO subscription_requests (id, account_id, project_id, plan, quote_id,
      note, status, created_at, updated_at, decided_at, reason) VALUES (@id, @accountId, @projectId, @plan, @quoteId,
      @note, @status, @createdAt, @updatedAt, @decidedAt, @reason) ON CONFLICT DO NOTHING`),
    subscriptionRequestById: db.prepare<[string], SubscriptionRequestRow>('SELECT * FROM subscription_requests WHERE id = ?'),
    listSubscriptionRequests: db.prepare<{
      accountId: string | null; projectId: string | null; status: string | null; afterId: string | null; limit: number;
    }, SubscriptionRequestRow>(
      `SELECT * FROM subscription_requests
       WHERE (@accountId IS NULL OR account_id = @accountId) AND (@projectId IS NULL OR project_id = @projectId)
       AND (@status IS NULL OR status = @status)
       AND (@afterId IS NULL OR rowid < (SELECT rowid FROM subscription_requests WHERE id = @afterId))
       ORDER BY rowid DESC LIMIT @limit`),
    transitionSubscriptionRequest: db.prepare<{ id: string; status: string; at: number; reason: string | null }>(
      `UPDATE subscription_requests SET status = @status, updated_at = @at, decided_at = @at, reason = @reason
       WHERE id = @id AND status = 'pending'`),
  };

  return {
    async insertQuote(quote) { q.insertQuote.run(quote); },
    async getQuote(accountId, id) { const r = q.getQuote.get(accountId, id); return r && toQuote(r); },
    async listQuotes(accountId, page) {
      return q.listQuotes.all({ accountId, afterId: page.afterId ?? null, limit: page.limit }).map(toQuote);
    },
    async insertSubscriptionRequest(request) { return q.insertSubscriptionRequest.run(request).changes === 1; },
    async getSubscriptionRequest(id, accountId) {
      const r = q.subscriptionRequestById.get(id);
      return r && (accountId === undefined || r.account_id === accountId) ? toSubscriptionRequest(r) : undefined;
    },
    async listSubscriptionRequests(filter, page) {
      return q.listSubscriptionRequests.all({
        accountId: filter.accountId ?? null, projectId: filter.projectId ?? null, status: filter.status ?? null,
        afterId: page.afterId ?? null, limit: page.limit,
      }).map(toSubscriptionRequest);
    },
    async transitionSubscriptionRequest(id, to) {
      const changed = q.transitionSubscriptionRequest.run({ id, status: to.status, at: to.at, reason: to.reason ?? null }).changes;
      const r = changed === 1 ? q.subscriptionRequestById.get(id) : undefined;
      return r && toSubscriptionRequest(r);
    },
  };
}
