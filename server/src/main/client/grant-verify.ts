/** `rtc grant verify`: checks a media grant or signaling token against the JWKS a token host publishes. */
import { decodeJwsSegment, GRANT_TYPE, jwksKeyLookup, SIGNALING_TOKEN_TYPE, verifyJws } from '@rtc/protocol';
import { CommandError } from './http.ts';

const AUDIENCE_OF_TYPE: Readonly<Record<string, string>> = { [GRANT_TYPE]: 'rtc-media', [SIGNALING_TOKEN_TYPE]: 'rtc-signaling' };

export interface VerifiedGrant {
  readonly kid: string;
  readonly type: string;
  readonly claims: Record<string, unknown>;
  /** Seconds until `exp`. */
  readonly expiresIn: number;
}

function part(segment: string, what: string): Record<string, unknown> {
  const parsed = decodeJwsSegment(segment);
  if (!parsed) throw new CommandError(`grant verify: the ${what} is not base64url JSON`);
  return parsed;
}

/** Checks structure, key, signature, audience and expiry; throws CommandError naming the first failure. */
export async function verifyGrant(token: string, jwks: unknown, nowSec: number): Promise<VerifiedGrant> {
  const jws = token.trim();
  const parts = jws.split('.');
  if (parts.length !== 3) throw new CommandError('grant verify: not a compact JWS (three dot-separated parts)');
  const [h, p] = parts as [string, string, string];
  const header = part(h, 'header');
  const claims = part(p, 'payload');
  const type = header['typ'];
  if (header['alg'] !== 'EdDSA' || typeof type !== 'string' || !(type in AUDIENCE_OF_TYPE)) {
    throw new CommandError(`grant verify: unexpected header alg=${String(header['alg'])} typ=${String(type)}`);
  }
  const kid = header['kid'];
  const keys = jwksKeyLookup(jwks);
  if (typeof kid !== 'string' || !(await keys(kid))) {
    throw new CommandError(`grant verify: key ${String(kid)} is not published in the JWKS (unknown or retired)`);
  }
  if (!(await verifyJws(jws, keys, type)).ok) throw new CommandError('grant verify: bad signature');
  const audience = AUDIENCE_OF_TYPE[type];
  if (claims['aud'] !== audience) throw new CommandError(`grant verify: audience ${String(claims['aud'])}, expected ${audience}`);
  const exp = claims['exp'];
  if (typeof exp !== 'number') throw new CommandError('grant verify: no exp claim');
  if (exp <= nowSec) throw new CommandError(`grant verify: expired ${nowSec - exp} s ago`);
  return { kid, type, claims, expiresIn: exp - nowSec };
}
