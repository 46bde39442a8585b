import type { AddressSet } from '../core/address.ts';
import type { AddressLimits } from '../services/app-auth.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { IssuerSettings } from '../services/issue-token.ts';

/** What the HTTP edge needs besides the services: settings read once from the config. */
export interface HttpContext {
  readonly deps: ServiceDeps;
  readonly issuer: IssuerSettings;
  readonly limits: AddressLimits;
  readonly trustProxy: AddressSet | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The client address (X-Forwarded-For only from RTC_TRUST_PROXY). */
    clientAddress: string;
    /** The account of a console session, set by the bearer-auth hook. */
    accountId: string;
  }
}
