import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { PlatformMetrics } from './metrics/metrics.ts';
import type { Readiness } from './http/readiness.ts';
import type { ServiceDeps } from './core/deps.ts';

/** A network role started by `rtc serve`: where it listens and how it stops. */
export interface RoleServer {
  /** Base URL of the bound listener, e.g. `http://127.0.0.1:40123` or `ws://127.0.0.1:7880`. */
  readonly url: string;
  /** Stops accepting connections and lets in-flight work finish (sessions are closed). */
  close(): Promise<void>;
}

/**
 * What every role starter receives from the composition root; `S` is the part of the store the
 * role uses (the composition root passes the whole store).
 */
export interface RoleContext<S = unknown> {
  readonly config: Config;
  readonly deps: ServiceDeps<S>;
  readonly logger: Logger;
  /** This process's metrics (docs/operations/metrics.md); undefined: not recorded. */
  readonly metrics?: PlatformMetrics | undefined;
  /** What the role's own `GET /ready` reports, if it has one. */
  readonly readiness?: Readiness | undefined;
}

export type RoleStarter<S = unknown> = (ctx: RoleContext<S>) => Promise<RoleServer>;
