import type pg from 'pg';
import { newId } from '../core/ids.ts';
import type { WebhookStore } from './store.ts';
import {
  DELIVERY_COLUMNS, toDelivery, toJob, toWebhook, wants, WEBHOOK_COLUMNS, type DeliveryRow, type JobRow, type WebhookRow,
} from './rows.ts';

/** The webhook part of the PostgreSQL store, on its pool. */
export function postgresWebhookStore(pool: pg.Pool): WebhookStore {
  const rows = async <R extends object>(text: string, values: readonly unknown[]): Promise<R[]> => {
    // PostgreSQL text cannot hold NUL: no row matches such a key (as in postgres.ts)
    if (values.some((v) => typeof v === 'string' && v.includes('\0'))) return [];
    return (await pool.query<R>(text, [...values])).rows;
  };
  const one = async <R extends object>(text: string, values: readonly unknown[]): Promise<R | undefined> =>
    (await rows<R>(text, values))[0];

  return {
    async insertWebhook(w) {
      await pool.query(`INSERT INTO webhooks (${WEBHOOK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [w.id, w.projectId, w.url, w.description, JSON.stringify(w.eventTypes), w.enabled, w.secret, w.previousSecret,
          w.previousSecretExpiresAt, w.createdAt, w.updatedAt]);
    },
    async listWebhooks(projectId) {
      return (await rows<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = $1 ORDER BY created_at, seq`,
        [projectId])).map(toWebhook);
    },
    async getWebhook(projectId, id) {
      const r = await one<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = $1 AND id = $2`, [projectId, id]);
      return r && toWebhook(r);
    },
    // one statement, so a patch never overwrites a concurrent one's other fields
    async updateWebhook(id, p) {
      const r = await one<WebhookRow>(`UPDATE webhooks SET url = COALESCE($2, url), description = COALESCE($3, description),
        event_types = COALESCE($4, event_types), enabled = COALESCE($5::boolean, enabled), secret = COALESCE($6, secret),
        previous_secret = CASE WHEN $7::boolean THEN $8 ELSE previous_secret END,
        previous_secret_expires_at = CASE WHEN $7::boolean THEN $9::bigint ELSE previous_secret_expires_at END,
        updated_at = $10 WHERE id = $1 RETURNING ${WEBHOOK_COLUMNS}`,
      [id, p.url ?? null, p.description ?? null, p.eventTypes ? JSON.stringify(p.eventTypes) : null, p.enabled ?? null,
        p.secret ?? null, p.previousSecret !== undefined, p.previousSecret ?? null, p.previousSecretExpiresAt ?? null, p.updatedAt]);
      return r && toWebhook(r);
    },
    async deleteWebhook(projectId, id) {
      return ((await pool.query('DELETE FROM webhooks WHERE project_id = $1 AND id = $2', [projectId, id])).rowCount ?? 0) === 1;
    },
    async countWebhooks(projectId) {
      return (await one<{ n: number }>('SELECT count(*) AS n FROM webhooks WHERE project_id = $1', [projectId]))?.n ?? 0;
    },

    // the endpoints are read and the deliveries written in one transaction: an endpoint created,
    // disabled or deleted meanwhile is seen either before or after, never half
    async recordEvent(event) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const targets = (await client.query<WebhookRow>(
          `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = $1 ORDER BY seq FOR SHARE`, [event.projectId],
        )).rows.map(toWebhook)
          .filter((w) => (event.webhookId === undefined ? w.enabled && wants(w.eventTypes, event.type) : w.id === event.webhookId));
        for (const w of targets) {
          await client.query(`INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, body, status, attempts,
            next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6)`,
          [newId('delivery'), w.id, event.id, event.type, event.body, event.recordedAt]);
        }
        await client.query('COMMIT');
        return targets.length;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    // SKIP LOCKED: nodes claiming together each lease other rows, none waits for another's
    async claimDeliveries(c) {
      const found = await rows<JobRow>(`WITH due AS (
          SELECT id FROM webhook_deliveries
          WHERE id IN (SELECT id FROM (
              SELECT id, row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, seq) AS n FROM webhook_deliveries
              WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
                AND webhook_id <> ALL($5::text[])) ranked WHERE n <= $6)
            AND status = 'pending' AND (lease_until IS NULL OR lease_until <= $1)
          ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED),
        leased AS (
          UPDATE webhook_deliveries d SET lease_owner = $2, lease_until = $3 FROM due WHERE d.id = due.id
          RETURNING d.id, d.webhook_id, d.event_id, d.body, d.attempts, d.created_at)
        SELECT l.id, l.webhook_id, l.event_id, w.url, l.body, w.secret, w.previous_secret, w.previous_secret_expires_at,
          l.attempts, l.created_at FROM leased l JOIN webhooks w ON w.id = l.webhook_id`,
      [c.nowMs, c.owner, c.nowMs + c.leaseMs, c.limit, [...c.excludeWebhookIds], c.perWebhook]);
      return found.map((r) => toJob(r, c.nowMs));
    },
    async completeDelivery(id, owner, o) {
      const result = await pool.query(`UPDATE webhook_deliveries SET status = $3, attempts = attempts + 1,
        last_status_code = $4, last_error = $5, next_attempt_at = $6, delivered_at = $7, lease_owner = NULL, lease_until = NULL
        WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`,
      [id, owner, o.delivered ? 'delivered' : o.nextAttemptAt === null ? 'failed' : 'pending', o.statusCode, o.error,
        o.delivered ? null : o.nextAttemptAt, o.delivered ? o.attemptedAt : null]);
      return (result.rowCount ?? 0) === 1;
    },
    async getDelivery(webhookId, id) {
      const r = await one<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 AND id = $2`,
        [webhookId, id]);
      return r && toDelivery(r);
    },
    async purgeDeliveries(beforeMs) {
      return (await pool.query(`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1`, [beforeMs])).rowCount ?? 0;
    },
    async listDeliveries(webhookId, page) {
      return (await rows<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1
        AND ($2::text IS NULL OR seq < (SELECT seq FROM webhook_deliveries WHERE id = $2 AND webhook_id = $1))
        ORDER BY seq DESC LIMIT $3`, [webhookId, page.afterId ?? null, page.limit])).map(toDelivery);
    },
  };
}
