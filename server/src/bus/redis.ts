import { randomBytes } from 'node:crypto';
import type { EventBus } from '../core/ports.ts';
import { connectRedis, createRedisClient, type RedisTarget } from '../redis/client.ts';
import { decodeEnvelope, encodeEnvelope } from './envelope.ts';
import { createMemoryBus } from './memory.ts';

export interface RedisBusOptions {
  readonly channel?: string;
  readonly onHandlerError: (err: unknown) => void;
  /** Told of connection errors (never the URL, which may carry a password). */
  readonly onError: (err: Error) => void;
}

/**
 * The Redis bus: `onResync` handlers run every 250 ms while the subscription is lost (Redis
 * stopped, network cut) and once more when it is restored.
 */
export interface RedisBus extends EventBus {
  onResync(handler: (state: ResyncState) => void): () => void;
  /** Resolves once the subscription is in place (startup waits for it). */
  ready(): Promise<void>;
  /** Whether the subscription is in place now (false while Redis is unreachable). */
  live(): boolean;
}

const MAX_PENDING = 10_000;
/** How often subscribers are told to re-read the store while the bus is cut off from Redis. */
export const RESYNC_WHILE_CUT_OFF_MS = 250;

/** How long a subscription asked for may go unanswered, on a connection that is up, before it is asked for again. */
const RESUBSCRIBE_AFTER_MS = 2000;

/** Why subscribers re-read the store: the bus is cut off from Redis (repeated), or it is back (once). */
export type ResyncState = 'cut-off' | 'restored';

/**
 * The event bus of a cluster: Redis publish/subscribe on one channel. Each event is delivered at
 * once to this process's subscribers and published for the others (a process ignores its own
 * events coming back). A publish that fails while Redis is unreachable is kept (up to 10 000) and
 * sent once the connection is back; subscribers that lost their connection are told to resync.
 */
export function createRedisBus(target: RedisTarget | string, options: RedisBusOptions): RedisBus {
  const channel = options.channel ?? 'rtc:events';
  const origin = randomBytes(9).toString('base64url');
  const local = createMemoryBus(options.onHandlerError);
  const publisher = createRedisClient(target, options.onError);
  // ioredis's own resubscription after a reconnect is fire-and-forget (a failure there is an
  // unhandled rejection): subscribe on every `ready` here instead, and
  // resync after each but the first. Through Sentinel a failover reaches here the same way: the
  // connection to the old master closes (it died, or `+switch-master` made ioredis drop it) and
  // `ready` comes from the promoted replica
  const subscriber = connectRedis(target, { autoResubscribe: false }, options.onError);

  const resyncHandlers = new Set<(state: ResyncState) => void>();
  const resync = (state: ResyncState): void => {
    for (const handler of resyncHandlers) {
      try {
        handler(state);
      } catch (err) {
        options.onHandlerError(err);
      }
    }
  };
  let subscribedOnce = false;
  let closed = false;
  let markSubscribed: () => void = () => {};
  const subscribed = new Promise<void>((resolve) => {
    markSubscribed = resolve;
  });
  // while the subscription is lost, subscribers re-read the store on every tick, so a revocation
  // made meanwhile (durable in the store first) still cuts its session within the second
  let cutOff: NodeJS.Timeout | undefined;
  // when the subscription in flight was asked for (performance.now()); undefined: none in flight
  let subscribingSince: number | undefined;
  const subscribe = (): void => {
    const since = performance.now();
    subscribingSince = since;
    const settled = (): void => {
      if (subscribingSince === since) subscribingSince = undefined;
    };
    subscriber.subscribe(channel).then(() => {
      settled();
      if (!subscribedOnce) {
        subscribedOnce = true;
        markSubscribed();
        return;
      }
      if (cutOff === undefined) return;
      clearInterval(cutOff);
      cutOff = undefined;
      resync('restored');
    }, (err: unknown) => {
      settled();
      options.onError(err instanceof Error ? err : new Error(String(err)));
    });
  };
  subscriber.on('close', () => {
    if (!subscribedOnce || cutOff || closed) return;
    cutOff = setInterval(() => {
      resync('cut-off');
      // a subscription that failed, or got no answer, on a connection that is up again (a
      // failover's repeated drops can leave no `ready` after it) is asked for again here
      const stale = subscribingSince !== undefined && performance.now() - subscribingSince > RESUBSCRIBE_AFTER_MS;
      if (subscriber.status === 'ready' && (subscribingSince === undefined || stale)) subscribe();
    }, RESYNC_WHILE_CUT_OFF_MS);
    cutOff.unref();
  });
  subscriber.on('ready', subscribe);
  subscriber.on('message', (_channel: string, message: string) => {
    const envelope = decodeEnvelope(message);
    if (!envelope) {
      // something else published on the channel: reported, never applied, never a crash
      options.onHandlerError(new Error('a message on the event channel is not a platform event; ignored'));
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
      const message = encodeEnvelope(origin, event);
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
    live: () => subscribedOnce && cutOff === undefined && !closed,
    onResync(handler) {
      resyncHandlers.add(handler);
      return () => resyncHandlers.delete(handler);
    },
    async close() {
      closed = true;
      clearInterval(cutOff);
      await local.close();
      resyncHandlers.clear();
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
