import {
  MAX_STREAM_ID,
  type ParticipantPermissions, type ParticipantRemoved, type RemovalRequest, type Role, type RoomEnded, type RtcParticipant, type RtcRoom,
  type StreamMuteRequest,
} from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';
import { MEDIA_NODE_STALE_SECONDS } from './presence.ts';
import type { Scopes } from '../customers/store.ts';
import type { LiveParticipantRecord, RoomCutoffRecord, RoomCutoffStore } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import type { ProjectStore } from '../customers/store.ts';
import type { LiveParticipantStore } from './store.ts';
import type { RevocationStore } from '../tokens/store.ts';
import { roomCutoffAt } from './cutoff.ts';

/** A live participant and a live room as the room service API shows them (docs/reference/room-api.md). */
export type ParticipantView = RtcParticipant;
export type RoomView = RtcRoom;
/** The body of `PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}`. */
export type PermissionsPatch = ParticipantPermissions;
/** The optional body of a removal, what it stored, and what ending a room stored (docs/reference/room-api.md). */
export type { ParticipantRemoved, RemovalRequest, RoomEnded, StreamMuteRequest };

/** The stores the room service use cases read and write. */
export type RoomServiceStore = LiveParticipantStore & RevocationStore & ProjectStore & RoomCutoffStore;

const participantView = (p: LiveParticipantRecord): ParticipantView => ({
  participant_id: p.participantId,
  user_id: p.userId,
  // the role of the grant the participant joined with: one of the token API's roles
  role: p.role as Role,
  publish_streams: [...p.publishStreams],
  subscribe_streams: [...p.subscribeStreams],
  subscribe_room: p.subscribeRoom,
  joined_at: p.joinedAt,
  streams: p.streams.map((s) => ({
    stream_id: s.streamId, kind: s.kind, source: s.source, muted: s.muted, layers: s.layers.map((l) => ({ ...l })),
  })),
});

/** Participants of media nodes seen within the staleness bound (a crashed node's rows are ignored). */
function live(deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId?: string): Promise<LiveParticipantRecord[]> {
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

export async function listRooms(deps: ServiceDeps<RoomServiceStore>, projectId: string): Promise<{ rooms: RoomView[] }> {
  return { rooms: toRooms(await live(deps, projectId)) };
}

export async function getRoom(deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string): Promise<RoomView> {
  const room = toRooms(await live(deps, projectId, roomId))[0];
  if (!room) throw roomNotFound();
  return room;
}

async function findParticipant(deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string, participantId: string): Promise<LiveParticipantRecord> {
  const found = (await live(deps, projectId, roomId)).find((p) => p.participantId === participantId);
  if (!found) throw participantNotFound();
  return found;
}

/**
 * Runs a removal's store and bus steps; a failure of either is 503 `unavailable`: the caller is
 * never told a cut-off is in force that may not be (docs/reference/room-api.md, "What a removal stores").
 */
async function durably<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (cause) {
    if (cause instanceof ApiError) throw cause;
    throw new ApiError('unavailable', 'the removal could not be stored; retry shortly', { retryAfterSec: 1, cause });
  }
}

/**
 * Stores the cut-off, revokes every grant the participants have used that has not expired (like
 * `revokeByHandle`), then publishes both: each session closes with 4003 `revoked`, and every grant
 * the cut-off covers is refused from then on, also one never seen by presence (a renewal just
 * issued) and after a restart (docs/decisions.md, "Removals cut off the user's grants").
 */
async function cutOff(
  deps: ServiceDeps<RoomServiceStore>, requested: RoomCutoffRecord, participants: readonly LiveParticipantRecord[],
): Promise<RoomCutoffRecord> {
  const now = nowSec(deps.clock);
  const revocations = participants.flatMap((p) => p.grants
    .filter((g) => g.expiresAt >= now)
    .map((g) => ({ grantId: g.grantId, projectId: p.projectId, expiresAt: g.expiresAt })));
  return durably(async () => {
    const stored = await deps.store.insertRoomCutoff(requested);
    for (const r of revocations) await deps.store.insertRevocation(r);
    await deps.bus.publish({ type: 'room.cut_off', ...stored });
    for (const r of revocations) await deps.bus.publish({ type: 'grant.revoked', ...r });
    return stored;
  });
}

export async function removeParticipant(
  deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string, participantId: string, request: RemovalRequest = {},
): Promise<ParticipantRemoved> {
  const participant = await durably(() => findParticipant(deps, projectId, roomId, participantId));
  const banSeconds = request.ban_seconds ?? 0;
  const stored = await cutOff(deps, roomCutoffAt(projectId, roomId, participant.userId, nowSec(deps.clock), banSeconds), [participant]);
  return {
    removed: true, user_id: participant.userId, cut_off_at: stored.cutAt,
    // a ban asked for, or one of an earlier removal still running: the stored cut-off is the ban's end
    ...((banSeconds > 0 || stored.cutAt > nowSec(deps.clock)) && { banned_until: stored.cutAt }),
  };
}

export async function endRoom(deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string): Promise<RoomEnded> {
  // a room whose participants are all between two connections (a network blip, a media node they
  // are moving off) has none live: its end is stored all the same, so their earlier grants stay out
  const participants = await durably(() => live(deps, projectId, roomId));
  const stored = await cutOff(deps, roomCutoffAt(projectId, roomId, null, nowSec(deps.clock)), participants);
  return { ended: true, participants: participants.length, cut_off_at: stored.cutAt };
}

/**
 * Changes what a live participant may publish and receive, at once and without a reconnection
 * (docs/reference/room-api.md, "Changing permissions"). Fields left out keep their value; a list
 * of streams replaces `subscribe_room`. The rules of a token request apply: the audience role never
 * publishes, and the credential's scopes bound what is granted.
 */
export async function updateParticipant(
  deps: ServiceDeps<RoomServiceStore>, cred: { readonly projectId: string; readonly scopes: Scopes },
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

const streamNotFound = (): ApiError => new ApiError('not_found', 'the participant does not publish this stream');

/**
 * Mutes or unmutes one stream a live participant publishes (docs/reference/room-api.md, "Muting a
 * stream"): its media node stops forwarding it, or forwards it again, and tells the room's members
 * with `stream_muted`. Needs the publisher scope; the checks and errors of a permission change.
 */
export async function muteStream(
  deps: ServiceDeps<RoomServiceStore>, cred: { readonly projectId: string; readonly scopes: Scopes },
  roomId: string, participantId: string, streamIdParam: string, request: StreamMuteRequest,
): Promise<ParticipantView> {
  const current = await findParticipant(deps, cred.projectId, roomId, participantId);
  const streamId = /^[1-9][0-9]{0,9}$/.test(streamIdParam) ? Number(streamIdParam) : 0;
  if (streamId < 1 || streamId > MAX_STREAM_ID || !current.streams.some((s) => s.streamId === streamId)) throw streamNotFound();
  // what a participant publishes is the publisher scope's: a credential that cannot grant publishing cannot stop or resume it
  if (!cred.scopes.publisher) throw new ApiError('scope_denied', 'muting a stream needs the publisher scope on the credential');
  if (deps.bus.live?.() === false) {
    throw new ApiError('unavailable', 'mutes cannot reach the media nodes right now; retry shortly', { retryAfterSec: 1 });
  }
  const updated = await deps.store.muteLiveStream(participantId, streamId, request.muted);
  if (!updated) throw streamNotFound();
  await deps.bus.publish({ type: 'stream.muted', projectId: cred.projectId, roomId, participantId, streamId, muted: request.muted });
  return participantView(updated);
}
