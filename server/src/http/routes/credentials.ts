import type { FastifyInstance, FastifyRequest } from 'fastify';
import { credentialCreateSchema, credentialPatchSchema } from '../../schemas/customer.ts';
import { parseJsonBody, validate } from '../../schemas/validate.ts';
import {
  createCredential, credentialView, getOwnCredential, listCredentials, revokeCredential, rotateCredential,
  updateCredential,
} from '../../services/credentials.ts';
import type { HttpContext } from '../context.ts';
import { BEARER_ROUTE, requireSession } from './auth.ts';

interface ProjectParams { id: string }
interface CredentialParams { id: string; app_id: string }

const bodyOf = (req: FastifyRequest): unknown => parseJsonBody(req.body as Buffer | undefined);

/** docs/reference/token-api.md, "Customer API": credentials of a project; the App Secret is shown only by create and rotate. */
export function registerCredentialRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const opts = { ...BEARER_ROUTE, onRequest: requireSession(ctx) };
  const base = '/v1/projects/:id/credentials';

  app.post<{ Params: ProjectParams }>(base, opts, async (req, reply) => {
    const body = validate(credentialCreateSchema, bodyOf(req));
    return reply.code(201).send(await createCredential(ctx.deps, req.accountId, req.params.id, body));
  });

  app.get<{ Params: ProjectParams }>(base, opts, async (req, reply) =>
    reply.send({ credentials: await listCredentials(ctx.deps, req.accountId, req.params.id) }));

  app.get<{ Params: CredentialParams }>(`${base}/:app_id`, opts, async (req, reply) =>
    reply.send(credentialView(await getOwnCredential(ctx.deps, req.accountId, req.params.id, req.params.app_id))));

  app.patch<{ Params: CredentialParams }>(`${base}/:app_id`, opts, async (req, reply) => {
    const body = validate(credentialPatchSchema, bodyOf(req));
    return reply.send(await updateCredential(ctx.deps, req.accountId, req.params.id, req.params.app_id, body));
  });

  app.post<{ Params: CredentialParams }>(`${base}/:app_id/rotate`, opts, async (req, reply) =>
    reply.send(await rotateCredential(ctx.deps, req.accountId, req.params.id, req.params.app_id)));

  app.post<{ Params: CredentialParams }>(`${base}/:app_id/revoke`, opts, async (req, reply) =>
    reply.send(await revokeCredential(ctx.deps, req.accountId, req.params.id, req.params.app_id)));
}
