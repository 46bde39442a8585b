import { ROLES, type Role } from '../../../protocol/src/wire.ts';
import { SIGNALING_TOKEN_TYPE, verifyJws } from '../core/grant.ts';
import type { SigningKey } from '../core/keyring.ts';

/** Who a valid signaling token speaks for: one user, in one room of one project, until `expiresAt`. */
export interface SessionIdentity {
  /** The grant id (`jti`), shared with the media grant issued alongside. */
  readonly grantId: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly userId: string;
  readonly role: Role;
  /** Seconds since the Unix epoch. */
  readonly expiresAt: number;
}

/**
 * Checks a signaling token's signature, type, audience, issuer, expiry and claim shapes
 * (docs/protocol/signaling.md, "Tokens"). Revocation is the caller's check. Undefined for every failure: the
 * service answers one 401 whatever the cause.
 */
export function verifySignalingToken(
  token: string,
  keys: ReadonlyMap<string, SigningKey>,
  expected: { readonly issuer: string; readonly nowSec: number },
): SessionIdentity | undefined {
  const result = verifyJws(token, keys, SIGNALING_TOKEN_TYPE);
  if (!result.ok) return undefined;
  const c = result.claims;
  // a media grant carries aud rtc-media: it never opens a signaling session
  if (c['aud'] !== 'rtc-signaling' || c['iss'] !== expected.issuer) return undefined;
  const { jti, prj, room, sub, role, exp } = c;
  if (typeof jti !== 'string' || typeof prj !== 'string' || typeof room !== 'string' || typeof sub !== 'string') return undefined;
  if (jti === '' || prj === '' || room === '' || sub === '') return undefined;
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) return undefined;
  if (typeof exp !== 'number' || !Number.isSafeInteger(exp) || exp <= expected.nowSec) return undefined;
  return { grantId: jti, projectId: prj, roomId: room, userId: sub, role: role as Role, expiresAt: exp };
}
