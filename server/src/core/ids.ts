import { randomBytes } from 'node:crypto';
import { ID_PREFIX } from '../../../protocol/src/ids.ts';

/** 128 random bits as 22 base64url characters, behind the kind's prefix (DESIGN.md section 2). */
export function newId(kind: 'project' | 'app' | 'account'): string {
  return ID_PREFIX[kind] + randomBytes(16).toString('base64url');
}

/** A grant id (`jti`): 16 random bytes. */
export function newGrantId(): Buffer {
  return randomBytes(16);
}

/** An App Secret: `sk_` + 256 random bits (43 base64url characters). */
export function newAppSecret(): string {
  return ID_PREFIX.secret + randomBytes(32).toString('base64url');
}

/** A bearer secret of the customer API (`cs_` access token or `rt_` refresh token). */
export function newBearer(kind: 'session' | 'refresh'): string {
  return ID_PREFIX[kind] + randomBytes(32).toString('base64url');
}
