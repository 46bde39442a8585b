import {
  MAX_ROOMS_CREATED_AHEAD, MAX_SERVER_DATA_BYTES, ROOM_CREATIONS_PER_MINUTE, ROOM_DATA_BODY_LIMIT_BYTES, TOKEN_API_BODY_LIMIT_BYTES,
} from '@rtc/protocol';
import {
  dataMessageSchema, participantPatchSchema, removalRequestSchema, roomCreateSchema, roomListQuerySchema, roomUpdateSchema,
  streamMuteRequestSchema,
} from './schemas.ts';
import { idParam, requestComponent, type ErrorSpec, type Operation } from '../http/registry.ts';
import { consoleOperation, projectId, type ConsoleOperationSpec } from '../http/console-operation.ts';
import {
  dataMessageSentSchema, participantRemovedSchema, participantSchema, roomEndedSchema, roomListSchema, roomSchema,
} from './responses.ts';

/** The errors every room service operation can answer, in the token API's order of checks. */
const CALLER_ERRORS: readonly ErrorSpec[] = [
  'invalid_credentials', 'rate_limited', 'ip_not_allowed', 'project_archived', 'server_side_only',
];

const ORDER_OF_CHECKS = 'Order of checks, as on the token API: address blocked or over its rate limit (429), browser '
  + 'Origin (403 server_side_only), authentication (401, identical for every cause), App ID rate limit (429), IP allowlist '
  + '(403 ip_not_allowed), archived project (403 project_archived). Only the credential\'s project is visible: another '
  + 'project\'s room is 404 not_found.';

const roomId = { room_id: idParam('the room id of the tokens') };
const participant = {
  ...roomId,
  participant_id: idParam('pa_…, as listed by GET /v1/rtc/rooms/{room_id}'),
};

const participantStream = {
  ...participant,
  stream_id: idParam('a stream id the participant publishes, as listed in its streams'),
};

/** The room service API (docs/reference/room-api.md) on the api and token hosts. */
export const ROOM_API = {
  listRtcRooms: {
    id: 'listRtcRooms', method: 'GET', path: '/v1/rtc/rooms', hosts: ['api', 'token'], tag: 'Room service',
    summary: 'List the live rooms of the project, a page at a time',
    description: 'Rooms with at least one participant joined on a media node, and rooms whose settings were stored through '
      + 'this API and whose empty_timeout has not run out, ordered by room id. Page with limit and the next_cursor of the '
      + 'previous page; the cursor names a position, so rooms that end meanwhile never invalidate it. room_ids keeps only the '
      + `rooms named (comma-separated). 400 invalid_request for a bad parameter or a cursor of other filters. ${ORDER_OF_CHECKS}`,
    auth: 'basic', query: roomListQuerySchema,
    responses: { 200: { description: 'one page of the live rooms', schema: roomListSchema } },
    errors: [...CALLER_ERRORS, 'invalid_request'],
  },
  getRtcRoom: {
    id: 'getRtcRoom', method: 'GET', path: '/v1/rtc/rooms/{room_id}', hosts: ['api', 'token'], tag: 'Room service',
    summary: 'One live room and its participants',
    description: `404 not_found when the room has no participant and no stored settings. ${ORDER_OF_CHECKS}`,
    auth: 'basic', pathParams: roomId,
    responses: { 200: { description: 'the room', schema: roomSchema } },
    errors: [...CALLER_ERRORS, 'not_found'],
  },
  removeRtcParticipant: {
    id: 'removeRtcParticipant', method: 'POST', path: '/v1/rtc/rooms/{room_id}/participants/{participant_id}/remove',
    hosts: ['api', 'token'], tag: 'Room service',
    summary: 'Remove a participant from its room, optionally banning its user for a while',
    description: 'Stores a cut-off for the participant\'s user in the room, then closes every media and signaling session '
      + 'of that user in the room (4003 revoked) within about one second. Every token of that user for that room issued '
      + '(iat) at or before cut_off_at is refused from then on, also one the server never saw (a renewal just issued), '
      + 'and after a restart; with ban_seconds, cut_off_at is that far in the future, so tokens issued until then are '
      + 'refused when used (the token API still issues them). The body may be left out. 503 unavailable when the cut-off '
      + `could not be stored: nothing was claimed, retry. 404 not_found when the participant is not live. ${ORDER_OF_CHECKS}`,
    auth: 'basic', pathParams: participant, body: requestComponent(removalRequestSchema, 'RemovalRequest'), bodyOptional: true,
    bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { ban_seconds: 3600 },
    responses: { 200: { description: 'removed: what was stored', schema: participantRemovedSchema } },
    errors: [...CALLER_ERRORS, 'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'not_found', [503, 'unavailable']],
  },
  endRtcRoom: {
    id: 'endRtcRoom', method: 'POST', path: '/v1/rtc/rooms/{room_id}/end', hosts: ['api', 'token'], tag: 'Room service',
    summary: 'End a room',
    description: 'Stores a cut-off for the whole room, then closes every media and signaling session of the room (4003 '
      + 'revoked): every token for the room issued (iat) at or before cut_off_at is refused from then on, whoever it is '
      + 'for; tokens issued later open the room again. A room with no live participant is ended all the same (its '
      + `participants may be between two connections). 503 unavailable when the cut-off could not be stored. ${ORDER_OF_CHECKS}`,
    auth: 'basic', pathParams: roomId, bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    responses: { 200: { description: 'ended, with how many participants were closed and the cut-off stored', schema: roomEndedSchema } },
    errors: [...CALLER_ERRORS, [413, 'invalid_request'], [503, 'unavailable']],
  },
  updateRtcParticipant: {
    id: 'updateRtcParticipant', method: 'PATCH', path: '/v1/rtc/rooms/{room_id}/participants/{participant_id}',
    hosts: ['api', 'token'], tag: 'Room service',
    summary: 'Change what a live participant may publish and receive, its metadata and attributes',
    description: 'Applies at once, without a reconnection: streams no longer allowed stop flowing both ways and the '
      + 'client receives a permissions control message. The permissions hold for the rest of the life of every grant the '
      + 'participant used (a reconnection or renewal with one of them gets them, on any media node). Fields left out keep their value; subscribe_streams replaces '
      + 'subscribe_room. The audience role cannot publish (400); granting publish_streams needs the publisher scope and '
      + 'subscribe_streams or subscribe_room the subscriber scope (403 scope_denied). metadata replaces the participant\'s; '
      + 'attributes merge into its attributes, a key whose value is \'\' or null being deleted; every participant of the '
      + 'room receives a participant_metadata control message. 503 unavailable while the media nodes cannot be reached. '
      + ORDER_OF_CHECKS,
    auth: 'basic', pathParams: participant, body: requestComponent(participantPatchSchema, 'ParticipantPatch'),
    bodyLimitBytes: ROOM_DATA_BODY_LIMIT_BYTES,
    example: { publish_streams: [], subscribe_room: true, attributes: { hand: 'raised', seat: null } },
    responses: { 200: { description: 'the participant with its new permissions, metadata and attributes', schema: participantSchema } },
    errors: [...CALLER_ERRORS, 'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'scope_denied', 'not_found',
      [503, 'unavailable']],
  },
  createRtcRoom: {
    id: 'createRtcRoom', method: 'POST', path: '/v1/rtc/rooms', hosts: ['api', 'token'], tag: 'Room service',
    summary: 'Create a room ahead of time, with its metadata and settings',
    description: 'Stores the room\'s metadata, max_participants and empty_timeout; the room is listed from now on and '
      + 'kept empty_timeout seconds (default 300) until somebody joins, then as long as somebody is joined and '
      + 'empty_timeout seconds after the last one leaves. Idempotent on room_id: when the room already has stored '
      + 'settings, they are answered unchanged with 200 (PATCH changes them); 201 when they were stored now. '
      + `A project holds at most ${MAX_ROOMS_CREATED_AHEAD} rooms created ahead that nobody joined yet and whose empty_timeout `
      + 'has not run out: beyond, 409 conflict (the room is not stored). A project makes at most '
      + `${ROOM_CREATIONS_PER_MINUTE} calls a minute: beyond, 429 rate_limited with Retry-After. ${ORDER_OF_CHECKS}`,
    auth: 'basic', body: requestComponent(roomCreateSchema, 'RoomCreateRequest'), bodyLimitBytes: ROOM_DATA_BODY_LIMIT_BYTES,
    example: { room_id: 'standup', metadata: '{"title":"Daily standup"}', max_participants: 10, empty_timeout: 600 },
    responses: {
      201: { description: 'the room, created now', schema: roomSchema },
      200: { description: 'the room, which already had stored settings (unchanged)', schema: roomSchema },
    },
    errors: [...CALLER_ERRORS, 'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'conflict', [503, 'unavailable']],
  },
  updateRtcRoom: {
    id: 'updateRtcRoom', method: 'PATCH', path: '/v1/rtc/rooms/{room_id}', hosts: ['api', 'token'], tag: 'Room service',
    summary: 'Change a live room\'s metadata and settings',
    description: 'Fields left out keep their value. Every participant receives a room_metadata control message when the '
      + 'metadata is given; max_participants applies to the joins that follow (nobody is closed). A room that arose from '
      + 'joins gets its settings stored now, with empty_timeout 0 unless given. 404 not_found when the room has neither '
      + `participants nor stored settings; 503 unavailable while the media nodes cannot be reached. ${ORDER_OF_CHECKS}`,
    auth: 'basic', pathParams: roomId, body: requestComponent(roomUpdateSchema, 'RoomUpdate'), bodyLimitBytes: ROOM_DATA_BODY_LIMIT_BYTES,
    example: { metadata: '{"title":"Daily standup","locked":true}' },
    responses: { 200: { description: 'the room with its new settings', schema: roomSchema } },
    errors: [...CALLER_ERRORS, 'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'not_found', [503, 'unavailable']],
  },
  sendRtcRoomData: {
    id: 'sendRtcRoomData', method: 'POST', path: '/v1/rtc/rooms/{room_id}/data', hosts: ['api', 'token'], tag: 'Room service',
    summary: 'Send a data message to a room\'s participants',
    description: `Sends data (standard base64, up to ${MAX_SERVER_DATA_BYTES} bytes decoded) with an optional topic to every `
      + 'participant of the room, or to those named by destination_participant_ids or destination_user_ids (either list). '
      + 'Each media node holding the room sends it to its matching sessions as a server_data control message. recipients '
      + 'counts the live participants addressed as presence lists them at the call: a participant joining at that moment may '
      + 'or may not receive it, and nothing is kept for later joiners. Needs the publisher scope (403 scope_denied). '
      + `404 not_found when the room is not live; 503 unavailable while the media nodes cannot be reached. ${ORDER_OF_CHECKS}`,
    auth: 'basic', pathParams: roomId, body: requestComponent(dataMessageSchema, 'DataMessage'), bodyLimitBytes: ROOM_DATA_BODY_LIMIT_BYTES,
    example: { data: 'eyJ0eXBlIjoicG9sbCJ9', topic: 'poll', destination_user_ids: ['user-17'] },
    responses: { 200: { description: 'sent', schema: dataMessageSentSchema } },
    errors: [...CALLER_ERRORS, 'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'scope_denied', 'not_found',
      [503, 'unavailable']],
  },
  muteRtcStream: {
    id: 'muteRtcStream', method: 'POST', path: '/v1/rtc/rooms/{room_id}/participants/{participant_id}/streams/{stream_id}/mute',
    hosts: ['api', 'token'], tag: 'Room service',
    summary: 'Mute or unmute one stream a live participant publishes',
    description: 'With muted true, the media node holding the participant stops forwarding the stream\'s media (WebSocket '
      + 'frames and WebRTC) at once; with false it forwards it again, and asks the publisher for a key frame of a video. '
      + 'The publisher and the room\'s other participants receive a stream_muted control message; the stream stays '
      + 'published and listed, with muted set. A stream published again starts unmuted. 404 not_found when the participant '
      + 'is not live or does not publish the stream; the publisher scope is needed (403 scope_denied); 503 unavailable when '
      + `the media nodes cannot be reached right now. ${ORDER_OF_CHECKS}`,
    auth: 'basic', pathParams: participantStream, body: requestComponent(streamMuteRequestSchema, 'StreamMuteRequest'),
    bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { muted: true },
    responses: { 200: { description: 'the participant, with the stream\'s new muted state', schema: participantSchema } },
    errors: [...CALLER_ERRORS, 'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'not_found', 'scope_denied',
      [503, 'unavailable']],
  },
} satisfies Record<string, Operation>;

export const ROOM_API_OPERATIONS: readonly Operation[] = Object.values(ROOM_API);

const projectRoom = { ...projectId, room_id: idParam('the room id of the tokens') };
const projectParticipant = { ...projectRoom, participant_id: idParam('pa_…, as listed by GET /v1/projects/{id}/rooms/{room_id}') };

/**
 * A room service operation for the console: the same method and, unless `spec` names others, the same answers,
 * on the console session for a project of the account and within the account's console read limit (429).
 */
function onConsole<const S extends Omit<ConsoleOperationSpec, 'method' | 'tag' | 'responses'> & Partial<Pick<Operation, 'responses'>>>(
  op: Operation, spec: S,
) {
  return consoleOperation({
    method: op.method, tag: 'Projects', responses: op.responses, ...spec, errors: ['rate_limited', ...(spec.errors ?? [])],
  });
}

/** The room service API for the console, on its session: the same answers, the project checked against the account. */
export const ROOM_CONSOLE_API = {
  listProjectRooms: onConsole(ROOM_API.listRtcRooms, {
    id: 'listProjectRooms', path: '/v1/projects/{id}/rooms', pathParams: projectId, query: roomListQuerySchema,
    summary: 'The project\'s live rooms, for the console',
    description: 'What GET /v1/rtc/rooms answers, with the console session instead of an App Secret.',
  }),
  getProjectRoom: onConsole(ROOM_API.getRtcRoom, {
    id: 'getProjectRoom', path: '/v1/projects/{id}/rooms/{room_id}', pathParams: projectRoom,
    summary: 'One live room of the project and its participants, for the console',
    description: 'What GET /v1/rtc/rooms/{room_id} answers, with the console session.',
  }),
  updateProjectParticipant: onConsole(ROOM_API.updateRtcParticipant, {
    id: 'updateProjectParticipant', path: '/v1/projects/{id}/rooms/{room_id}/participants/{participant_id}',
    pathParams: projectParticipant,
    summary: 'Change what a live participant may publish and receive, for the console',
    description: 'What PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id} does, with the console session and '
      + 'both scopes (as the console\'s temporary tokens have).',
    body: requestComponent(participantPatchSchema, 'ParticipantPatch'), bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { publish_streams: [], subscribe_room: true },
    errors: [[503, 'unavailable']],
  }),
  removeProjectParticipant: onConsole(ROOM_API.removeRtcParticipant, {
    id: 'removeProjectParticipant', path: '/v1/projects/{id}/rooms/{room_id}/participants/{participant_id}/remove',
    pathParams: projectParticipant,
    summary: 'Remove a participant from a live room, optionally banning its user for a while, for the console',
    description: 'What POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/remove does, with the console session: '
      + 'the user\'s tokens for the room issued up to now (with ban_seconds, up to the ban\'s end) are refused and its '
      + 'sessions close within about a second. The body may be left out.',
    body: requestComponent(removalRequestSchema, 'RemovalRequest'), bodyOptional: true, bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { ban_seconds: 600 },
    responses: { 200: { description: 'the participant was removed', schema: participantRemovedSchema } },
    errors: [[503, 'unavailable']],
  }),
  muteProjectStream: onConsole(ROOM_API.muteRtcStream, {
    id: 'muteProjectStream', path: '/v1/projects/{id}/rooms/{room_id}/participants/{participant_id}/streams/{stream_id}/mute',
    pathParams: { ...projectParticipant, stream_id: participantStream.stream_id },
    summary: 'Mute or unmute one stream a live participant publishes, for the console',
    description: 'What POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/streams/{stream_id}/mute does, with the '
      + 'console session and both scopes (as the console\'s temporary tokens have).',
    body: requestComponent(streamMuteRequestSchema, 'StreamMuteRequest'), bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { muted: true },
    errors: [[503, 'unavailable']],
  }),
  endProjectRoom: onConsole(ROOM_API.endRtcRoom, {
    id: 'endProjectRoom', path: '/v1/projects/{id}/rooms/{room_id}/end', pathParams: projectRoom,
    summary: 'End a room of the project, for the console',
    description: 'What POST /v1/rtc/rooms/{room_id}/end does, with the console session.',
    errors: [[503, 'unavailable']],
  }),
} satisfies Record<string, Operation>;
