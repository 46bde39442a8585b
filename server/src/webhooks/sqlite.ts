import type Database from 'better-sqlite3';
import { newId } from '../core/ids.ts';
import type { WebhookRecord, WebhookStore } from './store.ts';
import {
  DELIVERY_COLUMNS, toDelivery, toJob, toWebhook, wants, WEBHOOK_COLUMNS, type DeliveryRow, type JobRow, type WebhookRow,
} from './rows.ts';

/** The webhook part of the SQLite store, on its connection. */
export function sqliteWebhookStore(db: Database.Database): WebhookStore {
  const q = {
    insert: db.prepare(`INSERT INTO webhooks (${WEBHOOK_COLUMNS}) VALUES (@id, @projectId, @url, @description,
      @eventTypes, @enabled, @secret, @previousSecret, @previousSecretExpiresAt, @createdAt, @updatedAt)`),
    list: db.prepare<[string], WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = ? ORDER BY created_at, rowid`),
    get: db.prepare<[string, string], WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = ? AND id = ?`),
    byId: db.prepare<[string], WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?`),
    delete: db.prepare<[string, string]>('DELETE FROM webhooks WHERE project_id = ? AND id = ?'),
    count: db.prepare<[string], number>('SELECT count(*) FROM webhooks WHERE project_id = ?').pluck(),
    insertDelivery: db.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, body, status,
      attempts, next_attempt_at, created_at) VALUES (@id, @webhookId, @eventId, @eventType, @body, 'pending', 0, @at, @at)`),
    due: db.prepare<{ now: number; limit: number; exclude: string; perWebhook: number }, { id: string }>(`SELECT id FROM (
        SELECT id, next_attempt_at, row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, rowid) AS n
        FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
        AND webhook_id NOT IN (SELECT value FROM json_each(@exclude)))
      WHERE n <= @perWebhook ORDER BY next_attempt_at LIMIT @limit`),
    // any delivery that may be due, read without the write lock (WAL: a reader waits for no writer)
    anyDue: db.prepare<{ now: number }, number>(`SELECT 1 FROM webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now) LIMIT 1`).pluck(),
    lease: db.prepare<{ id: string; owner: string; until: number }>(
      'UPDATE webhook_deliveries SET lease_owner = @owner, lease_until = @until WHERE id = @id'),
    job: db.prepare<[string], JobRow>(`SELECT d.id, d.webhook_id, d.event_id, w.url, d.body, w.secret, w.previous_secret,
      w.previous_secret_expires_at, d.attempts, d.created_at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.id = ?`),
    complete: db.prepare<{ id: string; owner: string; status: string; statusCode: number | null; error: string | null;
      next: number | null; deliveredAt: number | null }>(`UPDATE webhook_deliveries SET status = @status,
      attempts = attempts + 1, last_status_code = @statusCode, last_error = @error, next_attempt_at = @next,
      delivered_at = @deliveredAt, lease_owner = NULL, lease_until = NULL
      WHERE id = @id AND lease_owner = @owner AND status = 'pending'`),
    purge: db.prepare<[number]>(`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ?`),
    delivery: db.prepare<[string, string], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? AND id = ?`),
    deliveries: db.prepare<{ webhookId: string; afterId: string | null; limit: number }, DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = @webhookId
       AND (@afterId IS NULL OR rowid < (SELECT rowid FROM webhook_deliveries WHERE id = @afterId AND webhook_id = @webhookId))
       ORDER BY rowid DESC LIMIT @limit`),
  };

  const update = db.transaction((id: string, patch: Parameters<WebhookStore['updateWebhook']>[1]): WebhookRecord | undefined => {
    const row = q.byId.get(id);
    if (!row) return undefined;
    const next: WebhookRow = {
      ...row,
      url: patch.url ?? row.url,
      description: patch.description ?? row.description,
      event_types: patch.eventTypes ? JSON.stringify(patch.eventTypes) : row.event_types,
      enabled: patch.enabled === undefined ? row.enabled : Number(patch.enabled),
      secret: patch.secret ?? row.secret,
      previous_secret: patch.previousSecret === undefined ? row.previous_secret : patch.previousSecret,
      previous_secret_expires_at: patch.previousSecretExpiresAt === undefined
        ? row.previous_secret_expires_at : patch.previousSecretExpiresAt,
      updated_at: patch.updatedAt,
    };
    db.prepare(`UPDATE webhooks SET url = @url, description = @description, event_types = @event_types,
      enabled = @enabled, secret = @secret, previous_secret = @previous_secret,
      previous_secret_expires_at = @previous_secret_expires_at, updated_at = @updated_at WHERE id = @id`).run(next);
    return toWebhook(next);
  });

  const record = db.transaction((event: Parameters<WebhookStore['recordEvent']>[0]): number => {
    const targets = q.list.all(event.projectId).map(toWebhook)
      .filter((w) => (event.webhookId === undefined ? w.enabled && wants(w.eventTypes, event.type) : w.id === event.webhookId));
    for (const w of targets) {
      q.insertDelivery.run({
        id: newId('delivery'), webhookId: w.id, eventId: event.id, eventType: event.type, body: event.body, at: event.recordedAt,
      });
    }
    return targets.length;
  });

  // BEGIN IMMEDIATE: processes on one file take the write lock first, so two never lease one row
  const claim = db.transaction((c: Parameters<WebhookStore['claimDeliveries']>[0]) => {
    const ids = q.due.all({ now: c.nowMs, limit: c.limit, exclude: JSON.stringify(c.excludeWebhookIds), perWebhook: c.perWebhook })
      .map((r) => r.id);
    for (const id of ids) q.lease.run({ id, owner: c.owner, until: c.nowMs + c.leaseMs });
    return ids.map((id) => q.job.get(id)).filter((r): r is JobRow => r !== undefined).map((r) => toJob(r, c.nowMs));
  });

  return {
    async insertWebhook(w) {
      q.insert.run({
        id: w.id, projectId: w.projectId, url: w.url, description: w.description, eventTypes: JSON.stringify(w.eventTypes),
        enabled: Number(w.enabled), secret: w.secret, previousSecret: w.previousSecret,
        previousSecretExpiresAt: w.previousSecretExpiresAt, createdAt: w.createdAt, updatedAt: w.updatedAt,
      });
    },
    async listWebhooks(projectId) { return q.list.all(projectId).map(toWebhook); },
    async getWebhook(projectId, id) { const r = q.get.get(projectId, id); return r && toWebhook(r); },
    async updateWebhook(id, patch) { return update(id, patch); },
    async deleteWebhook(projectId, id) { return q.delete.run(projectId, id).changes === 1; },
    async countWebhooks(projectId) { return q.count.get(projectId) ?? 0; },

    // IMMEDIATE: the write lock before the read, so a process writing meanwhile makes this wait, not fail
    async recordEvent(event) { return record.immediate(event); },
    // the write lock only when something may be due: an idle worker's poll each second never waits
    // (its event loop blocked, up to busy_timeout) for another process's write, nor holds one up
    async claimDeliveries(c) { return q.anyDue.get({ now: c.nowMs }) === undefined ? [] : claim.immediate(c); },
    async completeDelivery(id, owner, o) {
      return q.complete.run({
        id, owner, status: o.delivered ? 'delivered' : o.nextAttemptAt === null ? 'failed' : 'pending',
        statusCode: o.statusCode, error: o.error, next: o.delivered ? null : o.nextAttemptAt,
        deliveredAt: o.delivered ? o.attemptedAt : null,
      }).changes === 1;
    },
    async getDelivery(webhookId, id) { const r = q.delivery.get(webhookId, id); return r && toDelivery(r); },
    async purgeDeliveries(beforeMs) { return q.purge.run(beforeMs).changes; },
    async listDeliveries(webhookId, page) {
      return q.deliveries.all({ webhookId, afterId: page.afterId ?? null, limit: page.limit }).map(toDelivery);
    },
  };
}
