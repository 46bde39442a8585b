import { parseGrantClaims, type Role } from '@rtc/protocol';
import { SIGNALING_TOKEN_TYPE, verifyGrantJws } from '../core/grant.ts';
import type { SigningKey } from '../core/keyring.ts';

/** Who a valid signaling token speaks for: one user, in one room of one project, until `expiresAt`. */
export interface SessionIdentity {
  /** The grant id (`jti`), shared with the media grant issued alongside. */
  readonly grantId: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly userId: string;
  readonly role: Role;
  /** `iat`, seconds since the Unix epoch: a project's archive cut-off refuses tokens issued at or before it. */
  readonly issuedAt: number;
  /** Seconds since the Unix epoch. */
  readonly expiresAt: number;
}

/**
 * Checks a signaling token's signature, type, claim shapes (`parseGrantClaims`, shared with media
 * grants), audience, issuer and expiry (docs/protocol/signaling.md, "Tokens"). Revocation is the
 * caller's check. Undefined for every failure: the service answers one 401 whatever the cause.
 */
export async function verifySignalingToken(
  token: string,
  keys: ReadonlyMap<string, SigningKey>,
  expected: { readonly issuer: string; readonly nowSec: number },
): Promise<SessionIdentity | undefined> {
  const result = await verifyGrantJws(token, keys, SIGNALING_TOKEN_TYPE);
  if (!result.ok) return undefined;
  const c = parseGrantClaims(result.claims);
  // a media grant carries aud rtc-media: it never opens a signaling session
  if (!c || c.aud !== 'rtc-signaling' || c.iss !== expected.issuer) return undefined;
  if (c.exp <= expected.nowSec) return undefined;
  return { grantId: c.jti, projectId: c.prj, roomId: c.room, userId: c.sub, role: c.role, issuedAt: c.iat, expiresAt: c.exp };
}
