import type { FastifyInstance, FastifyRequest } from 'fastify';
import { loginSchema, refreshSchema, registerSchema } from '../../schemas/customer.ts';
import { parseJsonBody, validate } from '../../schemas/validate.ts';
import { accountView, authenticateSession, login, logout, refresh, register } from '../../services/accounts.ts';
import type { HttpContext } from '../context.ts';
import type { RouteFlags } from '../reply.ts';

export const BEARER_ROUTE = { config: { bearerAuth: true } satisfies RouteFlags };

/** A hook that admits a console session (Bearer `cs_…`) and sets `req.accountId`. */
export function requireSession(ctx: HttpContext) {
  return async (req: FastifyRequest): Promise<void> => {
    const session = await authenticateSession(ctx.deps, req.headers.authorization);
    req.accountId = session.accountId;
  };
}

const bodyOf = (req: FastifyRequest): unknown => parseJsonBody(req.body as Buffer | undefined);

/** docs/reference/token-api.md, "Customer API": register, login, refresh (rotation with reuse detection), logout. */
export function registerAuthRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.post('/v1/auth/register', async (req, reply) => {
    const body = validate(registerSchema, bodyOf(req));
    return reply.code(201).send(await register(ctx.deps, body.email, body.password, req.clientAddress));
  });

  app.post('/v1/auth/login', async (req, reply) => {
    const body = validate(loginSchema, bodyOf(req));
    return reply.code(200).send(await login(ctx.deps, body.email, body.password, req.clientAddress));
  });

  app.post('/v1/auth/refresh', BEARER_ROUTE, async (req, reply) => {
    const body = validate(refreshSchema, bodyOf(req));
    return reply.code(200).send(await refresh(ctx.deps, body.refresh_token));
  });

  app.post('/v1/auth/logout', BEARER_ROUTE, async (req, reply) => {
    const session = await authenticateSession(ctx.deps, req.headers.authorization);
    await logout(ctx.deps, session);
    return reply.code(204).send();
  });

  app.get('/v1/account', { ...BEARER_ROUTE, onRequest: requireSession(ctx) }, async (req, reply) => {
    const account = await ctx.deps.store.getAccount(req.accountId);
    return reply.send(account ? accountView(account) : null);
  });
}
