import type { FastifyInstance } from 'fastify';
import { requireSession } from '../customers/auth-routes.ts';
import type { AccountStore, ProjectStore } from '../customers/store.ts';
import type { HttpContext } from '../http/context.ts';
import { registerOperation } from '../http/operation-route.ts';
import { TOKEN_CONSOLE_API } from './operations.ts';
import { createInvitation } from './invitations.ts';
import { issueTemporaryToken } from './temporary.ts';

/**
 * The console's token routes (docs/console.md), on its session: temporary test tokens and
 * invitations. Redeeming an invitation needs the room's streams: the room module serves it
 * (rooms/console-routes.ts); the project's usage, priced, is billing's (billing/usage-routes.ts).
 */
export function registerTokenConsoleRoutes(
  app: FastifyInstance, ctx: HttpContext<ProjectStore & AccountStore>,
): void {
  const session = { onRequest: requireSession(ctx) };

  registerOperation(app, TOKEN_CONSOLE_API.createTemporaryToken, async (req, reply, input) =>
    reply.code(200).send(await issueTemporaryToken(ctx.deps, ctx.issuer, req.accountId, input.params.id, input.body)), session);

  registerOperation(app, TOKEN_CONSOLE_API.createInvitation, async (req, reply, input) =>
    reply.code(201).send(await createInvitation(ctx.deps, req.accountId, input.params.id, input.body().room_id)), session);
}
