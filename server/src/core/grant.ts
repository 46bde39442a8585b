import { sign, verify } from 'node:crypto';
import type { GrantClaims } from '@rtc/protocol';
import { fromB64u } from './encoding.ts';
import type { SigningKey } from './keyring.ts';

export const GRANT_TYPE = 'rtc-grant+jwt';
export const SIGNALING_TOKEN_TYPE = 'rtc-signaling+jwt';

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

export type JwsFailure = 'malformed' | 'unknown_key' | 'bad_signature' | 'wrong_type';

/**
 * Checks a compact JWS's structure, header and signature; returns its claims as untyped JSON
 * (the caller checks `aud`, `exp` and the rest) or the reason it failed.
 */
export function verifyJws(
  token: string,
  keys: ReadonlyMap<string, SigningKey>,
  typ: string,
): { ok: true; claims: Record<string, unknown> } | { ok: false; reason: JwsFailure } {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 8192) return { ok: false, reason: 'malformed' };
  const [h, p, s] = parts as [string, string, string];
  const headerBytes = fromB64u(h);
  const payloadBytes = fromB64u(p);
  const sig = fromB64u(s);
  if (!headerBytes || !payloadBytes || !sig) return { ok: false, reason: 'malformed' };
  let header: unknown;
  let claims: unknown;
  try {
    header = JSON.parse(headerBytes.toString('utf8'));
    claims = JSON.parse(payloadBytes.toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!isRecord(header) || !isRecord(claims)) return { ok: false, reason: 'malformed' };
  if (header['alg'] !== 'EdDSA' || header['typ'] !== typ) return { ok: false, reason: 'wrong_type' };
  const kid = header['kid'];
  const key = typeof kid === 'string' ? keys.get(kid) : undefined;
  if (!key) return { ok: false, reason: 'unknown_key' };
  if (!verify(null, Buffer.from(`${h}.${p}`), key.publicKey, sig)) return { ok: false, reason: 'bad_signature' };
  return { ok: true, claims };
}

/** The `kid` a compact JWS's header names, unverified; undefined when it names none. */
export function jwsKeyId(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot > 1024) return undefined;
  const header = fromB64u(token.slice(0, dot));
  if (!header) return undefined;
  try {
    const parsed: unknown = JSON.parse(header.toString('utf8'));
    return isRecord(parsed) && typeof parsed['kid'] === 'string' ? parsed['kid'] : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
