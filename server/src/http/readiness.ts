import type { StoreHealth } from '../core/ports.ts';
import type { LiveKeyRing } from '../core/keyring.ts';

/** What `/ready` can find wanting (docs/operations/metrics.md, "Readiness"); never a URL or a secret. */
export type ReadinessProblem = 'starting' | 'shutting_down' | 'store' | 'keys' | 'redis';

export type ReadinessReport =
  | { readonly status: 'ready' }
  | { readonly status: 'unavailable'; readonly failing: readonly ReadinessProblem[] };

/**
 * Whether this process should receive traffic: started, not shutting down, its store answers, its
 * key ring is loaded and, in a cluster, Redis is reachable. Health (`/health`) asks less: only
 * that the process runs and its store answers.
 */
export interface Readiness {
  check(): Promise<ReadinessReport>;
  /** Every role listens: ready from now on if the dependencies are. */
  started(): void;
  /** Shutdown began: never ready again, so a load balancer stops sending. */
  shuttingDown(): void;
}

export interface ReadinessOptions {
  /** With Redis: whether the request-path connection is up and the bus subscription in place. */
  readonly redisLive?: (() => boolean) | undefined;
  /** Ready without waiting for `started()` (apps built without `rtc serve`). */
  readonly startedAlready?: boolean | undefined;
}

/** A store that takes longer than this to answer a ping counts as unavailable. */
const STORE_PING_TIMEOUT_MS = 2000;

export function createReadiness(deps: { readonly store: StoreHealth; readonly keys: Pick<LiveKeyRing, 'verifying'> },
  options: ReadinessOptions = {}): Readiness {
  let phase: 'starting' | 'serving' | 'shutting_down' = options.startedAlready ? 'serving' : 'starting';
  return {
    async check() {
      const failing: ReadinessProblem[] = [];
      if (phase !== 'serving') failing.push(phase);
      if (!(await answers(deps.store))) failing.push('store');
      if (deps.keys.verifying.length === 0) failing.push('keys');
      if (options.redisLive && !options.redisLive()) failing.push('redis');
      return failing.length === 0 ? { status: 'ready' } : { status: 'unavailable', failing };
    },
    started() {
      if (phase === 'starting') phase = 'serving';
    },
    shuttingDown() {
      phase = 'shutting_down';
    },
  };
}

async function answers(store: StoreHealth): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), STORE_PING_TIMEOUT_MS);
  });
  try {
    return await Promise.race([store.ping().then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
