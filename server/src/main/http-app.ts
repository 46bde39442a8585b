import type { Store } from '../store/port.ts';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from '../config.ts';
import type { HttpContext } from '../http/context.ts';
import { createEdge, type RegisteredRoute } from '../http/edge.ts';
import { DEFAULT_BODY_LIMIT } from '../http/registry.ts';
import { registerAuthRoutes } from '../customers/auth-routes.ts';
import { registerBillingRoutes } from '../billing/quote-routes.ts';
import { registerConsoleRoutes } from '../console-page/routes.ts';
import { registerOpenApiRoutes } from '../openapi/routes.ts';
import { registerPublicRoutes } from '../billing/public-routes.ts';
import { registerSubscriptionRoutes } from '../billing/subscription-routes.ts';
import { registerCredentialRoutes } from '../customers/credential-routes.ts';
import { registerProjectRoutes } from '../customers/project-routes.ts';
import { registerRtcRoomRoutes } from '../rooms/routes.ts';
import { registerRtcTokenRoutes } from '../tokens/routes.ts';
import { registerPublicKeyRoutes, registerTokenServiceRoutes } from '../tokens/service-routes.ts';
import { registerWebhookRoutes } from '../webhooks/routes.ts';
import { registerRoomConsoleRoutes } from '../rooms/console-routes.ts';
import { registerTokenConsoleRoutes } from '../tokens/console-routes.ts';
import { registerUsageConsoleRoutes } from '../billing/usage-routes.ts';
import { registerSessionConsoleRoutes } from '../sessions/console-routes.ts';

/** The routes of every module an api or token process serves, in registration order. */
const MODULE_ROUTES: readonly ((app: FastifyInstance, ctx: HttpContext<Store>) => void)[] = [
  registerRtcTokenRoutes, registerRtcRoomRoutes, registerPublicKeyRoutes, registerTokenServiceRoutes, registerAuthRoutes,
  registerProjectRoutes, registerUsageConsoleRoutes, registerTokenConsoleRoutes, registerRoomConsoleRoutes, registerSessionConsoleRoutes,
  registerCredentialRoutes,
  registerWebhookRoutes,
  registerPublicRoutes, registerBillingRoutes, registerSubscriptionRoutes, registerOpenApiRoutes, registerConsoleRoutes,
];

export type HttpRole = 'api' | 'token';

export interface HttpAppOptions {
  readonly role: HttpRole;
  readonly logger: Logger;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** Connection caps and timeouts of the listener (`config.listeners[role]`); the role's defaults when omitted. */
  readonly listener?: ListenerLimits | undefined;
  /** Called for every route as it is registered (the OpenAPI contract test lists them this way). */
  readonly onRoute?: ((route: RegisteredRoute) => void) | undefined;
}

/** Builds the HTTP app of one role (api or token) on shared services. */
export function createHttpApp(ctx: HttpContext<Store>, options: HttpAppOptions): FastifyInstance {
  const app = createEdge({
    role: options.role, logger: options.logger, tls: options.tls, onRoute: options.onRoute,
    listener: options.listener ?? DEFAULT_LISTENER_LIMITS[options.role], trustProxy: ctx.trustProxy,
    bodyLimit: DEFAULT_BODY_LIMIT, refuseWhileClosing: false, headRoutes: true, answerClientErrors: true,
    clientAddress: { trustProxy: ctx.trustProxy },
  });
  app.decorateRequest('accountId', '');

  // every module registers all its routes; each is served only by the hosts its operation record names
  for (const register of MODULE_ROUTES) register(app, ctx);
  return app;
}
