import { MAX_ID_LENGTH } from '@rtc/protocol';
import { z } from 'zod';
import { cursorParam, limitParam, queryText } from '../http/query.ts';

/** Query of `GET /v1/projects/{id}/sessions`. */
export const sessionsQuerySchema = z.strictObject({
  limit: limitParam.optional(),
  cursor: cursorParam.optional(),
  room_id: queryText('room_id', `a room id of 1 to ${MAX_ID_LENGTH} characters`).min(1, { error: 'room_id must not be empty' })
    .max(MAX_ID_LENGTH, { error: `room_id must be at most ${MAX_ID_LENGTH} characters` })
    .optional().meta({ description: 'only the sessions of this room' }),
});
