import type pg from 'pg';
import { pgQueries } from '../sql/postgres.ts';
import { toQuote, toSubscriptionRequest, type QuoteRow, type SubscriptionRequestRow } from './rows.ts';
import type { BillingStore } from './store.ts';

/** The billing module's part of the PostgreSQL store (quotes, subscription requests), on its pool. */
export function postgresBillingStore(pool: pg.Pool): BillingStore {
  const { rows, one, changed } = pgQueries(pool);
  return {
    async insertQuote(q) {
      await pool.query(`INSERT INTO quotes (id, account_id, price_list_version, created_at, document) VALUES ($1, $2, $3, $4, $5)`,
        [q.id, q.accountId, q.priceListVersion, q.createdAt, q.document]);
    },
    async getQuote(accountId, id) {
      const r = await one<QuoteRow>(`SELECT * FROM quotes WHERE account_id = $1 AND id = $2`, [accountId, id]);
      return r && toQuote(r);
    },
    // newest first; an `afterId` that is not one of the account's quotes gives an empty page, as with SQLite
    async listQuotes(accountId, page) {
      return (await rows<QuoteRow>(`SELECT * FROM quotes WHERE account_id = $1
        AND ($2::text IS NULL OR seq < (SELECT seq FROM quotes WHERE id = $2 AND account_id = $1))
        ORDER BY seq DESC LIMIT $3`, [accountId, page.afterId ?? null, page.limit])).map(toQuote);
    },
    // any uniqueness conflict (the id, or a second pending request of the project) answers false
    async insertSubscriptionRequest(s) {
      return await changed(`INSERT INTO subscription_requests (id, account_id, project_id, plan, quote_id, note, status,
        created_at, updated_at, decided_at, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
      [s.id, s.accountId, s.projectId, s.plan, s.quoteId, s.note, s.status, s.createdAt, s.updatedAt, s.decidedAt, s.reason]) === 1;
    },
    async getSubscriptionRequest(id, accountId) {
      const r = await one<SubscriptionRequestRow>(`SELECT * FROM subscription_requests
        WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)`, [id, accountId ?? null]);
      return r && toSubscriptionRequest(r);
    },
    async listSubscriptionRequests(filter, page) {
      return (await rows<SubscriptionRequestRow>(`SELECT * FROM subscription_requests
        WHERE ($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR project_id = $2) AND ($3::text IS NULL OR status = $3)
        AND ($4::text IS NULL OR seq < (SELECT seq FROM subscription_requests WHERE id = $4))
        ORDER BY seq DESC LIMIT $5`,
      [filter.accountId ?? null, filter.projectId ?? null, filter.status ?? null, page.afterId ?? null, page.limit]))
        .map(toSubscriptionRequest);
    },
    // one statement: of two concurrent decisions only the first finds the request pending
    async transitionSubscriptionRequest(id, to) {
      const r = await one<SubscriptionRequestRow>(`UPDATE subscription_requests
        SET status = $2, updated_at = $3, decided_at = $3, reason = $4
        WHERE id = $1 AND status = 'pending' RETURNING *`,
      [id, to.status, to.at, to.reason ?? null]);
      return r && toSubscriptionRequest(r);
    },
  };
}
