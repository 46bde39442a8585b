import type { FastifyInstance } from 'fastify';
import { createProject, getOwnProject, projectView, renameProject, setArchived } from './projects.ts';
import type { HttpContext } from '../http/context.ts';
import { CUSTOMER_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { requireSession } from './auth-routes.ts';
import type { AccountStore, ProjectStore } from './store.ts';

/** docs/reference/token-api.md, "Customer API": projects of the signed-in account. */
export function registerProjectRoutes(app: FastifyInstance, ctx: HttpContext<ProjectStore & AccountStore>): void {
  const session = { onRequest: requireSession(ctx) };

  registerOperation(app, CUSTOMER_API.createProject, async (req, reply, input) =>
    reply.code(201).send(projectView(await createProject(ctx.deps, req.accountId, input.body().name))), session);

  registerOperation(app, CUSTOMER_API.listProjects, async (req, reply) =>
    reply.send({ projects: (await ctx.deps.store.listProjects(req.accountId)).map(projectView) }), session);

  registerOperation(app, CUSTOMER_API.getProject, async (req, reply, input) =>
    reply.send(projectView(await getOwnProject(ctx.deps, req.accountId, input.params.id))), session);

  registerOperation(app, CUSTOMER_API.updateProject, async (req, reply, input) =>
    reply.send(projectView(await renameProject(ctx.deps, req.accountId, input.params.id, input.body().name))), session);

  registerOperation(app, CUSTOMER_API.archiveProject, async (req, reply, input) =>
    reply.send(projectView(await setArchived(ctx.deps, req.accountId, input.params.id, true))), session);

  registerOperation(app, CUSTOMER_API.unarchiveProject, async (req, reply, input) =>
    reply.send(projectView(await setArchived(ctx.deps, req.accountId, input.params.id, false))), session);
}
