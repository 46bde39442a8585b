import { PARTICIPANT_LEFT_REASONS } from '@rtc/protocol';
import { z } from 'zod';
import { epochSeconds, responseComponent } from '../http/registry.ts';
import type { SessionView } from './history.ts';

/** Response bodies of the session history, as history.ts builds them; the contract test checks real responses against them. */

export const sessionSchema = responseComponent(z.strictObject({
  participant_id: z.string().meta({ description: 'pa_…, as in participant.joined and participant.left' }),
  room_id: z.string(),
  user_id: z.string(),
  role: z.string().meta({ description: 'the role of the grant the participant joined with' }),
  media_node: z.string().nullable().meta({ description: 'host:port of the media node that held the session' }),
  joined_at: epochSeconds,
  left_at: epochSeconds.nullable().meta({ description: 'null while the session is open' }),
  reason: z.enum([...PARTICIPANT_LEFT_REASONS, 'node_lost']).nullable()
    .meta({ description: 'why it ended, as participant.left says; node_lost: its media node stopped; null while open' }),
  duration_seconds: z.int().min(0).meta({ description: 'left_at - joined_at; up to now while open' }),
  usage_kind: z.string().nullable().meta({
    description: 'what its minutes are priced as, a usage kind of GET /v1/public/pricing/rates, decided by its media node at the leave; '
      + 'null while open, or when its media node was lost (counted as audio)',
  }),
  turn_relay: z.boolean().meta({ description: 'its media went through a TURN relay: as many turn_relay minutes on top' }),
}) satisfies z.ZodType<SessionView>, 'MediaSession');

export const sessionListSchema = responseComponent(z.strictObject({
  sessions: z.array(sessionSchema),
  next_cursor: z.string().nullable(),
}), 'MediaSessionList');
