import { createMemoryBus } from '../adapters/bus/memory.ts';
import { createSqliteBus } from '../adapters/bus/sqlite.ts';
import { loadKeyRing } from '../adapters/keys/file-keyring.ts';
import { createMemoryLimiter } from '../adapters/limiter/memory.ts';
import type { Config, RoleName } from '../config.ts';
import { createAddressSet } from '../core/address.ts';
import { createPasswordHasher, type PasswordHasher } from '../core/password.ts';
import type { HttpContext } from '../http/context.ts';
import type { Clock, EventBus, Limiter } from '../ports.ts';
import { nowSec, type ServiceDeps } from '../services/deps.ts';
import { openStore } from './open-store.ts';

export const systemClock: Clock = { nowMs: () => Date.now() };

export interface ComposeOptions {
  /** Where a failing event handler, or a failed read of other processes' events, is reported. */
  readonly onBusError: (err: unknown) => void;
  /** Defaults to the system clock (tests inject one they can move). */
  readonly clock?: Clock | undefined;
  /** Defaults to the in-process limiter on the same clock. */
  readonly limiter?: Limiter | undefined;
  /** Defaults to the production password hashing cost (tests pass a cheaper one). */
  readonly passwords?: PasswordHasher | undefined;
  /** A pooled database connection failed while idle (PostgreSQL); the pool replaces it. */
  readonly onStoreError?: ((err: Error) => void) | undefined;
}

/** Chooses the adapters from the config and opens them: the services every role shares. */
export async function composeServices(config: Config, options: ComposeOptions): Promise<ServiceDeps> {
  const clock = options.clock ?? systemClock;
  const keys = loadKeyRing(config.dataDir, nowSec(clock));
  const store = await openStore(config.store, { onConnectionError: options.onStoreError });
  return {
    store, limiter: options.limiter ?? createMemoryLimiter(clock), bus: openBus(config, options), clock, keys,
    passwords: options.passwords ?? createPasswordHasher(),
  };
}

/**
 * On SQLite the store's file carries events between the processes of one data directory; on
 * PostgreSQL events stay in the process for now, and other processes see revocations and
 * credential changes through the database (docs/operations/configuration.md).
 */
function openBus(config: Config, options: ComposeOptions): EventBus {
  if (config.store.kind === 'sqlite') {
    return createSqliteBus(config.store.path, { onHandlerError: options.onBusError, onPollError: options.onBusError });
  }
  return createMemoryBus(options.onBusError);
}

/** What the api and token apps need besides the services, from the config and the bound media and signaling roles. */
export function httpContext(config: Config, deps: ServiceDeps, urls: ReadonlyMap<RoleName, string>): HttpContext {
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
    trustProxy: config.trustProxy.length > 0 ? createAddressSet(config.trustProxy) : undefined,
  };
}
