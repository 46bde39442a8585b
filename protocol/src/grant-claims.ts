import { MAX_PUBLISH_STREAMS, MAX_STREAM_ID, MAX_SUBSCRIBE_STREAMS } from './limits.ts';
import { ROLES, type GrantClaims, type Role } from './wire.ts';

/** `room` and `sub`: 1-128 printable ASCII characters. */
const ID_TEXT = /^[\x21-\x7e]{1,128}$/;
/** `jti`: 16 bytes in base64url. */
const GRANT_ID = /^[A-Za-z0-9_-]{22}$/;
/** `prj` and `app`: an id with its prefix (a verifier may hold them to the exact id format). */
const PROJECT_ID = /^prj_[\x21-\x7e]{1,124}$/;
const APP_ID = /^app_[\x21-\x7e]{1,124}$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isStreamList(value: unknown, max: number): value is readonly number[] {
  if (!Array.isArray(value) || value.length > max) return false;
  const seen = new Set<number>();
  for (const id of value) {
    if (!Number.isInteger(id) || (id as number) < 1 || (id as number) > MAX_STREAM_ID || seen.has(id as number)) return false;
    seen.add(id as number);
  }
  return true;
}

/**
 * The claims of a media grant or signaling token (docs/protocol/media.md, "What the server
 * checks"), typed; undefined when a claim is missing or malformed. Parsing only: the signature,
 * the issuer, the audience a verifier expects and the times against its clock are its own checks.
 */
export function parseGrantClaims(value: unknown): GrantClaims | undefined {
  if (!isRecord(value)) return undefined;
  const { iss, aud, jti, prj, app, room, sub, role, pub, subs, sub_room, iat, exp, cnf } = value;
  if (typeof iss !== 'string' || (aud !== 'rtc-media' && aud !== 'rtc-signaling')) return undefined;
  if (typeof jti !== 'string' || !GRANT_ID.test(jti)) return undefined;
  if (typeof prj !== 'string' || !PROJECT_ID.test(prj)) return undefined;
  if (typeof app !== 'string' || !APP_ID.test(app)) return undefined;
  if (typeof room !== 'string' || !ID_TEXT.test(room) || typeof sub !== 'string' || !ID_TEXT.test(sub)) return undefined;
  if (!(ROLES as readonly unknown[]).includes(role)) return undefined;
  if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return undefined;
  if (!isStreamList(pub, MAX_PUBLISH_STREAMS) || !isStreamList(subs, MAX_SUBSCRIBE_STREAMS) || typeof sub_room !== 'boolean') return undefined;
  // an audience member never publishes
  if (role === 'audience' && pub.length > 0) return undefined;
  const kid = isRecord(cnf) ? cnf['kid'] : undefined;
  if (typeof kid !== 'string') return undefined;
  return {
    iss, aud, jti, prj, app, room, sub, role: role as Role, pub: [...pub], subs: [...subs], sub_room,
    iat: iat as number, exp: exp as number, cnf: { kid },
  };
}
