import { z } from 'zod';
import { ROLES, type TokenResponse } from '@rtc/protocol';
import type { AccountView, SessionTokens } from '../customers/accounts.ts';
import type { CredentialView, CredentialWithSecret } from '../customers/credentials.ts';
import type { ProjectView } from '../customers/projects.ts';
import type { ParticipantView, RoomView } from '../rooms/service.ts';
import type { DeliveryView, WebhookView, WebhookWithSecret } from '../webhooks/endpoints.ts';
import { EVENT_TYPES } from '../webhooks/schemas.ts';
import { responseComponent } from './registry.ts';

/**
 * Response bodies of the token API and the customer API, as the services build them
 * (protocol/src/wire.ts, services/accounts.ts, projects.ts, credentials.ts). Each `satisfies` the
 * type it documents, and the contract test checks real responses against them, so a field added or
 * renamed in a service fails one or the other.
 */

const time = z.int().min(0).meta({ description: 'seconds since the Unix epoch' });

export const tokenResponseSchema = responseComponent(z.strictObject({
  project_id: z.string().meta({ description: 'prj_ followed by 22 base64url characters' }),
  app_id: z.string().meta({ description: 'App ID of the credential (app_…)' }),
  room_id: z.string(),
  user_id: z.string(),
  role: z.enum(ROLES),
  publish_streams: z.array(z.int()),
  subscribe_streams: z.array(z.int()).meta({ description: 'empty when none were requested' }),
  subscribe_room: z.boolean(),
  issued_at: time,
  expires_at: time.meta({ description: 'issued_at plus the granted lifetime' }),
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

const roomParticipantSchema = responseComponent(z.strictObject({
  participant_id: z.string().meta({ description: 'pa_…, given by the media server at join' }),
  user_id: z.string(),
  role: z.enum(ROLES),
  publish_streams: z.array(z.int()),
  subscribe_streams: z.array(z.int()),
  subscribe_room: z.boolean(),
  joined_at: time,
}) satisfies z.ZodType<ParticipantView>, 'RoomParticipant');

const roomFields = z.strictObject({
  room_id: z.string(),
  media_node: z.string().meta({ description: 'host:port of the media node that holds the room' }),
  started_at: time.meta({ description: 'when the room opened on its media node' }),
  participants: z.array(roomParticipantSchema).meta({ description: 'oldest join first' }),
}) satisfies z.ZodType<RoomView>;

export const roomSchema = responseComponent(roomFields, 'Room');
export const roomListSchema = responseComponent(z.strictObject({
  rooms: z.array(roomSchema).meta({ description: 'live rooms of the project, oldest first' }),
}), 'RoomList');
export const participantSchema = roomParticipantSchema;
export const projectUsageSchema = responseComponent(z.strictObject({
  tokens_per_day: z.array(z.strictObject({
    day: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
    tokens: z.int().min(0).meta({ description: 'tokens issued for the project that day (token API and temporary tokens)' }),
  })).meta({ description: 'the last 14 days, oldest first, today last' }),
}), 'ProjectUsage');

export const participantRemovedSchema = responseComponent(z.strictObject({ removed: z.literal(true) }), 'ParticipantRemoved');
export const roomEndedSchema = responseComponent(z.strictObject({
  ended: z.literal(true),
  participants: z.int().min(0).meta({ description: 'how many participants were closed' }),
}), 'RoomEnded');

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

export const accountSchema = responseComponent(z.strictObject({
  id: z.string().meta({ description: 'acc_ followed by 22 base64url characters' }),
  email: z.string(),
  created_at: time,
}) satisfies z.ZodType<AccountView>, 'Account');

export const sessionTokensSchema = responseComponent(z.strictObject({
  account: accountSchema,
  access_token: z.string().meta({ description: 'cs_…: send as Authorization: Bearer on the customer API' }),
  refresh_token: z.string().meta({ description: 'rt_…: single use; POST /v1/auth/refresh returns a new pair' }),
  token_type: z.literal('Bearer'),
  expires_in: z.int().min(1).meta({ description: 'lifetime of access_token in seconds' }),
}) satisfies z.ZodType<SessionTokens>, 'SessionTokens');

export const projectSchema = responseComponent(z.strictObject({
  id: z.string(),
  name: z.string(),
  archived: z.boolean(),
  archived_at: time.nullable(),
  created_at: time,
  updated_at: time,
}) satisfies z.ZodType<ProjectView>, 'Project');

export const projectListSchema = responseComponent(z.strictObject({ projects: z.array(projectSchema) }), 'ProjectList');

const credentialFields = {
  app_id: z.string(),
  project_id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(['publisher', 'subscriber'])),
  ip_allowlist: z.array(z.string()),
  max_ttl_seconds: z.int().min(1),
  status: z.enum(['active', 'revoked']),
  created_at: time,
  updated_at: time,
  rotated_at: time.nullable(),
  revoked_at: time.nullable(),
};

export const credentialSchema = responseComponent(z.strictObject(credentialFields) satisfies z.ZodType<CredentialView>, 'Credential');

export const credentialWithSecretSchema = responseComponent(z.strictObject({
  ...credentialFields,
  app_secret: z.string().meta({ description: 'sk_…: shown only here; store it in a secret store' }),
}) satisfies z.ZodType<CredentialWithSecret>, 'CredentialWithSecret');

export const credentialListSchema = responseComponent(z.strictObject({ credentials: z.array(credentialSchema) }), 'CredentialList');

const webhookFields = {
  id: z.string().meta({ description: 'wh_ followed by 22 base64url characters' }),
  project_id: z.string(),
  url: z.string(),
  description: z.string(),
  event_types: z.array(z.enum(EVENT_TYPES)).meta({ description: 'empty: every type' }),
  enabled: z.boolean(),
  created_at: time,
  updated_at: time,
  previous_secret_expires_at: time.nullable()
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
  next_attempt_at: time.nullable().meta({ description: 'null once delivered or failed' }),
  delivered_at: time.nullable(),
  created_at: time,
}) satisfies z.ZodType<DeliveryView>, 'WebhookDelivery');

export const deliveryListSchema = responseComponent(z.strictObject({
  deliveries: z.array(deliverySchema),
  next_cursor: z.string().nullable(),
}), 'WebhookDeliveryList');
