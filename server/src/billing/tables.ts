import type { Migration } from '../sql/dialect.ts';

/** Quotes are immutable documents; at most one pending subscription request per project (docs/billing.md). */
export const BILLING_TABLES: Migration = {
  sql: (d) => `CREATE TABLE quotes (
     ${d.seqColumn}
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     price_list_version TEXT NOT NULL,
     created_at ${d.bigint} NOT NULL,
     document TEXT NOT NULL
   );
   CREATE INDEX quotes_account ON quotes(account_id${d.seqKey});
   CREATE TABLE subscription_requests (
     ${d.seqColumn}
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     project_id TEXT NOT NULL REFERENCES projects(id),
     plan TEXT NOT NULL,
     quote_id TEXT REFERENCES quotes(id),
     note TEXT,
     status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','cancelled')),
     created_at ${d.bigint} NOT NULL,
     updated_at ${d.bigint} NOT NULL,
     decided_at ${d.bigint},
     reason TEXT
   );
   CREATE INDEX subscription_requests_account ON subscription_requests(account_id);
   CREATE INDEX subscription_requests_project ON subscription_requests(project_id);
   CREATE UNIQUE INDEX subscription_requests_one_pending ON subscription_requests(project_id) WHERE status = 'pending';`,
};
