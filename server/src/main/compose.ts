import { createMemoryBus } from '../adapters/bus/memory.ts';
import { createSqliteBus } from '../adapters/bus/sqlite.ts';
import { createMemoryLimiter } from '../adapters/limiter/memory.ts';
import type { Config, RoleName } from '../config.ts';
import { createAddressSet } from '../core/address.ts';
import type { KeyRing, LiveKeyRing } from '../core/keyring.ts';
import { createPasswordHasher, type PasswordHasher } from '../core/password.ts';
import type { HttpContext } from '../http/context.ts';
import type { Clock, EventBus, Limiter } from '../ports.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { openKeys } from './open-keys.ts';
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
  /** Between two looks for a key rotation made by another process (default 30 s; tests pass less). */
  readonly keyReloadIntervalMs?: number | undefined;
  /** A rotated key ring was loaded. */
  readonly onKeysReloaded?: ((ring: KeyRing, version: number) => void) | undefined;
  /** Reloading the key ring failed or was refused; the keys loaded before stay in force. */
  readonly onKeysError?: ((err: unknown) => void) | undefined;
}

/** Chooses the adapters from the config and opens them: the services every role shares. */
export async function composeServices(config: Config, options: ComposeOptions): Promise<ServiceDeps> {
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
