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
