import { DEFAULT_TTL_SECONDS, type TokenRequest } from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';

/** What a credential allows, as far as a token request is concerned. */
export interface CredentialPolicy {
  readonly publisher: boolean;
  readonly subscriber: boolean;
  readonly maxTtlSeconds: number;
}

/** The grant a request earns, once every rule and scope is checked: the request with every field decided. */
export type GrantRequest = Required<TokenRequest>;

/**
 * Applies the cross-field rules (400) and then the scopes (403) of docs/reference/token-api.md
 * ("Request rules", "Order of checks") to a request whose fields already have the right shape (formats, counts,
 * uniqueness: the edge's schema checks those).
 */
export function applyTokenPolicy(req: TokenRequest, cred: CredentialPolicy): GrantRequest {
  const pub = req.publish_streams ?? [];
  const subs = req.subscribe_streams ?? [];
  // docs/reference/token-api.md, "Request rules": even an empty subscribe_streams field conflicts
  if (req.subscribe_room === true && req.subscribe_streams !== undefined) {
    throw new ApiError('invalid_request', 'subscribe_room cannot be combined with subscribe_streams');
  }
  // docs/reference/token-api.md, "Roles": the audience role can never publish
  if (req.role === 'audience' && pub.length > 0) {
    throw new ApiError('invalid_request', 'the audience role cannot publish: publish_streams must be empty');
  }
  const ttlSeconds = req.ttl_seconds ?? Math.min(DEFAULT_TTL_SECONDS, cred.maxTtlSeconds);
  if (ttlSeconds > cred.maxTtlSeconds) {
    throw new ApiError('invalid_request',
      `ttl_seconds must be at most ${cred.maxTtlSeconds}, the limit set on this credential`);
  }
  if (pub.length > 0 && !cred.publisher) {
    throw new ApiError('scope_denied', 'publish_streams needs the publisher scope on the credential');
  }
  if ((subs.length > 0 || req.subscribe_room === true) && !cred.subscriber) {
    throw new ApiError('scope_denied',
      `${subs.length > 0 ? 'subscribe_streams' : 'subscribe_room'} needs the subscriber scope on the credential`);
  }
  return {
    room_id: req.room_id,
    user_id: req.user_id,
    role: req.role,
    publish_streams: [...pub],
    subscribe_streams: [...subs],
    subscribe_room: req.subscribe_room === true,
    ttl_seconds: ttlSeconds,
    turn: req.turn === true,
    signaling: req.signaling === true,
  };
}
