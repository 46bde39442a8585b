/**
 * Verification of the platform's compact JWS (RFC 7515, EdDSA with Ed25519): media grants and
 * signaling tokens (docs/protocol/media.md, "What the server checks"; docs/protocol/signaling.md,
 * "Tokens"). Runs on Web Crypto (`globalThis.crypto.subtle`: Node 20 and browsers); signing is the
 * token host's.
 */
import { decodeBase64url } from './base64url.ts';
import { MAX_GRANT_CHARS } from './media-limits.ts';

/** `typ` of a media grant's header. */
export const GRANT_TYPE = 'rtc-grant+jwt';
/** `typ` of a signaling token's header. */
export const SIGNALING_TOKEN_TYPE = 'rtc-signaling+jwt';

/** A public key as Web Crypto holds it (`CryptoKey`), imported for `verify`. */
export interface JwsVerifyKey {
  readonly type: string;
  readonly extractable: boolean;
  readonly algorithm: object;
  readonly usages: readonly string[];
}

/** An Ed25519 public key as a JWK (an entry of `GET /.well-known/jwks.json`). */
export interface Ed25519PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid?: string | undefined;
}

/** The part of Web Crypto the verifier calls. */
interface Ed25519Subtle {
  importKey(format: 'jwk', key: { kty: 'OKP'; crv: 'Ed25519'; x: string }, algorithm: { name: 'Ed25519' }, extractable: false,
    usages: ['verify']): Promise<JwsVerifyKey>;
  verify(algorithm: { name: 'Ed25519' }, key: JwsVerifyKey, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

interface WebPlatform {
  readonly crypto: { readonly subtle: Ed25519Subtle };
  readonly TextDecoder: new (label: string, options: { ignoreBOM: boolean }) => { decode(bytes: Uint8Array): string };
}

const platform = globalThis as unknown as WebPlatform;
// a byte-order mark is kept, so JSON.parse refuses it as any other stray character
const utf8 = new platform.TextDecoder('utf-8', { ignoreBOM: true });

/** Why a JWS was refused. */
export type JwsFailure = 'malformed' | 'unknown_key' | 'bad_signature' | 'wrong_type';

export type JwsVerification =
  | { readonly ok: true; readonly header: Record<string, unknown>; readonly claims: Record<string, unknown> }
  | { readonly ok: false; readonly reason: JwsFailure };

/** The verification key a `kid` names, or undefined when it names none the verifier trusts. */
export type JwsKeyLookup = (kid: string) => JwsVerifyKey | undefined | Promise<JwsVerifyKey | undefined>;

/** Imports an Ed25519 public JWK for `verifyJws`. Import each key once and keep it: importing costs more than a verification. */
export function importEd25519Jwk(jwk: Ed25519PublicJwk): Promise<JwsVerifyKey> {
  return platform.crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
}

/**
 * A lookup over the Ed25519 keys of a JWKS document (`{"keys": [...]}`): each key is imported on
 * first use, then kept. Entries that are not Ed25519 public keys are skipped.
 */
export function jwksKeyLookup(jwks: unknown): JwsKeyLookup {
  const entries = isRecord(jwks) && Array.isArray(jwks['keys']) ? (jwks['keys'] as unknown[]) : [];
  const imported = new Map<string, Promise<JwsVerifyKey | undefined>>();
  return (kid) => {
    let key = imported.get(kid);
    if (key === undefined) {
      const jwk = entries.find((k): k is Ed25519PublicJwk => isRecord(k) && k['kid'] === kid && k['kty'] === 'OKP'
        && k['crv'] === 'Ed25519' && typeof k['x'] === 'string');
      key = jwk ? importEd25519Jwk(jwk).catch(() => undefined) : Promise.resolve(undefined);
      imported.set(kid, key);
    }
    return key;
  };
}

/** A base64url segment of a compact JWS decoded as a JSON object (header or claims); undefined when it is not one. */
export function decodeJwsSegment(segment: string): Record<string, unknown> | undefined {
  const bytes = decodeBase64url(segment);
  if (!bytes) return undefined;
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The `kid` a compact JWS's header names, unverified; undefined when it names none. */
export function jwsKeyId(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot > 1024) return undefined;
  const kid = decodeJwsSegment(token.slice(0, dot))?.['kid'];
  return typeof kid === 'string' ? kid : undefined;
}

/**
 * Checks a compact JWS's structure, header (`alg` EdDSA, `typ` one of `types`) and signature by the
 * key its `kid` names; returns its header and claims as untyped JSON (the caller checks `aud`,
 * `exp` and the rest) or the reason it failed.
 *
 * @example
 * ```ts
 * const keys = jwksKeyLookup(await (await fetch(`${tokenHost}/.well-known/jwks.json`)).json());
 * const result = await verifyJws(grant, keys, GRANT_TYPE);
 * if (!result.ok) throw new Error(`grant refused: ${result.reason}`);
 * ```
 */
export async function verifyJws(token: string, keys: JwsKeyLookup, types: string | readonly string[]): Promise<JwsVerification> {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > MAX_GRANT_CHARS) return { ok: false, reason: 'malformed' };
  const [h, p, s] = parts as [string, string, string];
  const signature = decodeBase64url(s);
  const header = decodeJwsSegment(h);
  const claims = decodeJwsSegment(p);
  if (!signature || !header || !claims) return { ok: false, reason: 'malformed' };
  const typ = header['typ'];
  if (header['alg'] !== 'EdDSA' || typeof typ !== 'string' || !(typeof types === 'string' ? typ === types : types.includes(typ))) {
    return { ok: false, reason: 'wrong_type' };
  }
  const kid = header['kid'];
  const key = typeof kid === 'string' ? await keys(kid) : undefined;
  if (!key) return { ok: false, reason: 'unknown_key' };
  let valid: boolean;
  try {
    valid = await platform.crypto.subtle.verify({ name: 'Ed25519' }, key, signature, asciiBytes(`${h}.${p}`));
  } catch {
    valid = false;
  }
  return valid ? { ok: true, header, claims } : { ok: false, reason: 'bad_signature' };
}

/** The signing input's bytes: base64url text and a dot, ASCII only. */
function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
