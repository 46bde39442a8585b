import type { IssuerSettings } from '../http/context.ts';
import type { GrantClaims, TokenRequest, TokenResponse } from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';
import { GRANT_TYPE, SIGNALING_TOKEN_TYPE, signJws } from '../core/grant.ts';
import { newGrantId } from '../core/ids.ts';
import { deriveMediaKey } from './media-key.ts';
import { encodeHandle } from './revocation-handle.ts';
import { applyTokenPolicy, type CredentialPolicy } from './policy.ts';
import { turnCredentials } from './turn.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';

/** The subject of an issuance: a real credential, or a project's console pseudo-credential. */
export interface Issuer extends CredentialPolicy {
  readonly projectId: string;
  readonly appId: string;
}

/**
 * Applies policy to a shaped request and mints the grant, media key and revocation handle. The
 * room's media node comes from the cluster's directory when there is one (docs/operations/scale-out.md).
 */
export async function issueToken(deps: ServiceDeps<unknown>, settings: IssuerSettings, issuer: Issuer, req: TokenRequest): Promise<TokenResponse> {
  const grant = applyTokenPolicy(req, issuer);
  // docs/reference/token-api.md, "Order of checks": 502 when this deployment has no TURN relay or signaling service configured
  const turn = settings.turn;
  const signalingUrl = settings.signalingUrl;
  if (grant.turn && !turn) throw new ApiError('turn_unavailable', 'no TURN relay is configured for this platform');
  if (grant.signaling && !signalingUrl) throw new ApiError('signaling_unavailable', 'no signaling service is configured for this platform');

  const node = deps.mediaNodes
    ? await deps.mediaNodes.place(issuer.projectId, grant.room_id, grant.user_id, grant.ttl_seconds)
    : { host: settings.sfuHost, port: settings.sfuPort };
  const iat = nowSec(deps.clock);
  const exp = iat + grant.ttl_seconds;
  const grantId = newGrantId();
  const master = deps.keys.mediaMaster;
  const claims: GrantClaims = {
    iss: settings.issuer, aud: 'rtc-media', jti: grantId.toString('base64url'), prj: issuer.projectId,
    app: issuer.appId, room: grant.room_id, sub: grant.user_id, role: grant.role, pub: grant.publish_streams,
    subs: grant.subscribe_streams, sub_room: grant.subscribe_room, iat, exp, cnf: { kid: master.kid },
  };
  let signed: string;
  let signalingToken: string | undefined;
  try {
    signed = signJws(claims, deps.keys.signing, GRANT_TYPE);
    // docs/protocol/signaling.md, "Tokens": the same claims and jti, so one revocation cuts media and signaling together
    if (grant.signaling) signalingToken = signJws({ ...claims, aud: 'rtc-signaling' }, deps.keys.signing, SIGNALING_TOKEN_TYPE);
  } catch (cause) {
    throw new ApiError('issuer_unavailable', 'the grant could not be signed; retry with backoff', { cause });
  }
  deps.tokenUsage?.count(issuer.projectId, iat);
  return {
    project_id: issuer.projectId,
    app_id: issuer.appId,
    room_id: grant.room_id,
    user_id: grant.user_id,
    role: grant.role,
    publish_streams: grant.publish_streams,
    subscribe_streams: grant.subscribe_streams,
    subscribe_room: grant.subscribe_room,
    issued_at: iat,
    expires_at: exp,
    media: {
      grant: signed,
      key: deriveMediaKey(master.secret, grantId).toString('base64url'),
      sfu_host: node.host,
      sfu_port: node.port,
      encryption: 'aes-256-gcm',
      revocation_handle: encodeHandle(deps.keys.handleKey, { projectId: issuer.projectId, grantId, expiresAt: exp }),
    },
    ...(grant.turn && turn && { turn: turnCredentials(turn.secret, turn.uris, exp, claims.jti) }),
    ...(signalingToken !== undefined && signalingUrl && { signaling: { token: signalingToken, url: signalingUrl } }),
  };
}
