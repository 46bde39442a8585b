import { z } from 'zod';
import { MAX_MESSAGE_BYTES } from './limits.ts';
import { opaqueId } from '../tokens/schemas.ts';

const tokenField = z.string({ error: 'token must be a string' })
  .meta({ description: 'signaling.token of a token response; a missing or invalid one is 401 unauthenticated' });
const DATA_REQUIRED = 'data is required: any JSON value except null';

/** The body of `POST /v1/signaling/join` and `/leave`. */
export const joinSchema = z.strictObject({ token: tokenField });

/** The body of `POST /v1/signaling/messages`. */
export const messageSchema = z.strictObject({
  token: tokenField,
  data: z.unknown().refine((value) => value !== undefined && value !== null, { error: DATA_REQUIRED })
    .meta({ description: `any JSON value except null, at most ${MAX_MESSAGE_BYTES} bytes as UTF-8 JSON (413 when larger)` }),
  to: opaqueId('to').optional()
    .meta({ description: 'user_id of one participant of the room: only their sessions receive the message (404 when not present)' }),
});
