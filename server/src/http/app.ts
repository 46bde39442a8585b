import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from '../config.ts';
import type { HttpContext } from './context.ts';
import { createEdge, type RegisteredRoute } from './edge.ts';
import { DEFAULT_BODY_LIMIT } from './openapi/registry.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerBillingRoutes } from './routes/billing.ts';
import { registerConsoleRoutes } from './routes/console.ts';
import { registerOpenApiRoutes } from './routes/openapi.ts';
import { registerPublicRoutes } from './routes/public.ts';
import { registerSubscriptionRoutes } from './routes/subscriptions.ts';
import { registerCredentialRoutes } from './routes/credentials.ts';
import { registerProjectRoutes } from './routes/projects.ts';
import { registerRtcRoomRoutes } from './routes/rtc-rooms.ts';
import { registerRtcTokenRoutes } from './routes/rtc-tokens.ts';
import { registerPublicKeyRoutes, registerTokenServiceRoutes } from './routes/token-service.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';

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
export function createHttpApp(ctx: HttpContext, options: HttpAppOptions): FastifyInstance {
  const app = createEdge({
    role: options.role, logger: options.logger, tls: options.tls, onRoute: options.onRoute,
    listener: options.listener ?? DEFAULT_LISTENER_LIMITS[options.role], trustProxy: ctx.trustProxy,
    bodyLimit: DEFAULT_BODY_LIMIT, refuseWhileClosing: false, headRoutes: true, answerClientErrors: true,
    clientAddress: { trustProxy: ctx.trustProxy },
  });
  app.decorateRequest('accountId', '');

  registerRtcTokenRoutes(app, ctx);
  registerRtcRoomRoutes(app, ctx);
  registerPublicKeyRoutes(app, ctx);
  if (options.role === 'token') registerTokenServiceRoutes(app, ctx);
  if (options.role === 'api') {
    registerAuthRoutes(app, ctx);
    registerProjectRoutes(app, ctx);
    registerCredentialRoutes(app, ctx);
    registerWebhookRoutes(app, ctx);
    registerPublicRoutes(app, ctx);
    registerBillingRoutes(app, ctx);
    registerSubscriptionRoutes(app, ctx);
    registerOpenApiRoutes(app);
    registerConsoleRoutes(app);
  }
  return app;
}
