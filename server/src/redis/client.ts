import { Redis, type RedisOptions } from 'ioredis';

/** How long one command may wait for Redis before the caller is told it is unavailable. */
const COMMAND_TIMEOUT_MS = 1000;
const MAX_RECONNECT_DELAY_MS = 2000;

/** Reconnect after 100 ms, 200 ms, … up to 2 s between attempts, for ever. */
export const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS);

/** One Redis sentinel's address. */
export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Where the cluster's Redis is (docs/operations/configuration.md, "Redis"): one server by URL
 * (`REDIS_URL`), or the master that Redis Sentinel names (`REDIS_SENTINELS`, `REDIS_SENTINEL_MASTER`),
 * followed to the replica promoted when it fails.
 */
export type RedisTarget =
  | { readonly url: string }
  | {
    readonly sentinels: readonly SentinelAddress[];
    /** The master group's name in the sentinels' configuration. */
    readonly masterName: string;
    /** The password of the master and its replicas (`requirepass`). */
    readonly password?: string | undefined;
    /** The sentinels' own password (`requirepass` in sentinel.conf). */
    readonly sentinelPassword?: string | undefined;
  };

/**
 * A connection that lands on a server that is now a replica (a demoted master after a failover)
 * gets READONLY for a write: that connection is dropped and made again, which asks the sentinels
 * for the master anew. The failed command is not resent: its caller was already told it failed.
 */
export const reconnectOnReadOnly = (err: Error): boolean => err.message.startsWith('READONLY');

/**
 * The ioredis options of a connection to `target`, on top of `extra`. Through Sentinel, every
 * connection asks the sentinels for the master on each (re)connect, checks that the server it
 * reached calls itself master, and listens for the sentinels' `+switch-master`, on which it drops
 * its connection and reconnects to the promoted replica even when the old master never closed it.
 */
export function redisOptions(target: RedisTarget, extra: RedisOptions): RedisOptions {
  const common: RedisOptions = { retryStrategy: reconnectDelay, reconnectOnError: reconnectOnReadOnly, ...extra };
  if ('url' in target) return common;
  return {
    ...common,
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.masterName,
    role: 'master',
    password: target.password,
    sentinelPassword: target.sentinelPassword,
    failoverDetector: true,
    // every sentinel unreachable: ask them again with the same backoff as a lost connection
    sentinelRetryStrategy: reconnectDelay,
    sentinelReconnectStrategy: reconnectDelay,
  };
}

/**
 * ioredis attaches the failed command and its arguments to an error (`command.args`): for a refused
 * AUTH or HELLO those are the password. They are dropped before anyone can log the error.
 */
export function withoutArguments(err: Error): Error {
  const command = (err as Error & { command?: { name?: unknown } }).command;
  if (command !== undefined) Object.assign(err, { command: { name: command.name } });
  return err;
}

/**
 * A connection to `target` (a URL string is a `{ url }`) with `extra` options; `onError` is told of
 * its connection errors, without the arguments of the command that failed.
 */
export function connectRedis(target: RedisTarget | string, extra: RedisOptions, onError: (err: Error) => void): Redis {
  const resolved = typeof target === 'string' ? { url: target } : target;
  const options = redisOptions(resolved, extra);
  const client = 'url' in resolved ? new Redis(resolved.url, options) : new Redis(options);
  client.on('error', (err: Error) => onError(withoutArguments(err)));
  keepConnecting(client);
  return client;
}

/**
 * ioredis gives a connection up for good (status `end`) when its reconnection fails outright, as
 * when the sentinels' `+switch-master` interrupts a reconnection already under way (a failover
 * seen on a loaded machine). Such a connection is connected again, with the same backoff, until
 * the platform itself disconnects it.
 */
function keepConnecting(client: Redis): void {
  let closedHere = false;
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false): void => {
    if (!reconnect) closedHere = true;
    disconnect(reconnect);
  };
  let attempt = 0;
  client.on('ready', () => {
    attempt = 0;
  });
  // Through Sentinel, a connection attempt the platform abandoned can still connect a moment later,
  // and ioredis then opens its failover detector's connections to the sentinels, which reconnect for
  // ever: the first sign of them on a closed client closes them (they say so when they reconnect,
  // or once they are subscribed).
  const closeLateDetector = (): void => {
    if (closedHere) (client as unknown as { connector: { disconnect(): void } }).connector.disconnect();
  };
  client.on('sentinelReconnecting', closeLateDetector);
  client.on('failoverSubscribed', closeLateDetector);
  client.on('end', () => {
    if (closedHere) return;
    attempt += 1;
    setTimeout(() => {
      if (closedHere || client.status !== 'end') return;
      // a failure ends in `end` again, which comes back here
      client.connect().catch(() => {});
    }, reconnectDelay(attempt)).unref();
  });
}

/**
 * A Redis connection for request paths: commands fail at once while it is disconnected (no offline
 * queue, no retries) so a request is refused rather than held, and it reconnects in the
 * background with a capped backoff. `onError` is told of connection errors (never the URL or a
 * password).
 */
export function createRedisClient(target: RedisTarget | string, onError: (err: Error) => void): Redis {
  return connectRedis(target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    lazyConnect: false,
  }, onError);
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
