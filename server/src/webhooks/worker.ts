import type { Logger } from 'pino';
import { createHttpsSender } from './https-sender.ts';
import type { Config } from '../config.ts';
import { startWebhookDelivery, type DeliveryResult } from './delivery.ts';
import type { ServiceDeps } from '../core/deps.ts';
import type { WebhookStore } from './store.ts';

/** What the worker needs of the process's services: the outbox, and word of each event this process records. */
export interface WebhookWorkerDeps extends ServiceDeps<WebhookStore> {
  /** `listener` runs when this process recorded a webhook event; returns the unsubscribe. */
  onEventRecorded(listener: () => void): () => void;
}

const HOUR_MS = 3_600_000;

/** What a lease allows beyond the send's own timeout: recording the attempt takes milliseconds. */
const LEASE_MARGIN_MS = 5000;

/**
 * How long a process holds a delivery it took (docs/reference/webhooks.md, "Answers, retries and
 * the delivery log"): the send's timeout and a margin. A process killed mid-send leaves its
 * deliveries to the others once it ends: 15 s with the default 10 s timeout.
 */
export function deliveryLeaseMs(timeoutMs: number): number {
  return timeoutMs + LEASE_MARGIN_MS;
}

export interface WebhookWorkerOptions {
  /** Every attempt's result: where a delivery counter hooks in. */
  readonly onDelivery?: ((result: DeliveryResult) => void) | undefined;
}

/**
 * The webhook delivery worker of a process that serves the api role (docs/reference/webhooks.md,
 * "Delivery"): woken by the events this process records, and polling for the others'.
 */
export function startWebhookWorker(config: Config, deps: WebhookWorkerDeps, logger: Logger, options: WebhookWorkerOptions = {}): { stop(): Promise<void> } {
  const { retryBaseMs, timeoutMs, allowPrivate, ca } = config.webhooks;
  const sender = createHttpsSender({ timeoutMs, allowPrivate, ca });
  const worker = startWebhookDelivery({
    store: deps.store, clock: deps.clock, send: sender,
    policy: { baseMs: retryBaseMs, maxDelayMs: Math.min(HOUR_MS, retryBaseMs * 720), giveUpAfterMs: 24 * HOUR_MS },
    leaseMs: deliveryLeaseMs(timeoutMs),
    // polls at least as often as retries fall due (short in tests), at most once a second
    pollIntervalMs: Math.min(1000, Math.max(50, retryBaseMs)),
    onError: (err) => logger.warn({ err }, 'webhook delivery failed to reach the store'),
    onDelivery: (result) => {
      // ids and the outcome only: never the URL (its query may hold a token) nor a secret
      logger.debug({ delivery: result.deliveryId, webhook: result.webhookId, event: result.eventId, outcome: result.outcome,
        status: result.statusCode }, 'webhook attempt');
      options.onDelivery?.(result);
    },
  });
  const unsubscribe = deps.onEventRecorded(worker.wake);
  return {
    async stop() {
      unsubscribe();
      await worker.stop();
      sender.close();
    },
  };
}
