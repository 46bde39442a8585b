import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '@rtc/protocol';
import type { PageQuery } from '../core/cursor.ts';
import type { WebhookCreate, WebhookUpdate } from './endpoints.ts';
import { cursorParam, limitParam } from '../http/query.ts';
import { typeError } from '../http/validate.ts';

/** Every event type an endpoint can ask for (docs/reference/webhooks.md, "Events"). */
export const EVENT_TYPES = WEBHOOK_EVENT_TYPES;

const url = z.string(typeError('url', 'an https:// URL'))
  .max(2048, { error: 'url must be at most 2048 characters' })
  .meta({ description: 'https:// only, without user name, password or fragment; refused when it resolves to a loopback, private or link-local address' });

const eventTypes = z.array(z.enum(EVENT_TYPES, { error: `event_types may hold only ${EVENT_TYPES.join(', ')}` }),
  typeError('event_types', 'an array of event types'))
  .max(EVENT_TYPES.length, { error: 'event_types must not repeat a type' })
  .refine((list) => new Set(list).size === list.length, { error: 'event_types must not repeat a type' })
  .meta({ description: 'the types to receive; empty or left out: every type' });

const description = z.string(typeError('description', 'a string'))
  .max(500, { error: 'description must be at most 500 characters' })
  .regex(/^[^\p{Cc}]*$/u, { error: 'description must not contain control characters' });

export const webhookCreateSchema = z.strictObject({
  url,
  event_types: eventTypes.optional(),
  description: description.optional(),
}) satisfies z.ZodType<WebhookCreate>;

export const webhookPatchSchema = z.strictObject({
  url: url.optional(),
  event_types: eventTypes.optional(),
  description: description.optional(),
  enabled: z.boolean(typeError('enabled', 'true or false')).optional(),
}) satisfies z.ZodType<WebhookUpdate>;

/** Query of `GET /v1/projects/{id}/webhooks/{webhook_id}/deliveries`. */
export const deliveriesQuerySchema = z.strictObject({
  limit: limitParam.optional(),
  cursor: cursorParam.optional(),
}) satisfies z.ZodType<PageQuery>;
