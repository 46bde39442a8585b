import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { BusEvent, EventBus } from '../../ports.ts';
import { createRedisClient, reconnectDelay } from '../redis-client.ts';
import { createMemoryBus } from './memory.ts';

export interface RedisBusOptions {
  readonly channel?: string;
  readonly onHandlerError: (err: unknown) => void;
  /** Told of connection errors (never the URL, which may carry a password). */
  readonly onError: (err: Error) => void;
}

/** The Redis bus: `onResync` handlers run after the subscription was lost and restored (Redis restarted, network cut). */
export interface RedisBus extends EventBus {
  /** Resolves once the subscription is in place (startup waits for it). */
  ready(): Promise<void>;
}

const MAX_PENDING = 10_000;

/**
 * The event bus of a cluster: Redis publish/subscribe on one channel. Each event is delivered at
 * once to this process's subscribers and published for the others (a process ignores its own
 * events coming back). A publish that fails while Redis is unreachable is kept (up to 10 000) and
 * sent once the connection is back; subscribers that lost their connection are told to resync.
 */
export function createRedisBus(url: string, options: RedisBusOptions): RedisBus {
  const channel = options.channel ?? 'rtc:events';
  const origin = randomBytes(9).toString('base64url');
  const local = createMemoryBus(options.onHandlerError);
  const publisher = createRedisClient(url, options.onError);
  // ioredis's own resubscription after a reconnect is fire-and-forget (a failure there is an
  // unhandled rejection): subscribe on every `ready` here instead, and resync after each but the first
  const subscriber = new Redis(url, { retryStrategy: reconnectDelay, autoResubscribe: false });
  subscriber.on('error', options.onError);

  const resyncHandlers = new Set<() => void>();
  let subscribedOnce = false;
  let markSubscribed: () => void = () => {};
  const subscribed = new Promise<void>((resolve) => {
    markSubscribed = resolve;
  });
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(() => {
      if (!subscribedOnce) {
        subscribedOnce = true;
        markSubscribed();
        return;
      }
      for (const handler of resyncHandlers) {
        try {
          handler();
        } catch (err) {
          options.onHandlerError(err);
        }
      }
    }, options.onError);
  });
  subscriber.on('message', (_channel: string, message: string) => {
    let envelope: { origin: string; event: BusEvent };
    try {
      envelope = JSON.parse(message) as { origin: string; event: BusEvent };
    } catch (err) {
      // something else published on the channel: reported, never a crash of the process
      options.onHandlerError(err);
      return;
    }
    if (envelope.origin !== origin) void local.publish(envelope.event);
  });

  const pending: string[] = [];
  const flush = async (): Promise<void> => {
    while (pending.length > 0) {
      await publisher.publish(channel, pending[0]!);
      pending.shift();
    }
  };
  publisher.on('ready', () => {
    flush().catch(options.onError);
  });

  return {
    reach: 'deployment',
    async publish(event) {
      await local.publish(event);
      const message = JSON.stringify({ origin, event });
      if (pending.length === 0) {
        try {
          await publisher.publish(channel, message);
          return;
        } catch {
          // kept below and sent on reconnect
        }
      }
      if (pending.length >= MAX_PENDING) pending.shift();
      pending.push(message);
    },
    subscribe: (handler) => local.subscribe(handler),
    ready: () => subscribed,
    onResync(handler) {
      resyncHandlers.add(handler);
      return () => resyncHandlers.delete(handler);
    },
    async close() {
      await local.close();
      resyncHandlers.clear();
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
