import type { ParticipantPermissions, Role, RtcParticipant, RtcRoom } from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';
import { MEDIA_NODE_STALE_SECONDS } from './presence.ts';
import type { Scopes } from '../customers/store.ts';
import type { LiveParticipantRecord } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import type { ProjectStore } from '../customers/store.ts';
import type { LiveParticipantStore } from './store.ts';
import type { RevocationStore } from '../tokens/store.ts';

/** A live participant and a live room as the room service API shows them (docs/reference/room-api.md). */
export type ParticipantView = RtcParticipant;
export type RoomView = RtcRoom;
/** The body of `PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}`. */
export type PermissionsPatch = ParticipantPermissions;

const participantView = (p: LiveParticipantRecord): ParticipantView => ({
  participant_id: p.participantId,
  user_id: p.userId,
  // the role of the grant the participant joined with: one of the token API's roles
  role: p.role as Role,
  publish_streams: [...p.publishStreams],
  subscribe_streams: [...p.subscribeStreams],
  subscribe_room: p.subscribeRoom,
  joined_at: p.joinedAt,
});

/** Participants of media nodes seen within the staleness bound (a crashed node's rows are ignored). */
function live(deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, projectId: string, roomId?: string): Promise<LiveParticipantRecord[]> {
  return deps.store.listLiveParticipants(projectId, roomId, nowSec(deps.clock) - MEDIA_NODE_STALE_SECONDS);
}

/** Groups participants (oldest join first) into rooms, oldest room first. */
function toRooms(participants: readonly LiveParticipantRecord[]): RoomView[] {
  const rooms = new Map<string, { view: RoomView; participants: ParticipantView[] }>();
  for (const p of participants) {
    let room = rooms.get(p.roomId);
    if (!room) {
      const list: ParticipantView[] = [];
      room = { view: { room_id: p.roomId, media_node: p.mediaNode, started_at: p.roomStartedAt, participants: list }, participants: list };
      rooms.set(p.roomId, room);
    }
    room.participants.push(participantView(p));
  }
  return [...rooms.values()].map((r) => r.view)
    .sort((a, b) => a.started_at - b.started_at);
}

const roomNotFound = (): ApiError => new ApiError('not_found', 'the room has no participant');
const participantNotFound = (): ApiError => new ApiError('not_found', 'no such participant in this room');

export async function listRooms(deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, projectId: string): Promise<{ rooms: RoomView[] }> {
  return { rooms: toRooms(await live(deps, projectId)) };
}

export async function getRoom(deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, projectId: string, roomId: string): Promise<RoomView> {
  const room = toRooms(await live(deps, projectId, roomId))[0];
  if (!room) throw roomNotFound();
  return room;
}

async function findParticipant(deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, projectId: string, roomId: string, participantId: string): Promise<LiveParticipantRecord> {
  const found = (await live(deps, projectId, roomId)).find((p) => p.participantId === participantId);
  if (!found) throw participantNotFound();
  return found;
}

/**
 * Revokes every grant the participants have used that has not expired, durable first and then
 * published, like `revokeByHandle`: each session closes with 4003 `revoked` and its grants are
 * refused from then on (docs/decisions.md, "Removing a participant revokes its grants").
 */
async function revokeGrants(deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, participants: readonly LiveParticipantRecord[]): Promise<void> {
  const now = nowSec(deps.clock);
  const revocations = participants.flatMap((p) => p.grants
    .filter((g) => g.expiresAt >= now)
    .map((g) => ({ grantId: g.grantId, projectId: p.projectId, expiresAt: g.expiresAt })));
  for (const r of revocations) await deps.store.insertRevocation(r);
  for (const r of revocations) await deps.bus.publish({ type: 'grant.revoked', ...r });
}

export async function removeParticipant(
  deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, projectId: string, roomId: string, participantId: string,
): Promise<{ removed: true }> {
  await revokeGrants(deps, [await findParticipant(deps, projectId, roomId, participantId)]);
  return { removed: true };
}

export async function endRoom(deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, projectId: string, roomId: string): Promise<{ ended: true; participants: number }> {
  const participants = await live(deps, projectId, roomId);
  if (participants.length === 0) throw roomNotFound();
  await revokeGrants(deps, participants);
  return { ended: true, participants: participants.length };
}

/**
 * Changes what a live participant may publish and receive, at once and without a reconnection
 * (docs/reference/room-api.md, "Changing permissions"). Fields left out keep their value; a list
 * of streams replaces `subscribe_room`. The rules of a token request apply: the audience role never
 * publishes, and the credential's scopes bound what is granted.
 */
export async function updateParticipant(
  deps: ServiceDeps<LiveParticipantStore & RevocationStore & ProjectStore>, cred: { readonly projectId: string; readonly scopes: Scopes },
  roomId: string, participantId: string, patch: PermissionsPatch,
): Promise<ParticipantView> {
  if (patch.subscribe_room === true && patch.subscribe_streams !== undefined && patch.subscribe_streams.length > 0) {
    throw new ApiError('invalid_request', 'subscribe_room cannot be combined with subscribe_streams');
  }
  const current = await findParticipant(deps, cred.projectId, roomId, participantId);
  const publishStreams = [...(patch.publish_streams ?? current.publishStreams)];
  const subscribeRoom = patch.subscribe_room ?? (patch.subscribe_streams !== undefined ? false : current.subscribeRoom);
  const subscribeStreams = subscribeRoom ? [] : [...(patch.subscribe_streams ?? current.subscribeStreams)];
  if (current.role === 'audience' && publishStreams.length > 0) {
    throw new ApiError('invalid_request', 'the audience role cannot publish: publish_streams must be empty');
  }
  // what the caller grants, not what the participant keeps, needs the scopes
  if ((patch.publish_streams?.length ?? 0) > 0 && !cred.scopes.publisher) {
    throw new ApiError('scope_denied', 'publish_streams needs the publisher scope on the credential');
  }
  if (((patch.subscribe_streams?.length ?? 0) > 0 || patch.subscribe_room === true) && !cred.scopes.subscriber) {
    throw new ApiError('scope_denied',
      `${patch.subscribe_room === true ? 'subscribe_room' : 'subscribe_streams'} needs the subscriber scope on the credential`);
  }
  // a change the media node might only hear of much later would be answered as done while not
  // enforced (docs/reference/room-api.md): refused until the bus reaches the nodes again
  if (deps.bus.live?.() === false) {
    throw new ApiError('unavailable', 'permission changes cannot reach the media nodes right now; retry shortly', { retryAfterSec: 1 });
  }
  const updated = await deps.store.updateLiveParticipant(participantId, { publishStreams, subscribeStreams, subscribeRoom });
  if (!updated) throw participantNotFound();
  await deps.bus.publish({
    type: 'participant.updated', projectId: cred.projectId, roomId, participantId,
    publish: publishStreams, subscribe: subscribeStreams, subscribeRoom,
  });
  return participantView(updated);
}
