import type { AddressSet } from '../core/address.ts';
import type { TokenMetrics } from '../metrics/metrics.ts';
import type { Limiter } from '../core/ports.ts';
import type { Readiness } from './readiness.ts';
import type { AddressLimits } from '../tokens/app-auth.ts';
import type { ServiceDeps } from '../core/deps.ts';
import type { IssuerSettings } from '../tokens/issue.ts';

/** What the HTTP edge needs besides the services: settings read once from the config. */
export interface HttpContext<S = unknown> {
  /** `S`: the part of the store the routes of a module use (the composition root passes the whole store). */
  readonly deps: ServiceDeps<S>;
  readonly issuer: IssuerSettings;
  readonly limits: AddressLimits;
  readonly trustProxy: AddressSet | undefined;
  /** Where the token routes count issued and refused tokens (docs/operations/metrics.md); undefined: not counted. */
  readonly metrics?: TokenMetrics | undefined;
  /**
   * A limiter of this process alone: the revoke endpoint counts with it while the shared one
   * (Redis) is unreachable; undefined: not counted then.
   */
  readonly localLimiter?: Limiter | undefined;
  /** What `GET /ready` reports; undefined: ready while the store answers and the keys are loaded. */
  readonly readiness?: Readiness | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The client address (X-Forwarded-For only from RTC_TRUST_PROXY). */
    clientAddress: string;
    /** The account of a console session, set by the bearer-auth hook. */
    accountId: string;
    /** The error code the request was answered with (set by `replyWithError`), `''` until then. */
    errorCode: string;
  }
}
