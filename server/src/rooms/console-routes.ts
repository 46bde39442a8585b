import type { FastifyInstance } from 'fastify';
import { requireSession } from '../customers/auth-routes.ts';
import { admitConsoleRead, getOwnProject } from '../customers/projects.ts';
import type { AccountStore, ProjectStore } from '../customers/store.ts';
import type { HttpContext } from '../http/context.ts';
import { registerOperation } from '../http/operation-route.ts';
import { redeemInvitation } from '../tokens/invitations.ts';
import { TOKEN_CONSOLE_API } from '../tokens/operations.ts';
import type { RedeemedInvitationStore, RevocationStore } from '../tokens/store.ts';
import { ROOM_CONSOLE_API } from './operations.ts';
import { endRoom, getRoom, listRooms, muteStream, publishableStreams, removeParticipant, updateParticipant } from './service.ts';
import type { GrantPermissionStore, LiveParticipantStore, RoomCutoffStore, RoomSettingsStore } from './store.ts';

/**
 * The room service API for the console (docs/console.md): the same use cases, the project checked
 * against the session's account; and the redemption of a share link's invitation, whose guest
 * publishes stream ids apart from those of the room's participants.
 */
export function registerRoomConsoleRoutes(
  app: FastifyInstance,
  ctx: HttpContext<LiveParticipantStore & RevocationStore & ProjectStore & AccountStore & RoomCutoffStore & RoomSettingsStore & RedeemedInvitationStore & GrantPermissionStore>,
): void {
  const session = { onRequest: requireSession(ctx) };
  /** The session's own project, within the account's console read limit. */
  const ownProject = async (accountId: string, projectId: string): Promise<{ readonly id: string }> => {
    const project = await getOwnProject(ctx.deps, accountId, projectId);
    await admitConsoleRead(ctx.deps, accountId);
    return project;
  };
  // the console's own tokens carry both scopes: so may its permission changes and mutes
  const consoleCaller = (projectId: string) => ({ projectId, scopes: { publisher: true, subscriber: true } });

  registerOperation(app, ROOM_CONSOLE_API.listProjectRooms, async (req, reply, input) => {
    const project = await ownProject(req.accountId, input.params.id);
    return reply.send(await listRooms(ctx.deps, project.id, input.query));
  }, session);

  registerOperation(app, ROOM_CONSOLE_API.getProjectRoom, async (req, reply, input) => {
    const project = await ownProject(req.accountId, input.params.id);
    return reply.send(await getRoom(ctx.deps, project.id, input.params.room_id));
  }, session);

  registerOperation(app, ROOM_CONSOLE_API.removeProjectParticipant, async (req, reply, input) => {
    const project = await ownProject(req.accountId, input.params.id);
    return reply.send(await removeParticipant(ctx.deps, project.id, input.params.room_id, input.params.participant_id, input.body()));
  }, session);

  registerOperation(app, ROOM_CONSOLE_API.endProjectRoom, async (req, reply, input) => {
    const project = await ownProject(req.accountId, input.params.id);
    return reply.send(await endRoom(ctx.deps, project.id, input.params.room_id));
  }, session);

  registerOperation(app, ROOM_CONSOLE_API.updateProjectParticipant, async (req, reply, input) => {
    const project = await ownProject(req.accountId, input.params.id);
    const caller = consoleCaller(project.id);
    return reply.send(await updateParticipant(ctx.deps, caller, input.params.room_id, input.params.participant_id, input.body()));
  }, session);

  registerOperation(app, ROOM_CONSOLE_API.muteProjectStream, async (req, reply, input) => {
    const project = await ownProject(req.accountId, input.params.id);
    const caller = consoleCaller(project.id);
    const { room_id: roomId, participant_id: participantId, stream_id: streamId } = input.params;
    return reply.send(await muteStream(ctx.deps, caller, roomId, participantId, streamId, input.body()));
  }, session);

  registerOperation(app, TOKEN_CONSOLE_API.redeemInvitation, async (req, reply, input) =>
    reply.code(200).send(await redeemInvitation(ctx.deps, ctx.issuer, req.clientAddress, input.body().invitation,
      (projectId, roomId) => publishableStreams(ctx.deps, projectId, roomId))));
}
