import { parseJoin, type ClientControl, type MediaCloseName, type RenewRefusal } from '@rtc/protocol';
import { fromB64u } from '../../core/encoding.ts';
import { checkGrant, deriveSessionKeys, verifyProof, type GrantKeys, type MediaGrant } from './grant-check.ts';

/** The per-direction keys of one session (docs/protocol/media.md, "Session keys"). */
export interface SessionKeys {
  readonly c2s: Buffer;
  readonly s2c: Buffer;
}

export type JoinCheck =
  | { readonly ok: true; readonly grant: MediaGrant; readonly keys: SessionKeys }
  | { readonly ok: false; readonly close: MediaCloseName; readonly unknownKey?: true | undefined };

/**
 * The checks of a join (docs/protocol/media.md, "What the server checks"): the `join`
 * message, the grant, the proof of possession against this connection's challenge, then the
 * session keys. The media key is wiped before returning. Revocation and admission are the
 * session's.
 */
export async function checkJoin(text: string, keys: GrantKeys, serverNonce: Buffer, nowMs: number): Promise<JoinCheck> {
  const join = parseJoin(text);
  if (!join) return { ok: false, close: 'protocol_error' };
  const check = await checkGrant(join.grant, keys, Math.floor(nowMs / 1000));
  if (!check.ok) return { ok: false, close: check.failure, unknownKey: check.unknownKey };
  const clientNonce = fromB64u(join.nonce)!;
  try {
    if (!verifyProof(check.mediaKey, check.grant.digest, serverNonce, clientNonce, fromB64u(join.proof)!)) {
      return { ok: false, close: 'unauthorized' };
    }
    return { ok: true, grant: check.grant, keys: deriveSessionKeys(check.mediaKey, check.grant.digest, serverNonce, clientNonce) };
  } finally {
    check.mediaKey.fill(0);
  }
}

export type RenewalCheck =
  | { readonly ok: true; readonly grant: MediaGrant }
  | { readonly ok: false; readonly reason: RenewRefusal; readonly unknownKey?: true | undefined };

/**
 * The checks of a renewal (docs/protocol/media.md, "Renewal"): the new grant, its proof
 * against the single-use renewal challenge, and the same project, room and user as `current`.
 */
export async function checkRenewal(
  control: ClientControl & { readonly type: 'renew' }, keys: GrantKeys, challenge: Buffer, current: MediaGrant, nowMs: number,
): Promise<RenewalCheck> {
  const check = await checkGrant(control.grant, keys, Math.floor(nowMs / 1000));
  if (!check.ok) return { ok: false, reason: check.failure === 'expired' ? 'expired' : 'invalid_grant', unknownKey: check.unknownKey };
  const next = check.grant;
  const proven = verifyProof(check.mediaKey, next.digest, challenge, fromB64u(control.nonce)!, fromB64u(control.proof)!);
  check.mediaKey.fill(0);
  if (!proven) return { ok: false, reason: 'bad_proof' };
  if (next.projectId !== current.projectId || next.roomId !== current.roomId || next.userId !== current.userId) {
    return { ok: false, reason: 'identity_mismatch' };
  }
  return { ok: true, grant: next };
}
