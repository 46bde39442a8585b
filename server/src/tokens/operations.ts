import { TOKEN_API_BODY_LIMIT_BYTES } from '@rtc/protocol';
import { revocationRequestSchema, tokenRequestSchema, tokenServiceRequestSchema } from './schemas.ts';
import { requestComponent, type ErrorSpec, type Operation } from '../http/registry.ts';
import { BODY_ERRORS, consoleOperation, projectId } from '../http/console-operation.ts';
import { invitationCreateSchema, invitationRedeemSchema, invitationSchema } from './invitations.ts';
import {
  healthSchema, healthUnavailableSchema, jwksSchema, notReadySchema, readySchema, revocationResultSchema,
  tokenResponseSchema,
} from './responses.ts';

const TOKEN_API_ERRORS: readonly ErrorSpec[] = [
  'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'invalid_credentials', 'scope_denied',
  'project_archived', 'ip_not_allowed', 'server_side_only', 'rate_limited', 'issuer_unavailable', 'turn_unavailable',
  'signaling_unavailable', [503, 'unavailable'],
];

const ORDER_OF_CHECKS = 'Order of checks: address blocked or over its rate limit (429), browser Origin (403 server_side_only), '
  + 'body over 8 KB (413), authentication (401, identical for every cause), App ID rate limit (429), IP allowlist '
  + '(403 ip_not_allowed), archived project (403 project_archived), body (400), scopes (403 scope_denied).';

/** The token API (docs/reference/token-api.md) on both hosts, the token service, keys and health. */
export const TOKEN_API = {
  issueRtcToken: {
    id: 'issueRtcToken', method: 'POST', path: '/v1/rtc/tokens', hosts: ['api', 'token'], tag: 'Token API',
    summary: 'Issue media credentials for one user in one room',
    description: `Exchanges the credential for a media grant, a media key and a revocation handle. ${ORDER_OF_CHECKS}`,
    auth: 'basic', body: requestComponent(tokenRequestSchema, 'TokenRequest'), bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { room_id: 'room-81', user_id: 'user-7', role: 'speaker', publish_streams: [1], subscribe_room: true, ttl_seconds: 600 },
    responses: { 200: { description: 'the token response; never cached', schema: tokenResponseSchema } },
    errors: TOKEN_API_ERRORS,
  },
  revokeRtcToken: {
    id: 'revokeRtcToken', method: 'POST', path: '/v1/rtc/tokens/revoke', hosts: ['api', 'token'], tag: 'Token API',
    summary: 'Revoke a token by its revocation handle',
    description: 'The media servers close the session within about one second and refuse the grant from then on. '
      + 'Revoking again is also 200. A handle of another project, or an altered one, is 404 unknown_handle. '
      + 'Revocation works while a cluster\'s Redis is unreachable (its rate limits are then counted by each node alone).',
    auth: 'basic', body: requestComponent(revocationRequestSchema, 'RevocationRequest'), bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { revocation_handle: 'rvk_AQ' },
    responses: { 200: { description: 'revoked (idempotent)', schema: revocationResultSchema } },
    errors: [
      'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'invalid_credentials', 'project_archived',
      'ip_not_allowed', 'server_side_only', 'unknown_handle', 'rate_limited',
    ],
  },
  issueServiceToken: {
    id: 'issueServiceToken', method: 'POST', path: '/v1/tokens', hosts: ['token'], tag: 'Token service',
    summary: 'Issue media credentials (short form of the token request)',
    description: `HTTP Basic like the token API; app_id must be the authenticated App ID. ${ORDER_OF_CHECKS}`,
    auth: 'basic', body: requestComponent(tokenServiceRequestSchema, 'ServiceTokenRequest'), bodyLimitBytes: TOKEN_API_BODY_LIMIT_BYTES,
    example: { app_id: 'app_AAAAAAAAAAAAAAAAAAAAAA', user_id: 'user-7', room_id: 'room-81', role: 'participant', ttl_sec: 300 },
    responses: { 200: { description: 'the token response; never cached', schema: tokenResponseSchema } },
    errors: [
      'invalid_request', [413, 'invalid_request'], [415, 'invalid_request'], 'invalid_credentials', 'project_archived',
      'ip_not_allowed', 'server_side_only', 'rate_limited', 'issuer_unavailable', [503, 'unavailable'],
    ],
  },
  getHealth: {
    id: 'getHealth', method: 'GET', path: '/health', hosts: ['api', 'token', 'signaling'], tag: 'Keys and health',
    summary: 'Health of the process and its store',
    description: 'The signaling host keeps no store: it answers 200 while it runs.',
    auth: 'none',
    responses: {
      200: { description: 'the store answers', schema: healthSchema },
      503: { description: 'the store does not answer', schema: healthUnavailableSchema },
    },
    errors: [],
  },
  getReady: {
    id: 'getReady', method: 'GET', path: '/ready', hosts: ['api', 'token', 'signaling'], tag: 'Keys and health',
    summary: 'Whether the process should receive traffic',
    description: 'For load balancer probes. Ready once every role of the process listens, while its store answers, '
      + 'its key ring is loaded and, with REDIS_URL, Redis is reachable; unavailable from the start of a shutdown. '
      + '`failing` lists what is missing: starting, shutting_down, store, keys, redis.',
    auth: 'none',
    responses: {
      200: { description: 'ready', schema: readySchema },
      503: { description: 'not ready; `failing` says why', schema: notReadySchema },
    },
    errors: [],
  },
  getJwks: {
    id: 'getJwks', method: 'GET', path: '/.well-known/jwks.json', hosts: ['api', 'token'], tag: 'Keys and health',
    summary: 'Public keys that verify media grants and signaling tokens',
    description: 'A JSON Web Key Set (RFC 7517) of Ed25519 keys; old keys stay listed until every grant they signed has expired.',
    auth: 'none',
    responses: {
      200: {
        description: 'the key set', schema: jwksSchema,
        headers: { 'Cache-Control': 'public, max-age=300' },
      },
    },
    errors: [],
  },
} satisfies Record<string, Operation>;

export const TOKEN_API_OPERATIONS: readonly Operation[] = Object.values(TOKEN_API);

/** The console's token operations, on its session (docs/console.md): test tokens and the project's token counts. */
export const TOKEN_CONSOLE_API = {
  createTemporaryToken: consoleOperation({
    id: 'createTemporaryToken', method: 'POST', path: '/v1/projects/{id}/temporary-token', tag: 'Projects',
    summary: 'A short-lived test token for the console (no App Secret needed)',
    description: 'Same body and response as POST /v1/rtc/tokens; at most 10 minutes; 60 a minute per account.',
    pathParams: projectId, body: requestComponent(tokenRequestSchema, 'TokenRequest'),
    example: { room_id: 'test-room', user_id: 'console-user', role: 'host', publish_streams: [1], ttl_seconds: 300 },
    responses: { 200: { description: 'the token response', schema: tokenResponseSchema } },
    errors: ['project_archived', 'rate_limited', 'issuer_unavailable', 'turn_unavailable', 'signaling_unavailable', [503, 'unavailable']],
  }),
  createInvitation: consoleOperation({
    id: 'createInvitation', method: 'POST', path: '/v1/projects/{id}/invitations', tag: 'Projects',
    summary: 'An invitation to a test room, for a share link of the console',
    description: 'Works once, for ten minutes, for the room named: POST /v1/invitations/redeem trades it for a temporary '
      + 'token. It holds no secret of the project (neither the App Secret nor a media key). 20 a minute per account.',
    pathParams: projectId, body: requestComponent(invitationCreateSchema, 'InvitationCreate'),
    example: { room_id: 'test-room' },
    responses: { 201: { description: 'the invitation', schema: invitationSchema } },
    errors: ['project_archived', 'rate_limited'],
  }),
  redeemInvitation: {
    id: 'redeemInvitation', method: 'POST', path: '/v1/invitations/redeem', hosts: ['api'], tag: 'Projects',
    summary: 'Trade a test-room invitation for a temporary token (once)',
    description: 'No session needed: the invitation is the authorisation. The token is a speaker\'s for the invitation\'s '
      + 'room, receiving the whole room, for ten minutes, as a user id the platform chooses (guest_ and 22 random '
      + 'characters, a prefix no other token may use) publishing two stream ids the platform chooses apart from those '
      + 'of the room\'s participants; user_id and publish_streams are accepted and ignored. An invitation altered, '
      + 'expired, already used (on any api process, also after a restart) or made before the project\'s last archive '
      + 'is 401 unauthenticated; 30 attempts a minute per address.',
    auth: 'none', body: requestComponent(invitationRedeemSchema, 'InvitationRedeem'),
    example: { invitation: 'inv_example' },
    responses: { 200: { description: 'the token response', schema: tokenResponseSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'project_archived', 'rate_limited', 'issuer_unavailable',
      [503, 'unavailable']],
  },
} satisfies Record<string, Operation>;
