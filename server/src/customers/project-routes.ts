import type { FastifyInstance } from 'fastify';
import { admitConsoleRead, createProject, getOwnProject, projectView, renameProject, setArchived } from './projects.ts';
import { getRoom, listRooms, removeParticipant } from '../rooms/service.ts';
import { projectUsage } from '../tokens/usage.ts';
import { issueTemporaryToken } from '../tokens/temporary.ts';
import type { HttpContext } from '../http/context.ts';
import { CUSTOMER_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { requireSession } from './auth-routes.ts';
import type { AccountStore, ProjectStore } from './store.ts';
import type { LiveParticipantStore } from '../rooms/store.ts';
import type { RevocationStore, TokenCountStore } from '../tokens/store.ts';

/** docs/reference/token-api.md, "Customer API": projects of the signed-in account, and console temporary tokens. */
export function registerProjectRoutes(app: FastifyInstance, ctx: HttpContext<ProjectStore & AccountStore & LiveParticipantStore & RevocationStore & TokenCountStore>): void {
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

  // the room service API for the console: the same services, the project checked against the session's account
  registerOperation(app, CUSTOMER_API.listProjectRooms, async (req, reply, input) => {
    const project = await getOwnProject(ctx.deps, req.accountId, input.params.id);
    await admitConsoleRead(ctx.deps, req.accountId);
    return reply.send(await listRooms(ctx.deps, project.id));
  }, session);

  registerOperation(app, CUSTOMER_API.getProjectRoom, async (req, reply, input) => {
    const project = await getOwnProject(ctx.deps, req.accountId, input.params.id);
    await admitConsoleRead(ctx.deps, req.accountId);
    return reply.send(await getRoom(ctx.deps, project.id, input.params.room_id));
  }, session);

  registerOperation(app, CUSTOMER_API.removeProjectParticipant, async (req, reply, input) => {
    const project = await getOwnProject(ctx.deps, req.accountId, input.params.id);
    await admitConsoleRead(ctx.deps, req.accountId);
    return reply.send(await removeParticipant(ctx.deps, project.id, input.params.room_id, input.params.participant_id));
  }, session);

  registerOperation(app, CUSTOMER_API.getProjectUsage, async (req, reply, input) =>
    reply.send(await projectUsage(ctx.deps, req.accountId, input.params.id)), session);

  registerOperation(app, CUSTOMER_API.createTemporaryToken, async (req, reply, input) =>
    reply.code(200).send(await issueTemporaryToken(ctx.deps, ctx.issuer, req.accountId, input.params.id, input.body)), session);
}
