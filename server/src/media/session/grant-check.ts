import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { isId, KEY_LABEL, parseGrantClaims, type Role } from '@rtc/protocol';
import { fromB64u, safeEqual } from '../../core/encoding.ts';
import { GRANT_TYPE, verifyGrantJws } from '../../core/grant.ts';
import type { MediaMasterKey, SigningKey } from '../../core/keyring.ts';
import { deriveMediaKey } from '../../tokens/media-key.ts';
import { CLOCK_SKEW_SECONDS } from '../node/limits.ts';

/** A verified media grant: who may do what in which room, until when. */
export interface MediaGrant {
  /** The compact JWS as presented. */
  readonly token: string;
  /** SHA-256 of the JWS text: binds proofs and session keys to this grant. */
  readonly digest: Buffer;
  readonly grantId: string;
  readonly projectId: string;
  readonly appId: string;
  readonly roomId: string;
  readonly userId: string;
  readonly role: Role;
  readonly pub: ReadonlySet<number>;
  readonly subs: ReadonlySet<number>;
  readonly subRoom: boolean;
  /** `iat`: a project's archive cut-off refuses grants issued at or before it. */
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/** Key material a media server verifies grants with. */
export interface GrantKeys {
  readonly verifying: ReadonlyMap<string, SigningKey>;
  readonly masters: ReadonlyMap<string, MediaMasterKey>;
  readonly issuer: string;
  /**
   * Loads keys rotated in since (throttled); true when there are new ones. Asked when a grant
   * names a key this server does not know: another node may already sign with a new key.
   */
  readonly reload?: (() => Promise<boolean>) | undefined;
}

export type GrantCheck =
  | { readonly ok: true; readonly grant: MediaGrant; readonly mediaKey: Buffer }
  /** `unknownKey`: signed by, or naming a media master, that these keys lack (worth a reload). */
  | { readonly ok: false; readonly failure: 'unauthorized' | 'expired'; readonly unknownKey?: true };

const UNAUTHORIZED = { ok: false, failure: 'unauthorized' } as const;
const UNKNOWN_KEY = { ok: false, failure: 'unauthorized', unknownKey: true } as const;

/**
 * Verifies a grant (docs/protocol/media.md, "What the server checks"): signature by a published
 * key, `typ`, the claims (`parseGrantClaims`), `iss`, `aud`, the exact id formats, `iat`/`exp`
 * against `nowSec`, and derives its media key from the master named by `cnf.kid`. Revocation is
 * the caller's check.
 */
export async function checkGrant(token: string, keys: GrantKeys, nowSec: number): Promise<GrantCheck> {
  const verified = await verifyGrantJws(token, keys.verifying, GRANT_TYPE);
  if (!verified.ok) return verified.reason === 'unknown_key' ? UNKNOWN_KEY : UNAUTHORIZED;
  const c = parseGrantClaims(verified.claims);
  if (!c || c.aud !== 'rtc-media' || c.iss !== keys.issuer) return UNAUTHORIZED;
  if (!isId('project', c.prj) || !isId('app', c.app)) return UNAUTHORIZED;
  const master = keys.masters.get(c.cnf.kid);
  if (!master) return UNKNOWN_KEY;
  if (c.iat > nowSec + CLOCK_SKEW_SECONDS) return UNAUTHORIZED;
  if (c.exp <= nowSec) return { ok: false, failure: 'expired' };
  return {
    ok: true,
    mediaKey: deriveMediaKey(master.secret, fromB64u(c.jti)!),
    grant: {
      token,
      digest: createHash('sha256').update(token).digest(),
      grantId: c.jti,
      projectId: c.prj,
      appId: c.app,
      roomId: c.room,
      userId: c.sub,
      role: c.role,
      pub: new Set(c.pub),
      subs: new Set(c.subs),
      subRoom: c.sub_room,
      issuedAt: c.iat,
      expiresAt: c.exp,
    },
  };
}

/** HMAC-SHA-256(K, "rtc/pop/v1" || SHA-256(grant) || server nonce || client nonce). */
export function proofOfPossession(mediaKey: Buffer, grantDigest: Buffer, serverNonce: Buffer, clientNonce: Buffer): Buffer {
  return createHmac('sha256', mediaKey).update(KEY_LABEL.proof).update(grantDigest).update(serverNonce).update(clientNonce).digest();
}

/** Constant-time check of a client's proof. */
export function verifyProof(mediaKey: Buffer, grantDigest: Buffer, serverNonce: Buffer, clientNonce: Buffer, proof: Buffer): boolean {
  return safeEqual(proofOfPossession(mediaKey, grantDigest, serverNonce, clientNonce), proof);
}

/** Per-direction session keys: HKDF-SHA-256(K, salt = server nonce || client nonce, info = label || SHA-256(grant)). */
export function deriveSessionKeys(mediaKey: Buffer, grantDigest: Buffer, serverNonce: Buffer, clientNonce: Buffer): { c2s: Buffer; s2c: Buffer } {
  const salt = Buffer.concat([serverNonce, clientNonce]);
  const expand = (label: string): Buffer =>
    Buffer.from(hkdfSync('sha256', mediaKey, salt, Buffer.concat([Buffer.from(label), grantDigest]), 32));
  return { c2s: expand(KEY_LABEL.clientToServer), s2c: expand(KEY_LABEL.serverToClient) };
}
