import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rateLimited } from '../../core/errors.ts';
import { projectCreateSchema, projectPatchSchema } from '../../schemas/customer.ts';
import { tokenRequestSchema } from '../../schemas/token.ts';
import { parseJsonBody, validate } from '../../schemas/validate.ts';
import { issueToken } from '../../services/issue-token.ts';
import { createProject, getOwnProject, projectView, renameProject, setArchived } from '../../services/projects.ts';
import type { HttpContext } from '../context.ts';
import { BEARER_ROUTE, requireSession } from './auth.ts';
import { ApiError } from '../../core/errors.ts';

/** Console test tokens are short-lived: at most ten minutes. */
export const TEMPORARY_TOKEN_MAX_TTL_SECONDS = 600;
const TEMPORARY_TOKENS_PER_MINUTE = 60;

interface ProjectParams { id: string }

const bodyOf = (req: FastifyRequest): unknown => parseJsonBody(req.body as Buffer | undefined);

/** docs/reference/token-api.md, "Customer API": projects of the signed-in account, and console temporary tokens. */
export function registerProjectRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const opts = { ...BEARER_ROUTE, onRequest: requireSession(ctx) };

  app.post('/v1/projects', opts, async (req, reply) => {
    const body = validate(projectCreateSchema, bodyOf(req));
    return reply.code(201).send(projectView(await createProject(ctx.deps, req.accountId, body.name)));
  });

  app.get('/v1/projects', opts, async (req, reply) =>
    reply.send({ projects: (await ctx.deps.store.listProjects(req.accountId)).map(projectView) }));

  app.get<{ Params: ProjectParams }>('/v1/projects/:id', opts, async (req, reply) =>
    reply.send(projectView(await getOwnProject(ctx.deps, req.accountId, req.params.id))));

  app.patch<{ Params: ProjectParams }>('/v1/projects/:id', opts, async (req, reply) => {
    const body = validate(projectPatchSchema, bodyOf(req));
    return reply.send(projectView(await renameProject(ctx.deps, req.accountId, req.params.id, body.name)));
  });

  app.post<{ Params: ProjectParams }>('/v1/projects/:id/archive', opts, async (req, reply) =>
    reply.send(projectView(await setArchived(ctx.deps, req.accountId, req.params.id, true))));

  app.post<{ Params: ProjectParams }>('/v1/projects/:id/unarchive', opts, async (req, reply) =>
    reply.send(projectView(await setArchived(ctx.deps, req.accountId, req.params.id, false))));

  app.post<{ Params: ProjectParams }>('/v1/projects/:id/temporary-token', opts, async (req, reply) => {
    const project = await getOwnProject(ctx.deps, req.accountId, req.params.id);
    const rate = await ctx.deps.limiter.hit(`temptoken:${req.accountId}`, TEMPORARY_TOKENS_PER_MINUTE, 60);
    if (!rate.ok) throw rateLimited(rate.retryAfterSec);
    if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
    const body = validate(tokenRequestSchema, bodyOf(req));
    const token = issueToken(ctx.deps, ctx.issuer, {
      projectId: project.id, appId: project.consoleAppId, publisher: true, subscriber: true,
      maxTtlSeconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
    }, body);
    return reply.code(200).send(token);
  });
}
