import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { MAX_PUBLISH_STREAMS, MAX_STREAM_ID, MAX_SUBSCRIBE_STREAMS } from '../../../protocol/src/limits.ts';
import { isId } from '../../../protocol/src/ids.ts';
import { ROLES, type Role } from '../../../protocol/src/wire.ts';
import { fromB64u, safeEqual } from '../core/encoding.ts';
import { GRANT_TYPE, verifyJws } from '../core/grant.ts';
import type { MediaMasterKey, SigningKey } from '../core/keyring.ts';
import { deriveMediaKey } from '../core/media-key.ts';
import { CLOCK_SKEW_SECONDS, LABEL } from './limits.ts';

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
  readonly expiresAt: number;
}

/** Key material a media server verifies grants with. */
export interface GrantKeys {
  readonly verifying: ReadonlyMap<string, SigningKey>;
  readonly masters: ReadonlyMap<string, MediaMasterKey>;
  readonly issuer: string;
}

export type GrantCheck =
  | { readonly ok: true; readonly grant: MediaGrant; readonly mediaKey: Buffer }
  | { readonly ok: false; readonly failure: 'unauthorized' | 'expired' };

const ID_TEXT = /^[\x21-\x7e]{1,128}$/;
const GRANT_ID = /^[A-Za-z0-9_-]{22}$/;
const UNAUTHORIZED = { ok: false, failure: 'unauthorized' } as const;

/**
 * Verifies a grant (docs/protocol/media.md, "What the server checks"): signature by a published key, `typ`, `iss`, `aud`, claim
 * shapes, `iat`/`exp` against `nowSec`, and derives its media key from the master named by `cnf.kid`.
 * Revocation is the caller's check.
 */
export function checkGrant(token: string, keys: GrantKeys, nowSec: number): GrantCheck {
  const verified = verifyJws(token, keys.verifying, GRANT_TYPE);
  if (!verified.ok) return UNAUTHORIZED;
  const c = verified.claims;
  const jti = c['jti'];
  const prj = c['prj'];
  const app = c['app'];
  const room = c['room'];
  const sub = c['sub'];
  const role = c['role'];
  const iat = c['iat'];
  const exp = c['exp'];
  const cnf = c['cnf'];
  if (c['aud'] !== 'rtc-media' || c['iss'] !== keys.issuer) return UNAUTHORIZED;
  if (typeof jti !== 'string' || !GRANT_ID.test(jti)) return UNAUTHORIZED;
  if (typeof prj !== 'string' || !isId('project', prj) || typeof app !== 'string' || !isId('app', app)) return UNAUTHORIZED;
  if (typeof room !== 'string' || !ID_TEXT.test(room) || typeof sub !== 'string' || !ID_TEXT.test(sub)) return UNAUTHORIZED;
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) return UNAUTHORIZED;
  if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return UNAUTHORIZED;
  const pub = streamSet(c['pub'], MAX_PUBLISH_STREAMS);
  const subs = streamSet(c['subs'], MAX_SUBSCRIBE_STREAMS);
  const subRoom = c['sub_room'];
  if (!pub || !subs || typeof subRoom !== 'boolean' || (role === 'audience' && pub.size > 0)) return UNAUTHORIZED;
  const masterKid = typeof cnf === 'object' && cnf !== null && !Array.isArray(cnf) ? (cnf as Record<string, unknown>)['kid'] : undefined;
  const master = typeof masterKid === 'string' ? keys.masters.get(masterKid) : undefined;
  if (!master) return UNAUTHORIZED;
  if ((iat as number) > nowSec + CLOCK_SKEW_SECONDS) return UNAUTHORIZED;
  if ((exp as number) <= nowSec) return { ok: false, failure: 'expired' };
  const grantIdBytes = fromB64u(jti)!;
  return {
    ok: true,
    mediaKey: deriveMediaKey(master.secret, grantIdBytes),
    grant: {
      token,
      digest: createHash('sha256').update(token).digest(),
      grantId: jti,
      projectId: prj,
      appId: app,
      roomId: room,
      userId: sub,
      role: role as Role,
      pub,
      subs,
      subRoom,
      expiresAt: exp as number,
    },
  };
}

function streamSet(value: unknown, max: number): Set<number> | undefined {
  if (!Array.isArray(value) || value.length > max) return undefined;
  const set = new Set<number>();
  for (const id of value) {
    if (!Number.isInteger(id) || (id as number) < 1 || (id as number) > MAX_STREAM_ID) return undefined;
    set.add(id as number);
  }
  return set.size === value.length ? set : undefined;
}

/** HMAC-SHA-256(K, "rtc/pop/v1" || SHA-256(grant) || server nonce || client nonce). */
export function proofOfPossession(mediaKey: Buffer, grantDigest: Buffer, serverNonce: Buffer, clientNonce: Buffer): Buffer {
  return createHmac('sha256', mediaKey).update(LABEL.proof).update(grantDigest).update(serverNonce).update(clientNonce).digest();
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
  return { c2s: expand(LABEL.clientToServer), s2c: expand(LABEL.serverToClient) };
}
