import { sign } from 'node:crypto';
import {
  importEd25519Jwk, verifyJws, type Ed25519PublicJwk, type GrantClaims, type JwsFailure, type JwsVerifyKey,
} from '@rtc/protocol';
import type { SigningKey } from './keyring.ts';

export { GRANT_TYPE, SIGNALING_TOKEN_TYPE, jwsKeyId } from '@rtc/protocol';

const headerCache = new Map<string, string>();

function encodedHeader(kid: string, typ: string): string {
  const cacheKey = `${typ}\u0000${kid}`;
  let header = headerCache.get(cacheKey);
  if (header === undefined) {
    header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ, kid })).toString('base64url');
    headerCache.set(cacheKey, header);
  }
  return header;
}

/** Signs claims as a compact JWS (RFC 7515) with Ed25519. */
export function signJws(claims: GrantClaims, key: SigningKey, typ: string): string {
  const input = `${encodedHeader(key.kid, typ)}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${sign(null, Buffer.from(input), key.privateKey).toString('base64url')}`;
}

// each signing key's Web Crypto form, imported once and kept as long as the key
const verifyKeys = new WeakMap<SigningKey, Promise<JwsVerifyKey>>();

/** The Web Crypto public key of a signing key, imported on first use. */
function verifyKeyOf(key: SigningKey): Promise<JwsVerifyKey> {
  let imported = verifyKeys.get(key);
  if (imported === undefined) {
    imported = importEd25519Jwk(key.publicKey.export({ format: 'jwk' }) as Ed25519PublicJwk);
    verifyKeys.set(key, imported);
  }
  return imported;
}

/**
 * Checks a compact JWS's structure, header and signature against the keys by `kid` (`verifyJws`
 * of @rtc/protocol); returns its claims as untyped JSON (the caller checks `aud`, `exp` and the
 * rest) or the reason it failed.
 */
export async function verifyGrantJws(
  token: string,
  keys: ReadonlyMap<string, SigningKey>,
  typ: string,
): Promise<{ ok: true; claims: Record<string, unknown> } | { ok: false; reason: JwsFailure }> {
  const result = await verifyJws(token, (kid) => {
    const key = keys.get(kid);
    return key && verifyKeyOf(key);
  }, typ);
  return result.ok ? { ok: true, claims: result.claims } : result;
}
