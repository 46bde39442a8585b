import { z } from 'zod';
import { MAX_PUBLISH_STREAMS, MAX_SUBSCRIBE_STREAMS } from '@rtc/protocol';
import type { PermissionsPatch, RemovalRequest, StreamMuteRequest } from './service.ts';
import { MAX_BAN_SECONDS } from './cutoff.ts';
import { flag, streamList } from '../tokens/schemas.ts';

/**
 * Body of `PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}` (docs/reference/room-api.md,
 * "Changing permissions"): the stream rules of a token request; unknown fields are rejected.
 */
export const permissionsPatchSchema = z.strictObject({
  publish_streams: streamList('publish_streams', MAX_PUBLISH_STREAMS).optional()
    .meta({ description: 'stream ids the participant may publish from now on; needs the publisher scope when not empty' }),
  subscribe_streams: streamList('subscribe_streams', MAX_SUBSCRIBE_STREAMS).optional()
    .meta({ description: 'stream ids the participant may receive from now on (replaces subscribe_room); needs the subscriber scope when not empty' }),
  subscribe_room: flag('subscribe_room').optional()
    .meta({ description: 'receive every stream of the room; true needs the subscriber scope' }),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) }) satisfies z.ZodType<PermissionsPatch>;

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

/**
 * Body of `POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/streams/{stream_id}/mute`
 * (docs/reference/room-api.md, "Muting a stream").
 */
export const streamMuteRequestSchema = z.strictObject({
  muted: z.boolean({ error: 'muted must be true or false' })
    .meta({ description: 'true: the media node stops forwarding the stream; false: it forwards it again' }),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) }) satisfies z.ZodType<StreamMuteRequest>;
