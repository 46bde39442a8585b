import type { Migration } from '../sql/dialect.ts';

/** The webhook endpoints and the outbox of their deliveries (docs/reference/webhooks.md). */
export const WEBHOOK_TABLES: Migration = {
  sql: (d) => `CREATE TABLE webhooks (
     ${d.seqColumn}
     id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     url TEXT NOT NULL,
     description TEXT NOT NULL,
     event_types TEXT NOT NULL,
     enabled ${d.boolean} NOT NULL,
     secret TEXT NOT NULL,
     previous_secret TEXT,
     previous_secret_expires_at ${d.bigint},
     created_at ${d.bigint} NOT NULL,
     updated_at ${d.bigint} NOT NULL
   );
   CREATE INDEX webhooks_project ON webhooks(project_id, created_at${d.seqKey});
   CREATE TABLE webhook_deliveries (
     ${d.seqColumn}
     id TEXT PRIMARY KEY,
     webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
     event_id TEXT NOT NULL,
     event_type TEXT NOT NULL,
     body TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('pending','delivered','failed')),
     attempts INTEGER NOT NULL,
     last_status_code INTEGER,
     last_error TEXT,
     next_attempt_at ${d.bigint},
     delivered_at ${d.bigint},
     lease_owner TEXT,
     lease_until ${d.bigint},
     created_at ${d.bigint} NOT NULL
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id${d.seqKey});`,
};
