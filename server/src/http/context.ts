import type { AddressSet } from '../core/address.ts';
import type { TokenMetrics } from '../metrics/metrics.ts';
import type { Limiter } from '../core/ports.ts';
import type { Readiness } from './readiness.ts';
import type { ServiceDeps } from '../core/deps.ts';

/** Where grants point the app, and the optional services a token may carry. */
export interface IssuerSettings {
  readonly issuer: string;
  readonly sfuHost: string;
  readonly sfuPort: number;
  /** TURN REST API shared secret and relay URIs; undefined: `turn: true` gets 502 turn_unavailable. */
  readonly turn?: { readonly secret: string; readonly uris: readonly string[] } | undefined;
  /** Base URL of the signaling service; undefined: `signaling: true` gets 502 signaling_unavailable. */
  readonly signalingUrl?: string | undefined;
}

export interface AddressLimits {
  readonly appPerMinute: number;
  readonly addressPerMinute: number;
}

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
  interface FastifyInstance {
    /** The role this app serves (`api`, `token`, `signaling`): operations whose hosts leave it out are not registered. */
    servedRole: string;
  }
  interface FastifyRequest {
    /** The client address (X-Forwarded-For only from RTC_TRUST_PROXY). */
    clientAddress: string;
    /** The account of a console session, set by the bearer-auth hook. */
    accountId: string;
    /** The error code the request was answered with (set by `replyWithError`), `''` until then. */
    errorCode: string;
    /**
     * What a route's own onRequest check learned, for its handler (the token API's gate); null
     * until set. A decorated field rather than a WeakMap keyed by request: no weak table to sweep.
     */
    routeState: unknown;
  }
}
