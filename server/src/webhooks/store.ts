import type { PageRequest, ProjectEventType } from '../core/ports.ts';

/** A webhook endpoint of a project (docs/reference/webhooks.md). */
export interface WebhookRecord {
  readonly id: string;
  readonly projectId: string;
  readonly url: string;
  readonly description: string;
  /** Types it receives; empty: every type. */
  readonly eventTypes: readonly ProjectEventType[];
  readonly enabled: boolean;
  /** The signing secret, kept as-is: the platform signs with it (docs/decisions/webhooks.md, "Webhook secrets"). */
  readonly secret: string;
  /** The secret before the last rotation, still signed with until `previousSecretExpiresAt` (ms). */
  readonly previousSecret: string | null;
  readonly previousSecretExpiresAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface WebhookPatch {
  readonly url?: string;
  readonly description?: string;
  readonly eventTypes?: readonly ProjectEventType[];
  readonly enabled?: boolean;
  readonly secret?: string;
  readonly previousSecret?: string | null;
  readonly previousSecretExpiresAt?: number | null;
  readonly updatedAt: number;
}

/** An event as kept in the outbox: `body` is the exact JSON every endpoint receives. */
export interface OutboxEvent {
  readonly id: string;
  readonly projectId: string;
  readonly type: ProjectEventType;
  readonly body: string;
  /** Milliseconds since the epoch: the first attempt is due then. */
  readonly recordedAt: number;
  /** Only this endpoint (the test event), enabled or not; undefined: every enabled endpoint that wants the type. */
  readonly webhookId?: string | undefined;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint; times in milliseconds since the epoch. */
export interface DeliveryRecord {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly eventType: ProjectEventType;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  /** Null once delivered or failed. */
  readonly nextAttemptAt: number | null;
  readonly deliveredAt: number | null;
  readonly createdAt: number;
}

/** A claimed delivery: what the worker needs to send it. */
export interface DeliveryJob {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly url: string;
  readonly body: string;
  readonly secrets: readonly string[];
  readonly attempts: number;
  readonly createdAt: number;
}

export interface DeliveryClaim {
  readonly nowMs: number;
  readonly leaseMs: number;
  readonly owner: string;
  readonly limit: number;
  /** Endpoints that already have as many deliveries in flight as they may. */
  readonly excludeWebhookIds: readonly string[];
  /** At most this many deliveries of one endpoint in this claim (the oldest due), so one endpoint cannot take every slot. */
  readonly perWebhook: number;
}

/** The outcome of one attempt: `nextAttemptAt` set retries, `delivered` ends, neither: failed for good. */
export interface DeliveryOutcome {
  readonly attemptedAt: number;
  readonly delivered: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly nextAttemptAt: number | null;
}

/** A project's webhook endpoints. */
export interface WebhookEndpointStore {
  insertWebhook(webhook: WebhookRecord): Promise<void>;
  listWebhooks(projectId: string): Promise<WebhookRecord[]>;
  getWebhook(projectId: string, id: string): Promise<WebhookRecord | undefined>;
  updateWebhook(id: string, patch: WebhookPatch): Promise<WebhookRecord | undefined>;
  /** Removes the endpoint and every delivery of it; false when it did not exist. */
  deleteWebhook(projectId: string, id: string): Promise<boolean>;
  countWebhooks(projectId: string): Promise<number>;
}

/** The outbox: one delivery per event and endpoint, leased to one sender at a time. */
export interface WebhookOutboxStore {
  /** One delivery per endpoint that wants the event, in one transaction; how many. */
  recordEvent(event: OutboxEvent): Promise<number>;
  /**
   * Leases up to `limit` due pending deliveries for `leaseMs`: no other claim gets them until the
   * lease ends (several processes never send one delivery at the same time).
   */
  claimDeliveries(claim: DeliveryClaim): Promise<DeliveryJob[]>;
  /** Records an attempt and ends the lease; false when the lease was lost (another owner took it). */
  completeDelivery(id: string, owner: string, outcome: DeliveryOutcome): Promise<boolean>;
  getDelivery(webhookId: string, id: string): Promise<DeliveryRecord | undefined>;
  /** An endpoint's deliveries, newest first. */
  listDeliveries(webhookId: string, page: PageRequest): Promise<DeliveryRecord[]>;
  /** Drops delivered and failed deliveries recorded before `beforeMs` (pending ones stay); how many. */
  purgeDeliveries(beforeMs: number): Promise<number>;
}

/** Webhook endpoints and the outbox of their deliveries, in the same store as the rest. */
export interface WebhookStore extends WebhookEndpointStore, WebhookOutboxStore {}
