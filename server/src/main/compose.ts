import { createSqliteBus } from '../adapters/bus/sqlite.ts';
import { loadKeyRing } from '../adapters/keys/file-keyring.ts';
import { createMemoryLimiter } from '../adapters/limiter/memory.ts';
import { createSqliteStore } from '../adapters/store/sqlite.ts';
import type { Config, RoleName } from '../config.ts';
import { createAddressSet } from '../core/address.ts';
import type { HttpContext } from '../http/context.ts';
import type { Clock, Limiter } from '../ports.ts';
import { nowSec, type ServiceDeps } from '../services/deps.ts';

export const systemClock: Clock = { nowMs: () => Date.now() };

export interface ComposeOptions {
  /** Where a failing event handler, or a failed read of other processes' events, is reported. */
  readonly onBusError: (err: unknown) => void;
  /** Defaults to the system clock (tests inject one they can move). */
  readonly clock?: Clock | undefined;
  /** Defaults to the in-process limiter on the same clock. */
  readonly limiter?: Limiter | undefined;
}

/** Chooses the adapters from the config and opens them: the services every role shares. */
export function composeServices(config: Config, options: ComposeOptions): ServiceDeps {
  const clock = options.clock ?? systemClock;
  const keys = loadKeyRing(config.dataDir, nowSec(clock));
  const store = createSqliteStore(config.store.path);
  // the store's file carries events between the processes of one data directory
  const bus = createSqliteBus(config.store.path, { onHandlerError: options.onBusError, onPollError: options.onBusError });
  return { store, limiter: options.limiter ?? createMemoryLimiter(clock), bus, clock, keys };
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
