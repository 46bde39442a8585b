import { z } from 'zod';
import {
  MAX_ATTRIBUTE_KEY_BYTES, MAX_ATTRIBUTE_VALUE_BYTES, MAX_DATA_DESTINATIONS, MAX_DATA_TOPIC_BYTES, MAX_EMPTY_TIMEOUT_SECONDS,
  MAX_PARTICIPANT_ATTRIBUTES, MAX_PARTICIPANT_METADATA_BYTES, MAX_PUBLISH_STREAMS, MAX_ROOM_METADATA_BYTES, MAX_SUBSCRIBE_STREAMS,
  DEFAULT_EMPTY_TIMEOUT_SECONDS,
  type DataMessageRequest, type RoomCreateRequest, type RoomUpdate,
} from '@rtc/protocol';
import type { ParticipantPatch, RemovalRequest, StreamMuteRequest } from './service.ts';
import { MAX_BAN_SECONDS } from './cutoff.ts';
import { flag, opaqueId, streamList } from '../tokens/schemas.ts';
import { cursorParam, limitParam, queryText } from '../http/query.ts';
import { MAX_PAGE_LIMIT } from '../core/cursor.ts';
import { typeError } from '../http/validate.ts';

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Text of at most `max` UTF-8 bytes without NUL (PostgreSQL text cannot hold it). */
const boundedText = (field: string, max: number) => z.string(typeError(field, 'a string'))
  .refine((v) => !v.includes('\u0000'), { error: `${field} must not contain NUL characters` })
  .refine((v) => utf8Bytes(v) <= max, { error: `${field} must be at most ${max} bytes of UTF-8` });

const notAnObject = { error: (issue: { code: string }) => (issue.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) };

const roomMetadata = boundedText('metadata', MAX_ROOM_METADATA_BYTES)
  .meta({ description: `the room's metadata, any text up to ${MAX_ROOM_METADATA_BYTES} bytes (JSON is common); sent to every participant` });
const maxParticipants = z.int({ error: 'max_participants must be an integer from 0 to 256' })
  .min(0, { error: 'max_participants must be an integer from 0 to 256' })
  .max(256, { error: 'max_participants must be an integer from 0 to 256' })
  .meta({ description: 'the most participants admitted at once (a join beyond is closed with 4009 room_full); 0: no bound but the media node\'s 256' });
const emptyTimeout = z.int({ error: `empty_timeout must be an integer from 0 to ${MAX_EMPTY_TIMEOUT_SECONDS}` })
  .min(0, { error: `empty_timeout must be an integer from 0 to ${MAX_EMPTY_TIMEOUT_SECONDS}` })
  .max(MAX_EMPTY_TIMEOUT_SECONDS, { error: `empty_timeout must be an integer from 0 to ${MAX_EMPTY_TIMEOUT_SECONDS}` });

/** Body of `POST /v1/rtc/rooms` (docs/reference/room-api.md, "Room settings"). */
export const roomCreateSchema = z.strictObject({
  room_id: opaqueId('room_id'),
  metadata: roomMetadata.optional(),
  max_participants: maxParticipants.optional(),
  empty_timeout: emptyTimeout.optional().meta({
    description: `seconds the room is kept once empty, or once created until somebody joins; default ${DEFAULT_EMPTY_TIMEOUT_SECONDS}`,
  }),
}, notAnObject) satisfies z.ZodType<RoomCreateRequest>;

/** Body of `PATCH /v1/rtc/rooms/{room_id}`: fields left out keep their value. */
export const roomUpdateSchema = z.strictObject({
  metadata: roomMetadata.optional(),
  max_participants: maxParticipants.optional(),
  empty_timeout: emptyTimeout.optional().meta({ description: 'seconds the room is kept once empty' }),
}, notAnObject) satisfies z.ZodType<RoomUpdate>;

const attributeKey = /^[\x21-\x7e]+$/;

/** Attributes to merge: printable ASCII keys, string values; '' or null deletes the key. */
const attributesPatch = z.record(
  z.string().min(1, { error: 'attributes keys must not be empty' })
    .max(MAX_ATTRIBUTE_KEY_BYTES, { error: `attributes keys must be at most ${MAX_ATTRIBUTE_KEY_BYTES} characters` })
    .regex(attributeKey, { error: 'attributes keys must be printable ASCII characters without spaces' }),
  boundedText('attributes values', MAX_ATTRIBUTE_VALUE_BYTES).nullable(),
  typeError('attributes', 'an object of string values'),
).refine((v) => Object.keys(v).length <= MAX_PARTICIPANT_ATTRIBUTES, {
  error: `attributes may name at most ${MAX_PARTICIPANT_ATTRIBUTES} keys`,
}).meta({ description: `merged into the participant's attributes; a key whose value is '' or null is deleted` });

/**
 * Body of `PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}` (docs/reference/room-api.md,
 * "Changing permissions"): the stream rules of a token request; unknown fields are rejected.
 */
export const participantPatchSchema = z.strictObject({
  publish_streams: streamList('publish_streams', MAX_PUBLISH_STREAMS).optional()
    .meta({ description: 'stream ids the participant may publish from now on; needs the publisher scope when not empty' }),
  subscribe_streams: streamList('subscribe_streams', MAX_SUBSCRIBE_STREAMS).optional()
    .meta({ description: 'stream ids the participant may receive from now on (replaces subscribe_room); needs the subscriber scope when not empty' }),
  subscribe_room: flag('subscribe_room').optional()
    .meta({ description: 'receive every stream of the room; true needs the subscriber scope' }),
  metadata: boundedText('metadata', MAX_PARTICIPANT_METADATA_BYTES).optional()
    .meta({ description: `replaces the participant's metadata (up to ${MAX_PARTICIPANT_METADATA_BYTES} bytes)` }),
  attributes: attributesPatch.optional(),
}, notAnObject) satisfies z.ZodType<ParticipantPatch>;

/**
 * Optional body of `POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/remove`
 * (docs/reference/room-api.md, "Banning"); no body, or `{}`, removes without a ban.
 */
export const removalRequestSchema = z.strictObject({
  ban_seconds: z.int({ error: `ban_seconds must be an integer from 1 to ${MAX_BAN_SECONDS}` })
    .min(1, { error: `ban_seconds must be an integer from 1 to ${MAX_BAN_SECONDS}` })
    .max(MAX_BAN_SECONDS, { error: `ban_seconds must be at most ${MAX_BAN_SECONDS} (seven days)` })
    .optional()
    .meta({ description: 'keep the user out of the room this many seconds: the room\'s tokens of the user issued until then are refused' }),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) }) satisfies z.ZodType<RemovalRequest>;

const destinationIds = (field: string) => z.array(opaqueId(field), typeError(field, 'an array of ids'))
  .max(MAX_DATA_DESTINATIONS, { error: `${field} may list at most ${MAX_DATA_DESTINATIONS} ids` });

/** Body of `POST /v1/rtc/rooms/{room_id}/data` (docs/reference/room-api.md, "Data messages"). */
export const dataMessageSchema = z.strictObject({
  data: z.string(typeError('data', 'a base64 string')).meta({ description: 'the message, standard base64 (RFC 4648), up to 16384 bytes decoded' }),
  topic: boundedText('topic', MAX_DATA_TOPIC_BYTES).optional().meta({ description: 'given to the receiving apps beside the data' }),
  destination_participant_ids: destinationIds('destination_participant_ids').optional()
    .meta({ description: 'only these participants (pa_…); with destination_user_ids, those of either list' }),
  destination_user_ids: destinationIds('destination_user_ids').optional()
    .meta({ description: 'only the participants of these users' }),
  reliable: flag('reliable').optional()
    .meta({ description: 'accepted for compatibility: every message goes over the reliable control channel' }),
}, notAnObject) satisfies z.ZodType<DataMessageRequest>;

/** Query of `GET /v1/rtc/rooms`: paging and a filter by room id. */
export const roomListQuerySchema = z.strictObject({
  limit: limitParam.optional(),
  cursor: cursorParam.optional(),
  room_ids: queryText('room_ids', `a comma-separated list of up to ${MAX_PAGE_LIMIT} room ids`)
    .refine((v) => {
      const ids = v.split(',');
      return ids.length <= MAX_PAGE_LIMIT && ids.every((id) => /^[\x21-\x7e]{1,128}$/.test(id));
    }, { error: `room_ids must be a comma-separated list of up to ${MAX_PAGE_LIMIT} room ids` })
    .optional()
    .meta({ description: 'only these rooms (comma-separated)' }),
});

/**
 * Body of `POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/streams/{stream_id}/mute`
 * (docs/reference/room-api.md, "Muting a stream").
 */
export const streamMuteRequestSchema = z.strictObject({
  muted: z.boolean({ error: 'muted must be true or false' })
    .meta({ description: 'true: the media node stops forwarding the stream; false: it forwards it again' }),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) }) satisfies z.ZodType<StreamMuteRequest>;
