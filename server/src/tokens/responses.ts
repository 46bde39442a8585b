import { z } from 'zod';
import { ROLES, type TokenResponse } from '@rtc/protocol';
import { epochSeconds, responseComponent } from '../http/registry.ts';

/**
 * Response bodies of the token API and the token service (protocol/src/wire.ts). Each `satisfies` the type it
 * documents, and the contract test checks real responses against them, so a field added or renamed
 * in a use case fails one or the other.
 */

export const tokenResponseSchema = responseComponent(z.strictObject({
  project_id: z.string().meta({ description: 'prj_ followed by 22 base64url characters' }),
  app_id: z.string().meta({ description: 'App ID of the credential (app_…)' }),
  room_id: z.string(),
  user_id: z.string(),
  role: z.enum(ROLES),
  publish_streams: z.array(z.int()),
  subscribe_streams: z.array(z.int()).meta({ description: 'empty when none were requested' }),
  subscribe_room: z.boolean(),
  issued_at: epochSeconds,
  expires_at: epochSeconds.meta({ description: 'issued_at plus the granted lifetime' }),
  media: z.strictObject({
    grant: z.string().meta({ description: 'compact JWS (EdDSA, typ rtc-grant+jwt); verify with GET /.well-known/jwks.json' }),
    key: z.string().meta({ description: 'secret media key (base64url); never logged, never sent to the media server' }),
    sfu_host: z.string(),
    sfu_port: z.int().min(0).max(65535),
    encryption: z.literal('aes-256-gcm'),
    revocation_handle: z.string().meta({ description: 'rvk_…; keep it on the customer server to cut the user off early' }),
  }),
  turn: z.strictObject({
    username: z.string(),
    credential: z.string(),
    uris: z.array(z.string()).meta({ description: 'turn: and turns: URIs' }),
  }).optional().meta({ description: 'present when the request had turn: true' }),
  signaling: z.strictObject({
    token: z.string(),
    url: z.string(),
  }).optional().meta({ description: 'present when the request had signaling: true' }),
}) satisfies z.ZodType<TokenResponse>, 'TokenResponse');

export const projectUsageSchema = responseComponent(z.strictObject({
  tokens_per_day: z.array(z.strictObject({
    day: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
    tokens: z.int().min(0).meta({ description: 'tokens issued for the project that day (token API and temporary tokens)' }),
  })).meta({ description: 'the last 14 days, oldest first, today last' }),
  participant_minutes_per_day: z.array(z.strictObject({
    day: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
    participant_seconds: z.int().min(0).meta({ description: 'seconds spent in media sessions of the project that day, summed over participants' }),
    participant_minutes: z.int().min(0).meta({ description: 'participant_seconds in minutes, rounded up' }),
    minutes_by_kind: z.record(z.string(), z.int().min(0)).meta({
      description: 'the day\'s minutes per usage kind of the price list (every kind, 0 when none), each kind\'s seconds rounded up; '
        + 'a session counts as the usage_kind it ended with, an open one as audio; turn_relay counts on top',
    }),
  })).meta({ description: 'the same days; a session counts on each day it overlaps, an open one up to now' }),
  cost: z.strictObject({
    plan: z.string().meta({ description: 'the plan the minutes are priced on' }),
    plan_source: z.enum(['subscription', 'default']).meta({
      description: 'subscription: the project\'s newest approved subscription request; default: none, the price list\'s first plan (developer)',
    }),
    from_day: z.string().meta({ description: 'first UTC day of the period, YYYY-MM-DD' }),
    to_day: z.string().meta({ description: 'last UTC day of the period (today)' }),
    usage: z.record(z.string(), z.int().min(0)).meta({ description: 'minutes per usage kind over the period: the sum of the days\' minutes_by_kind' }),
    currency: z.string(),
    minor_units: z.int().min(0),
    price_list_version: z.string(),
    plan_fee_minor: z.int().min(0).meta({ description: 'plan_fee.amount_minor of POST /v1/billing/quotes for plan and usage' }),
    usage_subtotal_minor: z.int().min(0).meta({ description: 'usage_subtotal_minor of that quote' }),
    discount_minor: z.int().min(0).meta({ description: 'discount.amount_minor of that quote' }),
    total_minor: z.int().min(0).meta({ description: 'total_minor of that quote: the monthly fee included' }),
  }).meta({ description: 'what the period\'s minutes would cost on the project\'s plan, priced as POST /v1/billing/quotes prices them (docs/console.md, "Usage")' }),
}), 'ProjectUsage');

export const revocationResultSchema = responseComponent(z.strictObject({ revoked: z.literal(true) }), 'RevocationResult');

export const healthSchema = responseComponent(z.strictObject({ status: z.literal('ok') }), 'Health');
export const healthUnavailableSchema = responseComponent(z.strictObject({
  status: z.literal('unavailable'),
  store: z.literal('unavailable').optional(),
}), 'HealthUnavailable');

export const readySchema = responseComponent(z.strictObject({ status: z.literal('ready') }), 'Ready');
export const notReadySchema = responseComponent(z.strictObject({
  status: z.literal('unavailable'),
  failing: z.array(z.enum(['starting', 'shutting_down', 'store', 'keys', 'redis'])),
}), 'NotReady');

export const jwksSchema = responseComponent(z.strictObject({
  keys: z.array(z.strictObject({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string(),
    kid: z.string(),
    use: z.literal('sig'),
    alg: z.literal('EdDSA'),
  })),
}), 'JsonWebKeySet');
