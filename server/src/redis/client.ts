import { Redis } from 'ioredis';

/** How long one command may wait for Redis before the caller is told it is unavailable. */
const COMMAND_TIMEOUT_MS = 1000;
const MAX_RECONNECT_DELAY_MS = 2000;

/** Reconnect after 100 ms, 200 ms, … up to 2 s between attempts, for ever. */
export const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS);

/**
 * A Redis connection for request paths: commands fail at once while it is disconnected (no offline
 * queue, no retries) so a request is refused rather than held, and it reconnects in the
 * background with a capped backoff. `onError` is told of connection errors (never the URL, which
 * may carry a password).
 */
export function createRedisClient(url: string, onError: (err: Error) => void): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
    lazyConnect: false,
  });
  client.on('error', onError);
  return client;
}

/** Resolves once the client is connected (startup waits for it; later outages are tolerated). */
export function redisReady(client: Redis, timeoutMs = 10_000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}
