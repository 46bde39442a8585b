import type { WebhookDelivery } from '@rtc/protocol';
import { paginate, type PageQuery } from '../core/cursor.ts';
import { ApiError, notFound } from '../core/errors.ts';
import { newId, newWebhookSecret } from '../core/ids.ts';
import { webhookUrlProblem } from './webhook.ts';
import type { Clock, ProjectEventInput, ProjectEvents, ProjectEventType } from '../core/ports.ts';
import type { DeliveryRecord, OutboxEvent, WebhookRecord, WebhookStore } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';

export const MAX_WEBHOOKS_PER_PROJECT = 10;
/** How long the secret before a rotation still signs deliveries (both signatures are sent). */
export const SECRET_GRACE_MS = 24 * 3600 * 1000;

export interface WebhookCreate {
  readonly url: string;
  readonly event_types?: readonly ProjectEventType[] | undefined;
  readonly description?: string | undefined;
}

export interface WebhookUpdate {
  readonly url?: string | undefined;
  readonly event_types?: readonly ProjectEventType[] | undefined;
  readonly description?: string | undefined;
  readonly enabled?: boolean | undefined;
}

export interface WebhookView {
  readonly id: string;
  readonly project_id: string;
  readonly url: string;
  readonly description: string;
  readonly event_types: readonly ProjectEventType[];
  readonly enabled: boolean;
  readonly created_at: number;
  readonly updated_at: number;
  /** Until when (seconds) the secret before the last rotation still signs; null outside a grace period. */
  readonly previous_secret_expires_at: number | null;
}

/** An endpoint as shown once, at creation or rotation: with its signing secret. */
export interface WebhookWithSecret extends WebhookView {
  readonly secret: string;
}

/** A delivery as the API shows it: the wire's shape, which clients read from @rtc/protocol too. */
export type DeliveryView = WebhookDelivery;

const toSec = (ms: number | null): number | null => (ms === null ? null : Math.ceil(ms / 1000));

export const webhookView = (w: WebhookRecord, nowMs: number): WebhookView => ({
  id: w.id, project_id: w.projectId, url: w.url, description: w.description, event_types: w.eventTypes, enabled: w.enabled,
  created_at: w.createdAt, updated_at: w.updatedAt,
  previous_secret_expires_at: w.previousSecretExpiresAt !== null && w.previousSecretExpiresAt > nowMs
    ? toSec(w.previousSecretExpiresAt) : null,
});

const deliveryView = (d: DeliveryRecord): DeliveryView => ({
  id: d.id, event_id: d.eventId, event_type: d.eventType, status: d.status, attempts: d.attempts,
  last_status_code: d.lastStatusCode, last_error: d.lastError, next_attempt_at: toSec(d.nextAttemptAt),
  delivered_at: d.deliveredAt === null ? null : Math.floor(d.deliveredAt / 1000), created_at: Math.floor(d.createdAt / 1000),
});

/** The exact JSON an endpoint receives (docs/reference/webhooks.md, "Payload"). */
export function outboxEvent(input: ProjectEventInput, recordedAtMs: number, webhookId?: string): OutboxEvent {
  const id = newId('event');
  const body = JSON.stringify({ id, type: input.type, project_id: input.projectId, occurred_at: input.occurredAt, data: input.data });
  return { id, projectId: input.projectId, type: input.type, body, recordedAt: recordedAtMs, webhookId };
}

/**
 * The durable `ProjectEvents` of a deployment: each event is written into the outbox, one delivery
 * per endpoint that wants it, before `record` resolves; `onRecorded` wakes this process's worker.
 */
export function createProjectEvents(store: WebhookStore, clock: Clock, onRecorded?: () => void): ProjectEvents {
  return {
    async record(input) {
      if ((await store.recordEvent(outboxEvent(input, clock.nowMs()))) > 0) onRecorded?.();
    },
  };
}

async function checkUrl(deps: ServiceDeps<WebhookStore & ProjectStore>, url: string): Promise<void> {
  const problem = webhookUrlProblem(url) ?? await deps.webhookTargets?.problem(url);
  if (problem) throw new ApiError('invalid_request', problem);
}

export async function getOwnWebhook(deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string, id: string): Promise<WebhookRecord> {
  await getOwnProject(deps, accountId, projectId);
  const webhook = await deps.store.getWebhook(projectId, id);
  if (!webhook) throw notFound('webhook');
  return webhook;
}

export async function createWebhook(deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string, body: WebhookCreate): Promise<WebhookWithSecret> {
  const project = await getOwnProject(deps, accountId, projectId);
  if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
  if ((await deps.store.countWebhooks(projectId)) >= MAX_WEBHOOKS_PER_PROJECT) {
    throw new ApiError('conflict', `a project may hold at most ${MAX_WEBHOOKS_PER_PROJECT} webhook endpoints; delete one to make room`);
  }
  await checkUrl(deps, body.url);
  const now = nowSec(deps.clock);
  const record: WebhookRecord = {
    id: newId('webhook'), projectId, url: body.url, description: body.description ?? '',
    eventTypes: [...new Set(body.event_types ?? [])], enabled: true, secret: newWebhookSecret(),
    previousSecret: null, previousSecretExpiresAt: null, createdAt: now, updatedAt: now,
  };
  await deps.store.insertWebhook(record);
  return { ...webhookView(record, deps.clock.nowMs()), secret: record.secret };
}

export async function listWebhooks(deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string): Promise<WebhookView[]> {
  await getOwnProject(deps, accountId, projectId);
  const now = deps.clock.nowMs();
  return (await deps.store.listWebhooks(projectId)).map((w) => webhookView(w, now));
}

export async function updateWebhook(
  deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string, id: string, body: WebhookUpdate,
): Promise<WebhookView> {
  await getOwnWebhook(deps, accountId, projectId, id);
  if (body.url !== undefined) await checkUrl(deps, body.url);
  const updated = await deps.store.updateWebhook(id, {
    ...(body.url !== undefined && { url: body.url }),
    ...(body.description !== undefined && { description: body.description }),
    ...(body.event_types !== undefined && { eventTypes: [...new Set(body.event_types)] }),
    ...(body.enabled !== undefined && { enabled: body.enabled }),
    updatedAt: nowSec(deps.clock),
  });
  if (!updated) throw notFound('webhook');
  return webhookView(updated, deps.clock.nowMs());
}

/** Deleting drops the endpoint's deliveries too, pending or not. */
export async function deleteWebhook(deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string, id: string): Promise<void> {
  await getOwnProject(deps, accountId, projectId);
  if (!(await deps.store.deleteWebhook(projectId, id))) throw notFound('webhook');
}

/** A new secret; deliveries carry signatures with both for `SECRET_GRACE_MS` (docs/reference/webhooks.md, "Rotating the secret"). */
export async function rotateWebhookSecret(deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string, id: string): Promise<WebhookWithSecret> {
  const webhook = await getOwnWebhook(deps, accountId, projectId, id);
  const secret = newWebhookSecret();
  const updated = await deps.store.updateWebhook(id, {
    secret, previousSecret: webhook.secret, previousSecretExpiresAt: deps.clock.nowMs() + SECRET_GRACE_MS,
    updatedAt: nowSec(deps.clock),
  });
  if (!updated) throw notFound('webhook');
  return { ...webhookView(updated, deps.clock.nowMs()), secret };
}

/** Records a `webhook.test` event for this endpoint only (enabled or not), delivered through the outbox like any other. */
export async function sendTestEvent(deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string, id: string): Promise<{ event_id: string }> {
  const webhook = await getOwnWebhook(deps, accountId, projectId, id);
  const event = outboxEvent({ projectId, type: 'webhook.test', occurredAt: nowSec(deps.clock), data: { webhook_id: webhook.id } },
    deps.clock.nowMs(), webhook.id);
  await deps.store.recordEvent(event);
  deps.webhookWake?.();
  return { event_id: event.id };
}

export async function listDeliveries(
  deps: ServiceDeps<WebhookStore & ProjectStore>, accountId: string, projectId: string, id: string, query: PageQuery,
): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
  await getOwnWebhook(deps, accountId, projectId, id);
  const page = await paginate({ listing: 'webhook-deliveries', filters: { webhook: id } }, query, {
    has: async (deliveryId) => (await deps.store.getDelivery(id, deliveryId)) !== undefined,
    list: (afterId, limit) => deps.store.listDeliveries(id, { limit, afterId }),
  });
  return { deliveries: page.items.map(deliveryView), next_cursor: page.nextCursor };
}
