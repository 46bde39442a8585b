import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ServiceDeps } from '../services/deps.ts';

/** A network role started by `rtc serve`: where it listens and how it stops. */
export interface RoleServer {
  /** Base URL of the bound listener, e.g. `http://127.0.0.1:40123` or `ws://127.0.0.1:7880`. */
  readonly url: string;
  /** Stops accepting connections and lets in-flight work finish (sessions are closed). */
  close(): Promise<void>;
}

/** What every role starter receives from the composition root. */
export interface RoleContext {
  readonly config: Config;
  readonly deps: ServiceDeps;
  readonly logger: Logger;
}

export type RoleStarter = (ctx: RoleContext) => Promise<RoleServer>;
