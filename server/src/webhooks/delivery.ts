import { WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from '@rtc/protocol';
import { newOpaqueId } from '../core/ids.ts';
import { nextAttemptAt, signatureHeader, type RetryPolicy } from './webhook.ts';
import type { ServiceDeps } from '../core/deps.ts';
import type { DeliveryJob, WebhookStore } from './store.ts';

/** One POST of a delivery; the sender enforces its own timeout. */
export interface WebhookPost {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Aborted when the worker stops. */
  readonly signal: AbortSignal;
}

/** A status code when the receiver answered, or why it could not be reached (never quoting a secret). */
export type WebhookSendResult = { readonly statusCode: number; readonly error?: undefined } | { readonly statusCode?: undefined; readonly error: string };

export type WebhookSender = (post: WebhookPost) => Promise<WebhookSendResult>;

/** One attempt's result, for counters (the place where delivery metrics hook in). */
export interface DeliveryResult {
  readonly deliveryId: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly outcome: 'delivered' | 'retry' | 'failed';
  readonly statusCode: number | null;
  readonly durationMs: number;
}

export interface TimerFunctions {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** What the worker needs: the store and clock of the service's dependencies, and how to send and retry. */
export interface WebhookDeliveryOptions extends Pick<ServiceDeps<WebhookStore>, 'store' | 'clock'> {
  readonly send: WebhookSender;
  readonly policy: RetryPolicy;
  /** Deliveries in flight at most (default 8). */
  readonly concurrency?: number | undefined;
  /** Deliveries in flight to one endpoint at most (default 2): a slow endpoint never takes every slot. */
  readonly perEndpoint?: number | undefined;
  /** Between two looks for due deliveries when nothing wakes the worker (default 1 s). */
  readonly pollIntervalMs?: number | undefined;
  /** How long a claim holds a delivery; longer than the sender's timeout (default 30 s). */
  readonly leaseMs?: number | undefined;
  readonly random?: (() => number) | undefined;
  readonly timers?: TimerFunctions | undefined;
  readonly onDelivery?: ((result: DeliveryResult) => void) | undefined;
  /** The store failed; the worker carries on at the next poll. */
  readonly onError?: ((err: unknown) => void) | undefined;
}

export interface WebhookDelivery {
  /** Looks for due deliveries now (an event was recorded). */
  wake(): void;
  /** Stops claiming, aborts attempts in flight (each is retried at once by the next process) and waits for them. */
  stop(): Promise<void>;
}

const NODE_TIMERS: TimerFunctions = {
  setTimeout: (callback, ms) => {
    const t = setTimeout(callback, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The delivery worker of an api process (docs/reference/webhooks.md, "Delivery"): claims due
 * deliveries under a lease, POSTs each signed, and records the outcome. At least once: a process
 * that ends between a POST and its record leaves the delivery to be sent again when the lease ends.
 */
export function startWebhookDelivery(options: WebhookDeliveryOptions): WebhookDelivery {
  const concurrency = options.concurrency ?? 8;
  const perEndpoint = options.perEndpoint ?? 2;
  const pollMs = options.pollIntervalMs ?? 1000;
  const leaseMs = options.leaseMs ?? 30_000;
  const random = options.random ?? Math.random;
  const timers = options.timers ?? NODE_TIMERS;
  const owner = newOpaqueId();
  const abort = new AbortController();
  const inFlight = new Map<string, number>();
  const attempts = new Set<Promise<void>>();
  let total = 0;
  let stopped = false;
  let ticking = false;
  let again = false;
  let timer: unknown;

  const schedule = (): void => {
    if (stopped) return;
    timers.clearTimeout(timer);
    timer = timers.setTimeout(() => tick(), pollMs);
  };

  const tick = (): void => {
    if (stopped) return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    void claimAndSend().catch((err: unknown) => options.onError?.(err)).finally(() => {
      ticking = false;
      if (again) {
        again = false;
        tick();
      } else {
        schedule();
      }
    });
  };

  const claimAndSend = async (): Promise<void> => {
    const free = concurrency - total;
    if (free <= 0) return;
    const exclude = [...inFlight].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
    // one more per endpoint and claim: an endpoint never has more than `perEndpoint` in flight
    const jobs = await options.store.claimDeliveries({
      nowMs: options.clock.nowMs(), leaseMs, owner, limit: free, excludeWebhookIds: exclude, perWebhook: 1,
    });
    for (const job of jobs) {
      total += 1;
      inFlight.set(job.webhookId, (inFlight.get(job.webhookId) ?? 0) + 1);
      const p = attempt(job).catch((err: unknown) => options.onError?.(err)).finally(() => {
        total -= 1;
        const n = (inFlight.get(job.webhookId) ?? 1) - 1;
        if (n === 0) inFlight.delete(job.webhookId);
        else inFlight.set(job.webhookId, n);
        attempts.delete(p);
        tick();
      });
      attempts.add(p);
    }
    // more may be due: claim again at once (an empty claim waits for the next poll or wake)
    if (jobs.length > 0) again = true;
  };

  const attempt = async (job: DeliveryJob): Promise<void> => {
    const startedAt = options.clock.nowMs();
    const timestamp = Math.floor(startedAt / 1000);
    const result = await options.send({
      url: job.url,
      body: job.body,
      headers: {
        [WEBHOOK_HEADERS.id]: job.eventId,
        [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [WEBHOOK_HEADERS.signature]: signatureHeader(job.secrets, timestamp, job.body),
        'user-agent': WEBHOOK_USER_AGENT,
      },
      signal: abort.signal,
    }).catch((): WebhookSendResult => ({ error: 'the request could not be sent' }));
    const now = options.clock.nowMs();
    const delivered = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    // an attempt cut short by a stop is retried at once by whichever process claims it next
    const next = delivered ? null : abort.signal.aborted ? now : nextAttemptAt(options.policy, job.attempts + 1, job.createdAt, now, random());
    await options.store.completeDelivery(job.id, owner, {
      attemptedAt: now, delivered, statusCode: result.statusCode ?? null,
      error: delivered ? null : result.error ?? `answered ${result.statusCode}`, nextAttemptAt: next,
    });
    options.onDelivery?.({
      deliveryId: job.id, webhookId: job.webhookId, eventId: job.eventId,
      outcome: delivered ? 'delivered' : next === null ? 'failed' : 'retry', statusCode: result.statusCode ?? null,
      durationMs: now - startedAt,
    });
  };

  tick();
  return {
    wake: tick,
    async stop() {
      stopped = true;
      timers.clearTimeout(timer);
      abort.abort();
      while (attempts.size > 0 || ticking) {
        await Promise.allSettled([...attempts]);
        if (ticking) await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
