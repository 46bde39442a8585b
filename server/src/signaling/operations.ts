import { z } from 'zod';
import { ROLES, SIGNALING_LEAVE_REASONS } from '@rtc/protocol';
import {
  KEEPALIVE_SECONDS, MAX_BODY_BYTES, MAX_SESSIONS_PER_ROOM, MAX_STREAMS_PER_SESSION, PRESENCE_GRACE_SECONDS,
  RETENTION_EVENTS, RETENTION_SECONDS, TOKEN_RATE_WINDOW_SECONDS, TOKEN_REQUESTS_PER_WINDOW,
} from './limits.ts';
import { joinSchema, messageSchema } from './schemas.ts';
import { requestComponent, responseComponent, type ErrorSpec, type Operation } from '../http/registry.ts';

/**
 * The signaling role (docs/protocol/signaling.md): presence, messages and the resumable event
 * stream of a room, on the host a token response names as `signaling.url`. Request bodies are the
 * schemas the signaling app validates with; responses and events as the room registry builds them
 * (signaling/rooms.ts), checked against real answers by the contract test.
 */

const PROTOCOL = 'docs/protocol/signaling.md';
const timeMs = z.int().min(0).meta({ description: 'milliseconds since the Unix epoch on the server\'s clock' });
const eventId = z.string().meta({ description: 'the place of the event in the room\'s log: the log\'s epoch, a dot, the sequence number' });
const userId = z.string().meta({ description: 'user_id of the token that joined' });
const roomId = z.string().meta({ description: 'room_id of the token' });

export const signalingParticipantSchema = responseComponent(z.strictObject({
  user_id: z.string(),
  role: z.enum(ROLES).meta({ description: 'the role of the user\'s first session' }),
  joined_at_ms: timeMs,
}), 'SignalingParticipant');

const participantList = z.array(signalingParticipantSchema).meta({ description: 'in the order they joined' });

export const signalingJoinResultSchema = responseComponent(z.strictObject({
  room_id: roomId,
  user_id: userId,
  role: z.enum(ROLES),
  participants: participantList,
  last_event_id: z.string().meta({ description: 'open the event stream with this as Last-Event-ID to miss nothing after the join' }),
}), 'SignalingJoinResult');

export const signalingLeaveResultSchema = responseComponent(z.strictObject({ left: z.literal(true) }), 'SignalingLeaveResult');

export const signalingMessageResultSchema = responseComponent(z.strictObject({
  id: eventId.meta({ description: 'the id of the message\'s event: its place in the room\'s order' }),
}), 'SignalingMessageResult');

export const signalingParticipantsSchema = responseComponent(z.strictObject({
  room_id: roomId,
  participants: participantList,
}), 'SignalingParticipants');

const event = <E extends string, D extends z.ZodType>(name: E, data: D, description: string) =>
  z.strictObject({ event: z.literal(name), id: eventId, data }).meta({ description });
const unnumberedEvent = <E extends string, D extends z.ZodType>(name: E, data: D, description: string) =>
  z.strictObject({ event: z.literal(name), data }).meta({ description });
const endData = responseComponent(z.strictObject({ at_ms: timeMs }), 'SignalingEndEventData');

/**
 * One event of `GET /v1/signaling/events`, as a reader parses it: the frame's `event` name, its
 * `id` when it has one, and its `data` line parsed as JSON.
 */
export const signalingEventSchema = responseComponent(z.discriminatedUnion('event', [
  event('snapshot', responseComponent(z.strictObject({
    room_id: roomId,
    participants: participantList,
    reset: z.boolean().meta({ description: 'true when the Last-Event-ID could not be honoured: events may have been missed' }),
  }), 'SignalingSnapshotEventData'), 'first, when the stream opens without a usable Last-Event-ID; its id is the room\'s latest'),
  event('join', responseComponent(z.strictObject({
    user_id: z.string(),
    role: z.enum(ROLES),
    at_ms: timeMs,
  }), 'SignalingJoinEventData'), 'to everyone, when a user\'s first session joins'),
  event('leave', responseComponent(z.strictObject({
    user_id: z.string(),
    reason: z.enum(SIGNALING_LEAVE_REASONS),
    at_ms: timeMs,
  }), 'SignalingLeaveEventData'), 'to everyone, when a user\'s last session goes'),
  event('message', responseComponent(z.strictObject({
    from: z.string().meta({ description: 'user_id of the sender' }),
    to: z.string().optional().meta({ description: 'present on direct messages only' }),
    data: z.unknown().meta({ description: 'the data of the message, as sent' }),
    at_ms: timeMs,
  }), 'SignalingMessageEventData'), 'to the room, or to the sessions of to; never to the sending session'),
  unnumberedEvent('ready', responseComponent(z.strictObject({
    room_id: roomId,
    replayed: z.int().min(0).meta({ description: 'events replayed after Last-Event-ID' }),
    at_ms: timeMs,
  }), 'SignalingReadyEventData'), 'on every opening, after the snapshot or the replayed events: from here on the stream is live'),
  unnumberedEvent('revoked', endData, 'to the revoked session\'s own streams, which then end'),
  unnumberedEvent('expired', endData, 'to the session\'s own streams at the token\'s exp, which then end'),
]), 'SignalingEvent');

/** The body of a `text/event-stream` answer, which no JSON Schema describes beyond its being text. */
const eventStreamSchema = z.string().meta({
  description: `Server-Sent Events, UTF-8: \`retry: 1000\`, then one frame per event (\`id:\` when it has one, \`event:\`, and \`data:\` `
    + `holding one line of JSON); lines starting with \`:\` are keep-alive comments, written every ${KEEPALIVE_SECONDS} seconds. `
    + 'x-event-schema describes each event.',
});

const lastEventIdHeader = z.string().optional().meta({
  description: `an event id received before: the stream replays what followed it (within ${RETENTION_SECONDS} seconds and `
    + `${RETENTION_EVENTS} events, and the user's current presence), else starts with a snapshot whose reset is true`,
});

const BODY_ERRORS: readonly ErrorSpec[] = ['invalid_request', [413, 'invalid_request'], [415, 'invalid_request']];
const TOKEN_ERRORS: readonly ErrorSpec[] = ['unauthenticated', 'rate_limited', [503, 'unavailable']];
const WINDOW = TOKEN_RATE_WINDOW_SECONDS === 1 ? 'second' : `${TOKEN_RATE_WINDOW_SECONDS} seconds`;
const RATE = `Each token may make ${TOKEN_REQUESTS_PER_WINDOW} requests per ${WINDOW}, every endpoint counted, the event stream's `
  + 'opening included (429 rate_limited with Retry-After).';
const POST_AUTH = 'The signaling token travels in the body as token (a Bearer header is not read); a missing, invalid, expired or '
  + `revoked token is the same 401 unauthenticated. Order of checks: body size and type (413, 415), JSON (400), token (401), `
  + `rate limit (429), fields (400), then the operation. ${RATE}`;
const GET_AUTH = `The signaling token travels as Authorization: Bearer; every cause of refusal is the same 401. ${RATE}`;

const tokenBody = requestComponent(joinSchema, 'SignalingTokenRequest');
const EXAMPLE_TOKEN = 'eyJhbGciOiJFZERTQSIsInR5cCI6InJ0Yy1zaWduYWxpbmcrand0In0…';
const HOST = ['signaling'] as const;
const TAG = 'Signaling';

/** The signaling endpoints, by operation id. */
export const SIGNALING = {
  joinSignalingRoom: {
    id: 'joinSignalingRoom', method: 'POST', path: '/v1/signaling/join', hosts: HOST, tag: TAG,
    summary: 'Join the room\'s presence (again: no effect)',
    description: `A session (one token) is joined until it leaves, its token is revoked or expires, or it has had no open event `
      + `stream for ${PRESENCE_GRACE_SECONDS} seconds. A room takes ${MAX_SESSIONS_PER_ROOM} sessions (409 conflict). ${POST_AUTH} `
      + `See ${PROTOCOL}.`,
    auth: 'signalingBody', body: tokenBody, example: { token: EXAMPLE_TOKEN }, bodyLimitBytes: MAX_BODY_BYTES,
    responses: { 200: { description: 'the join result', schema: signalingJoinResultSchema } },
    errors: [...BODY_ERRORS, ...TOKEN_ERRORS, 'conflict'],
  },
  leaveSignalingRoom: {
    id: 'leaveSignalingRoom', method: 'POST', path: '/v1/signaling/leave', hosts: HOST, tag: TAG,
    summary: 'Leave the room (not joined: no effect)',
    description: `The session's event streams end, after its own leave event when it was the user's last session. ${POST_AUTH}`,
    auth: 'signalingBody', body: tokenBody, example: { token: EXAMPLE_TOKEN }, bodyLimitBytes: MAX_BODY_BYTES,
    responses: { 200: { description: 'left', schema: signalingLeaveResultSchema } },
    errors: [...BODY_ERRORS, ...TOKEN_ERRORS],
  },
  sendSignalingMessage: {
    id: 'sendSignalingMessage', method: 'POST', path: '/v1/signaling/messages', hosts: HOST, tag: TAG,
    summary: 'Send a message to the room, or to one participant',
    description: 'The session must be joined (409 conflict); a to that is not present in the room is 404 not_found. The message '
      + 'is in the room\'s log when this answers, so one sender\'s messages arrive in the order they were sent; the sending '
      + `session does not receive its own message. ${POST_AUTH}`,
    auth: 'signalingBody', body: requestComponent(messageSchema, 'SignalingMessageRequest'), bodyLimitBytes: MAX_BODY_BYTES,
    example: { token: EXAMPLE_TOKEN, data: { kind: 'offer', sdp: 'v=0…' }, to: 'u_3' },
    responses: { 200: { description: 'in the room\'s log', schema: signalingMessageResultSchema } },
    errors: [...BODY_ERRORS, ...TOKEN_ERRORS, 'conflict', 'not_found'],
  },
  listSignalingParticipants: {
    id: 'listSignalingParticipants', method: 'GET', path: '/v1/signaling/participants', hosts: HOST, tag: TAG,
    summary: 'The room\'s participants (joining is not needed)', description: GET_AUTH, auth: 'signaling',
    responses: { 200: { description: 'the participants', schema: signalingParticipantsSchema } },
    errors: TOKEN_ERRORS,
  },
  openSignalingEvents: {
    id: 'openSignalingEvents', method: 'GET', path: '/v1/signaling/events', hosts: HOST, tag: TAG,
    summary: 'The session\'s event stream (Server-Sent Events)',
    description: 'The session must be joined: otherwise 409 conflict, an ordinary JSON error sent before any byte of the stream. '
      + 'Each room has one log: every join, leave and message takes the next id in it, and every stream delivers the events it may '
      + 'see in that order. A reader that lost its stream reopens it with Last-Event-ID and gets every event it missed, then ready, '
      + `then live events. A session keeps at most ${MAX_STREAMS_PER_SESSION} streams (one more ends the oldest); a reader more than `
      + `1 MiB behind is disconnected and resumes. ${GET_AUTH} See ${PROTOCOL}.`,
    auth: 'signaling', headers: { 'Last-Event-ID': lastEventIdHeader },
    responses: {
      200: { description: 'the event stream, until the session ends', contentType: 'text/event-stream', schema: eventStreamSchema, events: signalingEventSchema },
    },
    errors: [...TOKEN_ERRORS, 'conflict'],
  },
} satisfies Record<string, Operation>;
const SIGNALING_ENDPOINTS: readonly Operation[] = Object.values(SIGNALING);

/** `preflightSignalingJoin` for `/v1/signaling/join`. */
const preflightId = (path: string): string =>
  `preflightSignaling${path.slice(path.lastIndexOf('/') + 1).replace(/^./, (c) => c.toUpperCase())}`;

/** Every path under /v1/signaling/ answers CORS preflights (one route, `OPTIONS /v1/signaling/*`). */
const PREFLIGHTS: readonly Operation[] = [...new Set(SIGNALING_ENDPOINTS.map((op) => op.path))].map((path) => ({
  id: preflightId(path), method: 'OPTIONS', path, hosts: HOST, tag: 'Signaling: CORS preflight',
  summary: 'CORS preflight',
  description: 'Browsers may call the signaling host from any origin: tokens travel in bodies and headers, never cookies. Every '
    + 'request with an Origin gets Access-Control-Allow-Origin: * and exposes Retry-After and X-Request-Id.',
  auth: 'none',
  responses: {
    204: {
      description: 'allowed',
      headers: {
        'Access-Control-Allow-Methods': 'GET, POST',
        'Access-Control-Allow-Headers': 'authorization, content-type, last-event-id',
        'Access-Control-Max-Age': '600',
      },
    },
  },
  errors: [],
}));

/** The signaling host's operations; its `GET /health` is the shared `getHealth`. */
export const SIGNALING_OPERATIONS: readonly Operation[] = [...SIGNALING_ENDPOINTS, ...PREFLIGHTS];
