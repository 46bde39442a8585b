import type { FastifyInstance } from 'fastify';
import {
  createCredential, credentialView, getOwnCredential, listCredentials, revokeCredential, rotateCredential,
  updateCredential,
} from './credentials.ts';
import type { HttpContext } from '../http/context.ts';
import { CUSTOMER_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { requireSession } from './auth-routes.ts';
import type { AccountStore, CredentialStore, ProjectStore } from './store.ts';

/** docs/reference/token-api.md, "Customer API": credentials of a project; the App Secret is shown only by create and rotate. */
export function registerCredentialRoutes(app: FastifyInstance, ctx: HttpContext<CredentialStore & ProjectStore & AccountStore>): void {
  const session = { onRequest: requireSession(ctx) };

  registerOperation(app, CUSTOMER_API.createCredential, async (req, reply, input) =>
    reply.code(201).send(await createCredential(ctx.deps, req.accountId, input.params.id, input.body())), session);

  registerOperation(app, CUSTOMER_API.listCredentials, async (req, reply, input) =>
    reply.send({ credentials: await listCredentials(ctx.deps, req.accountId, input.params.id) }), session);

  registerOperation(app, CUSTOMER_API.getCredential, async (req, reply, { params }) =>
    reply.send(credentialView(await getOwnCredential(ctx.deps, req.accountId, params.id, params.app_id))), session);

  registerOperation(app, CUSTOMER_API.updateCredential, async (req, reply, input) =>
    reply.send(await updateCredential(ctx.deps, req.accountId, input.params.id, input.params.app_id, input.body())), session);

  registerOperation(app, CUSTOMER_API.rotateCredential, async (req, reply, { params }) =>
    reply.send(await rotateCredential(ctx.deps, req.accountId, params.id, params.app_id)), session);

  registerOperation(app, CUSTOMER_API.revokeCredential, async (req, reply, { params }) =>
    reply.send(await revokeCredential(ctx.deps, req.accountId, params.id, params.app_id)), session);
}
