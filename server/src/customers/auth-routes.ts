import type { FastifyInstance, FastifyRequest } from 'fastify';
import { accountView, authenticateSession, changePassword, login, logout, logoutEverywhere, refresh, register } from './accounts.ts';
import type { HttpContext } from '../http/context.ts';
import { CUSTOMER_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import type { AccountStore } from './store.ts';

/** A hook that admits a console session (Bearer `cs_…`) and sets `req.accountId`. */
export function requireSession(ctx: HttpContext<AccountStore>) {
  return async (req: FastifyRequest): Promise<void> => {
    const session = await authenticateSession(ctx.deps, req.headers.authorization);
    req.accountId = session.accountId;
  };
}

/** docs/reference/token-api.md, "Customer API": register, login, refresh (rotation with reuse detection), logout. */
export function registerAuthRoutes(app: FastifyInstance, ctx: HttpContext<AccountStore>): void {
  registerOperation(app, CUSTOMER_API.register, async (req, reply, input) => {
    const body = input.body();
    return reply.code(201).send(await register(ctx.deps, body.email, body.password, req.clientAddress));
  });

  registerOperation(app, CUSTOMER_API.login, async (req, reply, input) => {
    const body = input.body();
    return reply.code(200).send(await login(ctx.deps, body.email, body.password, req.clientAddress));
  });

  // a spent or unknown refresh token is a 401 that names the Bearer scheme, like the console's other calls
  registerOperation(app, CUSTOMER_API.refreshSession, async (_req, reply, input) =>
    reply.code(200).send(await refresh(ctx.deps, input.body().refresh_token)), { flags: { bearerAuth: true } });

  registerOperation(app, CUSTOMER_API.logout, async (req, reply) => {
    const session = await authenticateSession(ctx.deps, req.headers.authorization);
    await logout(ctx.deps, session);
    return reply.code(204).send();
  });

  registerOperation(app, CUSTOMER_API.logoutEverywhere, async (req, reply) => {
    await logoutEverywhere(ctx.deps, await authenticateSession(ctx.deps, req.headers.authorization));
    return reply.code(204).send();
  });

  registerOperation(app, CUSTOMER_API.changePassword, async (req, reply, input) => {
    const session = await authenticateSession(ctx.deps, req.headers.authorization);
    const body = input.body();
    await changePassword(ctx.deps, session, body.current_password, body.new_password);
    return reply.code(204).send();
  });

  registerOperation(app, CUSTOMER_API.getAccount, async (req, reply) => {
    const account = await ctx.deps.store.getAccount(req.accountId);
    return reply.send(account ? accountView(account) : null);
  }, { onRequest: requireSession(ctx) });
}
