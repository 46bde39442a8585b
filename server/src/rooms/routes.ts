import type { FastifyInstance } from 'fastify';
import { ROOM_DATA_BODY_LIMIT_BYTES } from '@rtc/protocol';
import { createRoom, endRoom, getRoom, listRooms, muteStream, removeParticipant, sendData, updateParticipant, updateRoom } from './service.ts';
import type { HttpContext } from '../http/context.ts';
import { ROOM_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { authenticateTokenCaller, tokenApiGate } from '../tokens/routes.ts';
import type { CredentialStore, ProjectStore } from '../customers/store.ts';
import type { GrantPermissionStore, LiveParticipantStore, RoomCutoffStore, RoomSettingsStore } from './store.ts';
import type { RevocationStore } from '../tokens/store.ts';

/**
 * The room service API (docs/reference/room-api.md): identical on the api and token hosts, with
 * the token API's order of checks, scoped to the credential's project.
 */
export function registerRtcRoomRoutes(app: FastifyInstance, ctx: HttpContext<LiveParticipantStore & RevocationStore & ProjectStore & CredentialStore & RoomCutoffStore & RoomSettingsStore & GrantPermissionStore>): void {
  const gate = { onRequest: tokenApiGate(ctx) };
  // metadata and data messages are larger than the token API's bodies (docs/reference/room-api.md, "Limits")
  const dataGate = { onRequest: tokenApiGate(ctx, ROOM_DATA_BODY_LIMIT_BYTES) };

  registerOperation(app, ROOM_API.listRtcRooms, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    return reply.code(200).send(await listRooms(ctx.deps, cred.projectId, input.query));
  }, gate);

  registerOperation(app, ROOM_API.createRtcRoom, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    const { created, room } = await createRoom(ctx.deps, cred.projectId, input.body());
    return reply.code(created ? 201 : 200).send(room);
  }, dataGate);

  registerOperation(app, ROOM_API.updateRtcRoom, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    return reply.code(200).send(await updateRoom(ctx.deps, cred.projectId, input.params.room_id, input.body()));
  }, dataGate);

  registerOperation(app, ROOM_API.sendRtcRoomData, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    return reply.code(200).send(await sendData(ctx.deps, cred, input.params.room_id, input.body()));
  }, dataGate);

  registerOperation(app, ROOM_API.getRtcRoom, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    return reply.code(200).send(await getRoom(ctx.deps, cred.projectId, input.params.room_id));
  }, gate);

  registerOperation(app, ROOM_API.removeRtcParticipant, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    const body = input.body();
    return reply.code(200).send(await removeParticipant(ctx.deps, cred.projectId, input.params.room_id, input.params.participant_id, body));
  }, gate);

  registerOperation(app, ROOM_API.endRtcRoom, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    return reply.code(200).send(await endRoom(ctx.deps, cred.projectId, input.params.room_id));
  }, gate);

  registerOperation(app, ROOM_API.updateRtcParticipant, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    const participant = await updateParticipant(ctx.deps, cred, input.params.room_id, input.params.participant_id, input.body());
    return reply.code(200).send(participant);
  }, dataGate);

  registerOperation(app, ROOM_API.muteRtcStream, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    const { room_id: roomId, participant_id: participantId, stream_id: streamId } = input.params;
    return reply.code(200).send(await muteStream(ctx.deps, cred, roomId, participantId, streamId, input.body()));
  }, gate);
}
