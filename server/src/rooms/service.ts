import {
  DEFAULT_EMPTY_TIMEOUT_SECONDS, MAX_PARTICIPANT_ATTRIBUTES, MAX_PARTICIPANT_ATTRIBUTES_BYTES, MAX_ROOMS_CREATED_AHEAD, MAX_SERVER_DATA_BYTES,
  MAX_STREAM_ID, ROOM_CREATIONS_PER_MINUTE,
  type DataMessageRequest, type DataMessageSent, type ParticipantRemoved, type ParticipantUpdate, type RemovalRequest, type Role,
  type RoomCreateRequest, type RoomEnded, type RoomList, type RoomUpdate, type RtcParticipant, type RtcRoom, type StreamMuteRequest,
} from '@rtc/protocol';
import { ApiError, rateLimited } from '../core/errors.ts';
import { decodeCursor, DEFAULT_PAGE_LIMIT, encodeCursor, type CursorScope } from '../core/cursor.ts';
import { MEDIA_NODE_STALE_SECONDS } from './presence.ts';
import type { Scopes } from '../customers/store.ts';
import { mergeAttributes } from './rows.ts';
import type { GrantPermissionStore, LiveParticipantRecord, RoomCutoffRecord, RoomCutoffStore, RoomRecord, RoomSettingsStore } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import type { ProjectStore } from '../customers/store.ts';
import type { LiveParticipantStore } from './store.ts';
import type { RevocationStore } from '../tokens/store.ts';
import { roomCutoffAt } from './cutoff.ts';

/** A live participant and a live room as the room service API shows them (docs/reference/room-api.md). */
export type ParticipantView = RtcParticipant;
export type RoomView = RtcRoom;
/** The body of `PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}`: permissions, metadata and attributes. */
export type ParticipantPatch = ParticipantUpdate;
/** The optional body of a removal, what it stored, and what ending a room stored (docs/reference/room-api.md). */
export type { ParticipantRemoved, RemovalRequest, RoomEnded, StreamMuteRequest };

/** The stores the room service use cases read and write. */
export type RoomServiceStore = LiveParticipantStore & RevocationStore & ProjectStore & RoomCutoffStore & RoomSettingsStore & GrantPermissionStore;

const participantView = (p: LiveParticipantRecord): ParticipantView => ({
  participant_id: p.participantId,
  user_id: p.userId,
  // the role of the grant the participant joined with: one of the token API's roles
  role: p.role as Role,
  publish_streams: [...p.publishStreams],
  subscribe_streams: [...p.subscribeStreams],
  subscribe_room: p.subscribeRoom,
  joined_at: p.joinedAt,
  metadata: p.metadata,
  attributes: { ...p.attributes },
  streams: p.streams.map((s) => ({
    stream_id: s.streamId, kind: s.kind, source: s.source, muted: s.muted, layers: s.layers.map((l) => ({ ...l })),
  })),
  quality: p.quality ? {
    bitrate_in: p.quality.bitrateIn, bitrate_out: p.quality.bitrateOut, packet_loss_in: p.quality.packetLossIn,
    packet_loss_out: p.quality.packetLossOut, rtt_ms: p.quality.rttMs, layers: { ...p.quality.layers }, updated_at: p.quality.updatedAt,
  } : null,
  media_node: p.mediaNode,
});

/** Participants of media nodes seen within the staleness bound (a crashed node's rows are ignored), of one room or a page's. */
function live(deps: ServiceDeps<RoomServiceStore>, projectId: string, rooms: string | readonly string[]): Promise<LiveParticipantRecord[]> {
  return deps.store.listLiveParticipants(projectId, rooms, nowSec(deps.clock) - MEDIA_NODE_STALE_SECONDS);
}

/** The stream ids the room's live participants may publish (docs/console.md, "Share links": a guest's are chosen apart from them). */
export async function publishableStreams(deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string): Promise<number[]> {
  return (await live(deps, projectId, roomId)).flatMap((p) => p.publishStreams);
}

/**
 * Groups participants (oldest join first) into rooms and adds the rooms whose settings are stored,
 * by room id. A stored room without live participants is shown once the media node saw it empty
 * (or from its creation): one still marked occupied has its participants between two nodes.
 */
function toRooms(participants: readonly LiveParticipantRecord[], records: readonly RoomRecord[]): RoomView[] {
  const byId = new Map(records.map((r) => [r.roomId, r]));
  const rooms = new Map<string, { view: RoomView; participants: ParticipantView[]; nodes: Map<string, number> }>();
  for (const p of participants) {
    let room = rooms.get(p.roomId);
    if (!room) {
      const list: ParticipantView[] = [];
      const settings = byId.get(p.roomId);
      room = {
        view: {
          room_id: p.roomId, media_node: p.mediaNode, media_nodes: [], started_at: p.roomStartedAt, metadata: settings?.metadata ?? '',
          max_participants: settings?.maxParticipants ?? 0, empty_timeout: settings?.emptyTimeout ?? 0, participants: list,
        },
        participants: list,
        nodes: new Map(),
      };
      rooms.set(p.roomId, room);
    }
    room.participants.push(participantView(p));
    // each node's room opened at its own time: the room started on the earliest (docs/reference/room-api.md, "Presence")
    const opened = room.nodes.get(p.mediaNode);
    if (opened === undefined || p.roomStartedAt < opened) room.nodes.set(p.mediaNode, p.roomStartedAt);
  }
  const views: RoomView[] = [...rooms.values()].map(({ view, nodes }) => {
    const order = [...nodes].sort((a, b) => a[1] - b[1]).map(([node]) => node);
    return { ...view, media_node: order[0] ?? null, media_nodes: order, started_at: nodes.get(order[0] ?? '') ?? view.started_at };
  });
  for (const r of records) {
    if (rooms.has(r.roomId) || r.emptiedAt === null) continue;
    views.push(recordView(r));
  }
  return views.sort((a, b) => (a.room_id < b.room_id ? -1 : a.room_id > b.room_id ? 1 : 0));
}

const recordView = (r: RoomRecord): RoomView => ({
  room_id: r.roomId, media_node: null, media_nodes: [], started_at: r.createdAt, metadata: r.metadata, max_participants: r.maxParticipants,
  empty_timeout: r.emptyTimeout, participants: [],
});

const roomsAheadFull = (): ApiError => new ApiError('conflict',
  `the project holds ${MAX_ROOMS_CREATED_AHEAD} rooms created ahead that nobody joined yet; `
  + 'rooms count again once they start or their empty_timeout runs out');
const roomNotFound = (): ApiError => new ApiError('not_found', 'the room has no participant and no stored settings');
const participantNotFound = (): ApiError => new ApiError('not_found', 'no such participant in this room');

/** `GET /v1/rtc/rooms`: paging and the room id filter (docs/reference/room-api.md, "Listing rooms"). */
export interface RoomListQuery {
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
  readonly room_ids?: string | undefined;
}

/**
 * One page of the project's live rooms, by room id. The cursor names the last room id of the page, not
 * a room: rooms that end meanwhile never make it invalid, and every room live through the whole
 * listing is on exactly one page.
 */
export async function listRooms(deps: ServiceDeps<RoomServiceStore>, projectId: string, query: RoomListQuery = {}): Promise<RoomList> {
  const scope: CursorScope = { listing: 'rtc_rooms', filters: { room_ids: query.room_ids } };
  const afterId = query.cursor === undefined ? undefined : decodeCursor(scope, query.cursor);
  const roomIds = query.room_ids === undefined ? undefined : [...new Set(query.room_ids.split(','))];
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const now = nowSec(deps.clock);
  // the page's room ids first, one more than the page to know whether another follows; then only those rooms are read
  const ids = await deps.store.listRoomIds(projectId, { afterId, roomIds, limit: limit + 1, seenSince: now - MEDIA_NODE_STALE_SECONDS }, now);
  const pageIds = ids.slice(0, limit);
  const [participants, records] = pageIds.length === 0 ? [[], []] : await Promise.all([
    live(deps, projectId, pageIds), deps.store.listRoomRecords(projectId, pageIds, now),
  ]);
  const last = pageIds[pageIds.length - 1];
  return { rooms: toRooms(participants, records), next_cursor: ids.length > limit && last ? encodeCursor(scope, last) : null };
}

async function findRoom(deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string): Promise<{
  readonly view: RoomView | undefined; readonly participants: LiveParticipantRecord[]; readonly record: RoomRecord | undefined;
}> {
  const [participants, record] = await Promise.all([
    live(deps, projectId, roomId), deps.store.getRoomRecord(projectId, roomId, nowSec(deps.clock)),
  ]);
  return { view: toRooms(participants, record ? [record] : [])[0], participants, record };
}

export async function getRoom(deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string): Promise<RoomView> {
  const { view } = await findRoom(deps, projectId, roomId);
  if (!view) throw roomNotFound();
  return view;
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
 * issued) and after a restart (docs/decisions/rooms.md, "Removals cut off the user's grants").
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
  roomId: string, participantId: string, patch: ParticipantPatch,
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
  const changesPermissions = patch.publish_streams !== undefined || patch.subscribe_streams !== undefined || patch.subscribe_room !== undefined;
  const changesMetadata = patch.metadata !== undefined || patch.attributes !== undefined;
  // checked again by the store on the attributes it merges into: a concurrent change may have added to them meanwhile
  if (patch.attributes !== undefined) checkAttributes(mergeAttributes(current.attributes, patch.attributes));
  // a change the media node might only hear of much later would be answered as done while not
  // enforced (docs/reference/room-api.md): refused until the bus reaches the nodes again
  refuseWhileBusDown(deps, 'participant changes');
  let updated: LiveParticipantRecord | undefined = current;
  if (changesPermissions) {
    updated = await deps.store.updateLiveParticipant(participantId, { publishStreams, subscribeStreams, subscribeRoom });
    if (!updated) throw participantNotFound();
    // kept on every grant the participant used, until each expires: a reconnection with one of them gets them again;
    // the change's time orders it against others (docs/decisions/rooms.md, "The newest permission change wins")
    const setAt = deps.clock.nowMs();
    const now = nowSec(deps.clock);
    await deps.store.putGrantPermissions(updated.grants.filter((g) => g.expiresAt > now).map((g) => ({
      grantId: g.grantId, projectId: cred.projectId, expiresAt: g.expiresAt, publishStreams, subscribeStreams, subscribeRoom, setAt,
    })));
    await deps.bus.publish({
      type: 'participant.updated', projectId: cred.projectId, roomId, participantId,
      publish: publishStreams, subscribe: subscribeStreams, subscribeRoom, setAt,
    });
  }
  if (changesMetadata) {
    updated = await deps.store.updateLiveParticipantMetadata(participantId, { metadata: patch.metadata, attributes: patch.attributes }, checkAttributes);
    if (!updated) throw participantNotFound();
    await deps.bus.publish({
      type: 'participant.metadata', projectId: cred.projectId, roomId, participantId,
      metadata: updated.metadata, attributes: { ...updated.attributes },
    });
  }
  return participantView(updated);
}

/** The bounds of a participant's attributes once merged (docs/reference/room-api.md, "Limits"). */
function checkAttributes(attributes: Readonly<Record<string, string>>): void {
  const entries = Object.entries(attributes);
  if (entries.length > MAX_PARTICIPANT_ATTRIBUTES) {
    throw new ApiError('invalid_request', `a participant may hold at most ${MAX_PARTICIPANT_ATTRIBUTES} attributes`);
  }
  const bytes = entries.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (bytes > MAX_PARTICIPANT_ATTRIBUTES_BYTES) {
    throw new ApiError('invalid_request', `a participant's attributes may hold at most ${MAX_PARTICIPANT_ATTRIBUTES_BYTES} bytes of keys and values`);
  }
}

/** 503 while the bus may not reach the media nodes in time (a cluster cut off from Redis): nothing is done, retry. */
function refuseWhileBusDown(deps: ServiceDeps<RoomServiceStore>, what: string): void {
  if (deps.bus.live?.() === false) {
    throw new ApiError('unavailable', `${what} cannot reach the media nodes right now; retry shortly`, { retryAfterSec: 1 });
  }
}

const settingsEvent = (r: RoomRecord) => ({
  type: 'room.updated' as const, projectId: r.projectId, roomId: r.roomId, metadata: r.metadata,
  maxParticipants: r.maxParticipants, emptyTimeout: r.emptyTimeout,
});

/**
 * `POST /v1/rtc/rooms`: stores a room's settings ahead of time; idempotent on the room id. When the
 * room already has stored settings they are answered unchanged (`created` false); `PATCH` changes them.
 */
export async function createRoom(
  deps: ServiceDeps<RoomServiceStore>, projectId: string, request: RoomCreateRequest,
): Promise<{ readonly created: boolean; readonly room: RoomView }> {
  const rate = await deps.limiter.hit(`rooms:${projectId}`, ROOM_CREATIONS_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  const now = nowSec(deps.clock);
  const participants = await live(deps, projectId, request.room_id);
  if (participants.length > 0) refuseWhileBusDown(deps, 'room settings');
  const stored = await deps.store.createRoom({
    projectId, roomId: request.room_id, metadata: request.metadata ?? '', maxParticipants: request.max_participants ?? 0,
    emptyTimeout: request.empty_timeout ?? DEFAULT_EMPTY_TIMEOUT_SECONDS, createdAt: now,
    // a room somebody is in already is occupied; otherwise it is kept empty_timeout seconds from now
    emptiedAt: participants.length > 0 ? null : now,
  }, now, MAX_ROOMS_CREATED_AHEAD);
  if (!stored) throw roomsAheadFull();
  const { room, created } = stored;
  if (created && participants.length > 0) await deps.bus.publish(settingsEvent(room));
  return { created, room: toRooms(participants, [room])[0]! };
}

/**
 * `PATCH /v1/rtc/rooms/{room_id}`: changes a live room's metadata and settings; a room that arose
 * from joins gets its settings stored now (empty_timeout 0 unless given). 404 when the room has
 * neither participants nor stored settings.
 */
export async function updateRoom(
  deps: ServiceDeps<RoomServiceStore>, projectId: string, roomId: string, update: RoomUpdate,
): Promise<RoomView> {
  const now = nowSec(deps.clock);
  const found = await findRoom(deps, projectId, roomId);
  if (!found.view) throw roomNotFound();
  refuseWhileBusDown(deps, 'room settings');
  const patch = { metadata: update.metadata, maxParticipants: update.max_participants, emptyTimeout: update.empty_timeout };
  let record = found.record && await deps.store.updateRoom(projectId, roomId, patch, now);
  if (!record) {
    const stored = await deps.store.createRoom({
      projectId, roomId, metadata: update.metadata ?? '', maxParticipants: update.max_participants ?? 0,
      emptyTimeout: update.empty_timeout ?? 0, createdAt: now, emptiedAt: found.participants.length > 0 ? null : now,
    }, now);
    record = stored?.created ? stored.room : await deps.store.updateRoom(projectId, roomId, patch, now);
    if (!record) throw roomNotFound();
  }
  await deps.bus.publish(settingsEvent(record));
  return toRooms(found.participants, [record])[0]!;
}

/** Standard base64 (RFC 4648 section 4), padded: the bytes, or undefined when the text is not such base64. */
function decodeBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  // stray bits in the last character make another text of the same bytes: refused, as not canonical
  return bytes.toString('base64') === text ? bytes : undefined;
}

/**
 * `POST /v1/rtc/rooms/{room_id}/data`: a message to the room's participants (to those named, when
 * destinations are given), carried by the bus to every media node, which sends it to its matching
 * sessions as `server_data`. The answer counts the participants presence lists as addressed.
 */
export async function sendData(
  deps: ServiceDeps<RoomServiceStore>, cred: { readonly projectId: string; readonly scopes: Scopes },
  roomId: string, request: DataMessageRequest,
): Promise<DataMessageSent> {
  const bytes = decodeBase64(request.data);
  if (!bytes) throw new ApiError('invalid_request', 'data must be standard base64 (RFC 4648, with padding)');
  if (bytes.length > MAX_SERVER_DATA_BYTES) throw new ApiError('invalid_request', `data must be at most ${MAX_SERVER_DATA_BYTES} bytes once decoded`);
  if (!cred.scopes.publisher) throw new ApiError('scope_denied', 'sending data to a room needs the publisher scope on the credential');
  const found = await findRoom(deps, cred.projectId, roomId);
  if (!found.view) throw roomNotFound();
  refuseWhileBusDown(deps, 'data messages');
  const participantIds = [...new Set(request.destination_participant_ids ?? [])];
  const userIds = [...new Set(request.destination_user_ids ?? [])];
  const everyone = participantIds.length === 0 && userIds.length === 0;
  const recipients = found.participants
    .filter((p) => everyone || participantIds.includes(p.participantId) || userIds.includes(p.userId)).length;
  await deps.bus.publish({
    type: 'room.data', projectId: cred.projectId, roomId, data: request.data, topic: request.topic ?? null, participantIds, userIds,
  });
  return { sent: true, recipients };
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
