import { z } from 'zod';
import { epochSeconds, responseComponent } from '../http/registry.ts';
import type { DeliveryView, WebhookView, WebhookWithSecret } from './endpoints.ts';
import { EVENT_TYPES } from './schemas.ts';

/**
 * Response bodies of the webhook endpoints API, as endpoints.ts builds them. Each `satisfies` the type it
 * documents, and the contract test checks real responses against them, so a field added or renamed
 * in a use case fails one or the other.
 */

const webhookFields = {
  id: z.string().meta({ description: 'wh_ followed by 22 base64url characters' }),
  project_id: z.string(),
  url: z.string(),
  description: z.string(),
  event_types: z.array(z.enum(EVENT_TYPES)).meta({ description: 'empty: every type' }),
  enabled: z.boolean(),
  created_at: epochSeconds,
  updated_at: epochSeconds,
  previous_secret_expires_at: epochSeconds.nullable()
    .meta({ description: 'until when the secret before the last rotation still signs deliveries; null outside that period' }),
};

export const webhookSchema = responseComponent(z.strictObject(webhookFields) satisfies z.ZodType<WebhookView>, 'Webhook');

export const webhookWithSecretSchema = responseComponent(z.strictObject({
  ...webhookFields,
  secret: z.string().meta({ description: 'whsec_…: the signing secret, shown only here' }),
}) satisfies z.ZodType<WebhookWithSecret>, 'WebhookWithSecret');

export const webhookListSchema = responseComponent(z.strictObject({ webhooks: z.array(webhookSchema) }), 'WebhookList');

export const webhookTestSchema = responseComponent(z.strictObject({
  event_id: z.string().meta({ description: 'evt_…: the id the receiver sees in rtc-webhook-id' }),
}), 'WebhookTestEvent');

export const deliverySchema = responseComponent(z.strictObject({
  id: z.string().meta({ description: 'dlv_…' }),
  event_id: z.string(),
  event_type: z.enum(EVENT_TYPES),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.int().min(0),
  last_status_code: z.int().nullable().meta({ description: 'the status of the last answer; null when none came' }),
  last_error: z.string().nullable(),
  next_attempt_at: epochSeconds.nullable().meta({ description: 'null once delivered or failed' }),
  delivered_at: epochSeconds.nullable(),
  created_at: epochSeconds,
}) satisfies z.ZodType<DeliveryView>, 'WebhookDelivery');

export const deliveryListSchema = responseComponent(z.strictObject({
  deliveries: z.array(deliverySchema),
  next_cursor: z.string().nullable(),
}), 'WebhookDeliveryList');
