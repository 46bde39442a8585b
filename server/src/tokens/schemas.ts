import { z } from 'zod';
import {
  GUEST_USER_PREFIX, MAX_ID_LENGTH, MAX_PUBLISH_STREAMS, MAX_STREAM_ID, MAX_SUBSCRIBE_STREAMS, MAX_TTL_SECONDS, ROLES,
  type RevocationRequest, type TokenRequest
} from '@rtc/protocol';
import { typeError } from '../http/validate.ts';

// docs/reference/token-api.md, "Request rules": 1-128 printable ASCII characters, no spaces
const ID_RULE = `1-${MAX_ID_LENGTH} printable ASCII characters without spaces`;
const PRINTABLE_NO_SPACE = new RegExp(`^[\\x21-\\x7e]{1,${MAX_ID_LENGTH}}$`);

export const opaqueId = (field: string) =>
  z.string(typeError(field, 'a string')).regex(PRINTABLE_NO_SPACE, { error: `${field} must be ${ID_RULE}` })
    .meta({ description: `${ID_RULE}; an opaque id, not a name or e-mail address` });

/**
 * The user id of a token asked for: an opaque id outside the share-link guests' namespace, which
 * only an invitation gets (docs/reference/token-api.md, "Request rules"; docs/console.md, "Share links").
 */
const userId = opaqueId('user_id')
  .refine((id) => !id.startsWith(GUEST_USER_PREFIX), {
    error: `user_id must not start with ${GUEST_USER_PREFIX}: that prefix is reserved for share-link guests`,
  })
  .meta({ description: `${ID_RULE}, not starting with ${GUEST_USER_PREFIX} (reserved for share-link guests); an opaque id, not a name or e-mail address` });

const streamId = (field: string) =>
  z.number({ error: `${field} must hold integer stream ids from 1 to ${MAX_STREAM_ID}` })
    .int({ error: `${field} must hold integer stream ids from 1 to ${MAX_STREAM_ID}` })
    .min(1, { error: `${field} must hold integer stream ids from 1 to ${MAX_STREAM_ID}` })
    .max(MAX_STREAM_ID, { error: `${field} must hold integer stream ids from 1 to ${MAX_STREAM_ID}` });

const unique = (values: readonly number[]): boolean => new Set(values).size === values.length;

export const streamList = (field: string, max: number) =>
  z.array(streamId(field), typeError(field, 'an array of stream ids'))
    .max(max, { error: `${field} may list at most ${max} stream ids` })
    .refine(unique, { error: `${field} must not repeat a stream id` })
    .meta({ uniqueItems: true });

export const roleSchema = z.enum(ROLES, {
  error: (issue) => (issue.input === undefined ? 'role is required' : `role must be one of ${ROLES.join(', ')}`),
});

export const ttlSchema = (field: string) =>
  z.number(typeError(field, `an integer from 1 to ${MAX_TTL_SECONDS}`))
    .int({ error: `${field} must be an integer from 1 to ${MAX_TTL_SECONDS}` })
    .min(1, { error: `${field} must be an integer from 1 to ${MAX_TTL_SECONDS}` })
    .max(MAX_TTL_SECONDS, { error: `${field} must be at most ${MAX_TTL_SECONDS} seconds (one hour)` });

export const flag = (field: string) => z.boolean({ error: `${field} must be true or false` });

/** Body of `POST /v1/rtc/tokens` (docs/reference/token-api.md, "Request fields"), checked against the wire's `TokenRequest`. Unknown fields are rejected. */
export const tokenRequestSchema = z.strictObject({
  room_id: opaqueId('room_id'),
  user_id: userId,
  role: roleSchema,
  publish_streams: streamList('publish_streams', MAX_PUBLISH_STREAMS).optional()
    .meta({ description: 'stream ids the user may publish; needs the publisher scope' }),
  subscribe_streams: streamList('subscribe_streams', MAX_SUBSCRIBE_STREAMS).optional()
    .meta({ description: 'stream ids the user may receive; needs the subscriber scope' }),
  subscribe_room: flag('subscribe_room').optional()
    .meta({ description: 'receive every stream of the room; needs the subscriber scope' }),
  ttl_seconds: ttlSchema('ttl_seconds').optional()
    .meta({ description: 'lifetime in seconds; default 600; at most 3600 and the credential limit' }),
  turn: flag('turn').optional(),
  signaling: flag('signaling').optional(),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) }) satisfies z.ZodType<TokenRequest>;

/** Body of `POST /v1/tokens` on the token host (docs/reference/token-api.md, "Token host extras"). */
export const tokenServiceRequestSchema = z.strictObject({
  app_id: z.string(typeError('app_id', 'a string')),
  user_id: userId,
  room_id: opaqueId('room_id'),
  role: roleSchema,
  ttl_sec: ttlSchema('ttl_sec').optional(),
});

/** Body of `POST /v1/rtc/tokens/revoke`. */
export const revocationRequestSchema = z.strictObject({
  revocation_handle: z.string(typeError('revocation_handle', 'a string'))
    .max(512, { error: 'revocation_handle must be at most 512 characters' }),
}) satisfies z.ZodType<RevocationRequest>;
