/** `rtc grant verify`: checks a media grant or signaling token against the JWKS a token host publishes. */
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { GRANT_TYPE, SIGNALING_TOKEN_TYPE } from '../../core/grant.ts';
import { CommandError, isRecord } from './http.ts';

const AUDIENCE_OF_TYPE: Readonly<Record<string, string>> = { [GRANT_TYPE]: 'rtc-media', [SIGNALING_TOKEN_TYPE]: 'rtc-signaling' };

export interface VerifiedGrant {
  readonly kid: string;
  readonly type: string;
  readonly claims: Record<string, unknown>;
  /** Seconds until `exp`. */
  readonly expiresIn: number;
}

function part(segment: string, what: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    if (isRecord(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw new CommandError(`grant verify: the ${what} is not base64url JSON`);
}

/** Checks structure, key, signature, audience and expiry; throws CommandError naming the first failure. */
export function verifyGrant(token: string, jwks: unknown, nowSec: number): VerifiedGrant {
  const parts = token.trim().split('.');
  if (parts.length !== 3) throw new CommandError('grant verify: not a compact JWS (three dot-separated parts)');
  const [h, p, s] = parts as [string, string, string];
  const header = part(h, 'header');
  const claims = part(p, 'payload');
  const type = header['typ'];
  if (header['alg'] !== 'EdDSA' || typeof type !== 'string' || !(type in AUDIENCE_OF_TYPE)) {
    throw new CommandError(`grant verify: unexpected header alg=${String(header['alg'])} typ=${String(type)}`);
  }
  const kid = header['kid'];
  const keys = isRecord(jwks) && Array.isArray(jwks['keys']) ? (jwks['keys'] as unknown[]) : [];
  const jwk = keys.find((k) => isRecord(k) && k['kid'] === kid);
  if (typeof kid !== 'string' || !isRecord(jwk)) {
    throw new CommandError(`grant verify: key ${String(kid)} is not published in the JWKS (unknown or retired)`);
  }
  let ok: boolean;
  try {
    const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    ok = verify(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
  } catch {
    ok = false;
  }
  if (!ok) throw new CommandError('grant verify: bad signature');
  const audience = AUDIENCE_OF_TYPE[type];
  if (claims['aud'] !== audience) throw new CommandError(`grant verify: audience ${String(claims['aud'])}, expected ${audience}`);
  const exp = claims['exp'];
  if (typeof exp !== 'number') throw new CommandError('grant verify: no exp claim');
  if (exp <= nowSec) throw new CommandError(`grant verify: expired ${nowSec - exp} s ago`);
  return { kid, type, claims, expiresIn: exp - nowSec };
}
