import type { ProjectEventType } from '../core/ports.ts';
import type { DeliveryRecord, DeliveryStatus, WebhookRecord } from './store.ts';

/**
 * The webhook tables as both SQL stores read them. Times of endpoints are seconds, like the other
 * records; times of deliveries milliseconds (retries can be due within a second). `event_types`
 * is JSON text in both stores; `enabled` an integer in SQLite and a boolean in PostgreSQL.
 */

export const WEBHOOK_COLUMNS = `id, project_id, url, description, event_types, enabled, secret, previous_secret,
  previous_secret_expires_at, created_at, updated_at`;

export interface WebhookRow {
  id: string; project_id: string; url: string; description: string; event_types: string; enabled: number | boolean;
  secret: string; previous_secret: string | null; previous_secret_expires_at: number | null;
  created_at: number; updated_at: number;
}

export const DELIVERY_COLUMNS = `id, webhook_id, event_id, event_type, status, attempts, last_status_code, last_error,
  next_attempt_at, delivered_at, created_at`;

export interface DeliveryRow {
  id: string; webhook_id: string; event_id: string; event_type: ProjectEventType; status: DeliveryStatus;
  attempts: number; last_status_code: number | null; last_error: string | null; next_attempt_at: number | null;
  delivered_at: number | null; created_at: number;
}

/** A claimed row joined with its endpoint. */
export interface JobRow {
  id: string; webhook_id: string; event_id: string; url: string; body: string; secret: string;
  previous_secret: string | null; previous_secret_expires_at: number | null; attempts: number; created_at: number;
}

export const toWebhook = (r: WebhookRow): WebhookRecord => ({
  id: r.id, projectId: r.project_id, url: r.url, description: r.description,
  eventTypes: JSON.parse(r.event_types) as ProjectEventType[], enabled: r.enabled === true || r.enabled === 1,
  secret: r.secret, previousSecret: r.previous_secret, previousSecretExpiresAt: r.previous_secret_expires_at,
  createdAt: r.created_at, updatedAt: r.updated_at,
});

export const toDelivery = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id, webhookId: r.webhook_id, eventId: r.event_id, eventType: r.event_type, status: r.status,
  attempts: r.attempts, lastStatusCode: r.last_status_code, lastError: r.last_error,
  nextAttemptAt: r.next_attempt_at, deliveredAt: r.delivered_at, createdAt: r.created_at,
});

/** The secrets to sign with at `nowMs`: the current one, and the previous one during its grace period. */
export const toJob = (r: JobRow, nowMs: number) => ({
  id: r.id, webhookId: r.webhook_id, eventId: r.event_id, url: r.url, body: r.body, attempts: r.attempts,
  createdAt: r.created_at,
  secrets: r.previous_secret !== null && r.previous_secret_expires_at !== null && r.previous_secret_expires_at > nowMs
    ? [r.secret, r.previous_secret] : [r.secret],
});

/** Whether an endpoint wants an event type (an empty filter wants every type). */
export const wants = (types: readonly ProjectEventType[], type: ProjectEventType): boolean =>
  types.length === 0 || types.includes(type);
