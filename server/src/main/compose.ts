import type { Store } from '../store/port.ts';
import { createMemoryBus } from '../bus/memory.ts';
import { createSqliteBus } from '../bus/sqlite.ts';
import { createWebhookTargets } from '../webhooks/https-sender.ts';
import { createMemoryLimiter } from '../limiter/memory.ts';
import { createSqliteMediaNodeDirectory } from '../placement/sqlite.ts';
import type { RedisTarget } from '../redis/client.ts';
import type { Config, RoleName } from '../config.ts';
import { createAddressSet } from '../core/address.ts';
import type { MediaNodeDirectory, PlacementPolicy } from '../core/media-placement.ts';
import type { KeyRing, LiveKeyRing } from '../core/keyring.ts';
import { createPasswordHasher, type PasswordHasher } from '../core/password.ts';
import type { HttpContext } from '../http/context.ts';
import type { Clock, CredentialVersions, EventBus, Limiter, TokenAdmission } from '../core/ports.ts';
import type { ServiceDeps } from '../core/deps.ts';
import { TokenUsage } from '../tokens/usage.ts';
import { createProjectEvents } from '../webhooks/endpoints.ts';
import { openKeys } from '../keys/open-keys.ts';
import { openStore } from '../store/open-store.ts';

export const systemClock: Clock = { nowMs: () => Date.now() };

export interface ComposeOptions {
  /** Where a failing event handler, or a failed read of other processes' events, is reported. */
  readonly onBusError: (err: unknown) => void;
  /** Defaults to the system clock (tests inject one they can move). */
  readonly clock?: Clock | undefined;
  /** Defaults to the in-process limiter on the same clock, or to Redis when the config names one. */
  readonly limiter?: Limiter | undefined;
  /** Defaults to the production password hashing cost (tests pass a cheaper one). */
  readonly passwords?: PasswordHasher | undefined;
  /** A pooled database connection failed while idle (PostgreSQL); the pool replaces it. */
  readonly onStoreError?: ((err: Error) => void) | undefined;
  /** A Redis connection failed; it reconnects in the background (the error never quotes the URL). */
  readonly onRedisError?: ((err: Error) => void) | undefined;
  /** Between two looks for a key rotation made by another process (default 30 s; tests pass less). */
  readonly keyReloadIntervalMs?: number | undefined;
  /** A rotated key ring was loaded. */
  readonly onKeysReloaded?: ((ring: KeyRing, version: number) => void) | undefined;
  /** Reloading the key ring failed or was refused; the keys loaded before stay in force. */
  readonly onKeysError?: ((err: unknown) => void) | undefined;
}

/** The services of one process, and how to release what they hold. */
export interface Services extends ServiceDeps<Store> {
  /** With Redis: whether the request-path connection is up and the bus subscription in place (readiness). */
  readonly redisLive?: (() => boolean) | undefined;
  /** `listener` runs when this process recorded a webhook event (the delivery worker wakes); returns the unsubscribe. */
  onEventRecorded(listener: () => void): () => void;
  /** Closes the bus, the Redis connections and the store. */
  close(): Promise<void>;
}

/**
 * Whether a live room whose media nodes are all full opens on another node (docs/operations/scale-out.md,
 * "Rooms across media nodes"): its nodes relay its streams to each other and show each other's members,
 * so a room over several nodes is still one room.
 */
const ROOMS_SPAN_NODES = true;

const placementPolicy = (config: Config): PlacementPolicy => ({ capacity: config.media.maxSessions, spill: ROOMS_SPAN_NODES });

/** How often a process writes the token counts it holds (the console's usage lags by at most this much). */
const TOKEN_USAGE_FLUSH_MS = 5000;

/** How long a starting process waits for Redis before it gives up with a clear message. */
const REDIS_START_TIMEOUT_MS = 10_000;

/** Chooses the adapters from the config and opens them: the services every role shares. */
export async function composeServices(config: Config, options: ComposeOptions): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const store = await openStore(config.store, { onConnectionError: options.onStoreError });
  let keys: LiveKeyRing;
  try {
    keys = await openKeys(config, store, {
      clock, reloadIntervalMs: options.keyReloadIntervalMs, onReloaded: options.onKeysReloaded, onError: options.onKeysError,
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  const closers: (() => Promise<void> | void)[] = [() => store.close(), () => keys.close()];
  const close = async (): Promise<void> => {
    for (const closer of [...closers].reverse()) await closer();
  };
  try {
    const shared = config.redis ? await openRedis(config.redis, options, placementPolicy(config)) : undefined;
    if (shared) closers.push(shared.close);
    const localNodes = shared ? undefined : openLocalMediaNodes(config);
    if (localNodes) closers.push(() => localNodes.close());
    const bus = shared?.bus ?? openLocalBus(config, options);
    if (!shared) closers.push(() => bus.close());
    // tokens per project and day for the console, written in one batch every few seconds and at close
    const tokenUsage = new TokenUsage(store);
    const flushUsage = (): Promise<void> => tokenUsage.flush().catch((err: unknown) => {
      // the counts stay in memory for the next flush
      options.onStoreError?.(err instanceof Error ? err : new Error(String(err)));
    });
    const usageTimer = setInterval(() => void flushUsage(), TOKEN_USAGE_FLUSH_MS);
    usageTimer.unref();
    closers.push(async () => {
      clearInterval(usageTimer);
      await flushUsage();
    });
    const recorded = new Set<() => void>();
    const webhookWake = (): void => {
      for (const listener of recorded) listener();
    };
    return {
      store, bus, clock, keys, close,
      limiter: options.limiter ?? shared?.limiter ?? createMemoryLimiter(clock),
      mediaNodes: shared?.mediaNodes ?? localNodes,
      // with an injected limiter (tests) the token API counts with it alone
      tokenAdmission: options.limiter ? undefined : shared?.tokenAdmission,
      credentialVersions: shared?.credentialVersions,
      redisLive: shared?.live,
      // durable: each event is in the store's outbox before record() resolves (docs/reference/webhooks.md)
      events: createProjectEvents(store, clock, webhookWake),
      webhookTargets: createWebhookTargets(config.webhooks.allowPrivate),
      webhookWake,
      onEventRecorded(listener) {
        recorded.add(listener);
        return () => recorded.delete(listener);
      },
      passwords: options.passwords ?? createPasswordHasher(),
      tokenUsage,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The Redis of a cluster: one connection for the limits and the media node directory (commands
 * fail at once while it is down, so requests are refused rather than held) and the bus's own two. Startup waits until
 * both answer, so a process never serves with limits or revocations that do not reach the others.
 * Through Sentinel each of the three follows a failover by itself (docs/operations/scale-out.md, "Redis Sentinel").
 */
async function openRedis(target: RedisTarget, options: ComposeOptions, policy: PlacementPolicy): Promise<RedisServices> {
  // loaded only by a process that names a Redis: ioredis and its adapters weigh some 8 MB of heap
  // that an embedded process does without (docs/operations/benchmarks.md, token issuance)
  const [{ createRedisBus }, { createRedisLimiter }, { createRedisCredentialVersions, createRedisTokenAdmission },
    { createRedisMediaNodeDirectory }, { createRedisClient, redisReady }] = await Promise.all([
    import('../bus/redis.ts'), import('../limiter/redis.ts'), import('../limiter/redis-admission.ts'),
    import('../redis/media-nodes.ts'), import('../redis/client.ts'),
  ]);
  const onError = options.onRedisError ?? (() => {});
  const client = createRedisClient(target, onError);
  const bus = createRedisBus(target, { onHandlerError: options.onBusError, onError });
  const mediaNodes = createRedisMediaNodeDirectory(client, policy);
  const close = async (): Promise<void> => {
    mediaNodes.close();
    await bus.close();
    client.disconnect();
  };
  try {
    await Promise.all([redisReady(client, REDIS_START_TIMEOUT_MS), withTimeout(bus.ready(), REDIS_START_TIMEOUT_MS)]);
  } catch {
    await close();
    throw new Error('url' in target
      ? `REDIS_URL: Redis did not answer within ${REDIS_START_TIMEOUT_MS / 1000} s`
      : `REDIS_SENTINELS: no master named ${JSON.stringify(target.masterName)} answered through the sentinels within ${REDIS_START_TIMEOUT_MS / 1000} s`);
  }
  const live = (): boolean => client.status === 'ready' && bus.live();
  return {
    bus, limiter: createRedisLimiter(client), mediaNodes, live, close,
    tokenAdmission: createRedisTokenAdmission(client), credentialVersions: createRedisCredentialVersions(client),
  };
}

interface RedisServices {
  readonly bus: EventBus;
  readonly limiter: Limiter;
  readonly mediaNodes: MediaNodeDirectory;
  readonly tokenAdmission: TokenAdmission;
  readonly credentialVersions: CredentialVersions;
  live(): boolean;
  close(): Promise<void>;
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Without Redis: on SQLite the store's file carries events between the processes of one data
 * directory; on PostgreSQL events stay in the process, and the media and signaling roles read
 * revocations from the database instead (docs/operations/scale-out.md).
 */
function openLocalBus(config: Config, options: ComposeOptions): EventBus {
  if (config.store.kind === 'sqlite') {
    return createSqliteBus(config.store.path, { onHandlerError: options.onBusError, onPollError: options.onBusError });
  }
  return createMemoryBus(options.onBusError);
}

/**
 * Without Redis, the media workers of one `rtc serve` on the embedded store meet in its SQLite file
 * (docs/operations/scale-out.md, "Every core of one machine"); one media process needs no directory.
 */
function openLocalMediaNodes(config: Config): MediaNodeDirectory | undefined {
  if (config.store.kind !== 'sqlite' || (config.media.workers <= 1 && config.media.workerIndex === undefined)) return undefined;
  return createSqliteMediaNodeDirectory(config.store.path, placementPolicy(config));
}

/** What the api and token apps need besides the services, from the config and the bound media and signaling roles. */
export function httpContext(config: Config, deps: ServiceDeps<Store>, urls: ReadonlyMap<RoleName, string>): HttpContext<Store> {
  const mediaUrl = urls.get('media');
  const boundMediaPort = mediaUrl ? Number(new URL(mediaUrl).port) : undefined;
  return {
    deps,
    issuer: {
      issuer: config.issuer,
      sfuHost: config.media.publicHost,
      sfuPort: config.media.publicPort ?? boundMediaPort ?? config.ports.media,
      turn: config.turn,
      signalingUrl: config.signaling.publicUrl ?? urls.get('signaling'),
    },
    limits: config.limits,
    // counts the revoke endpoint while Redis is unreachable (docs/operations/scale-out.md)
    localLimiter: createMemoryLimiter(deps.clock),
    trustProxy: config.trustProxy.length > 0 ? createAddressSet(config.trustProxy) : undefined,
  };
}
