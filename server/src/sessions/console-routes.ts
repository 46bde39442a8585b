import type { FastifyInstance } from 'fastify';
import { requireSession } from '../customers/auth-routes.ts';
import type { AccountStore, ProjectStore } from '../customers/store.ts';
import type { HttpContext } from '../http/context.ts';
import { registerOperation } from '../http/operation-route.ts';
import { listSessions } from './history.ts';
import { SESSION_CONSOLE_API } from './operations.ts';
import type { MediaSessionStore } from './store.ts';

/** The console's session history (docs/console.md, "Session history"), on its session. */
export function registerSessionConsoleRoutes(app: FastifyInstance, ctx: HttpContext<MediaSessionStore & ProjectStore & AccountStore>): void {
  const session = { onRequest: requireSession(ctx) };
  registerOperation(app, SESSION_CONSOLE_API.listProjectSessions, async (req, reply, input) =>
    reply.send(await listSessions(ctx.deps, req.accountId, input.params.id, input.query)), session);
}
