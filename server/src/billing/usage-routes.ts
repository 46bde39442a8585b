import type { FastifyInstance } from 'fastify';
import { requireSession } from '../customers/auth-routes.ts';
import type { AccountStore, ProjectStore } from '../customers/store.ts';
import type { HttpContext } from '../http/context.ts';
import { registerOperation } from '../http/operation-route.ts';
import type { MediaSessionStore } from '../sessions/store.ts';
import type { TokenCountStore } from '../tokens/store.ts';
import { BILLING_CONSOLE_API } from './operations.ts';
import type { SubscriptionStore } from './store.ts';
import { projectUsage } from './usage.ts';

/** The console's usage view of a project (docs/console.md, "Usage"), on its session. */
export function registerUsageConsoleRoutes(
  app: FastifyInstance, ctx: HttpContext<TokenCountStore & ProjectStore & AccountStore & MediaSessionStore & SubscriptionStore>,
): void {
  registerOperation(app, BILLING_CONSOLE_API.getProjectUsage, async (req, reply, input) =>
    reply.send(await projectUsage(ctx.deps, req.accountId, input.params.id)), { onRequest: requireSession(ctx) });
}
