import { randomBytes } from 'node:crypto';
import { ID_PREFIX } from '@rtc/protocol';

/** Prefixes of the ids only the server's own records carry (the wire's are in the protocol). */
export const RECORD_ID_PREFIX = {
  quote: 'quo_',
  subscriptionRequest: 'sreq_',
  webhook: 'wh_',
  event: 'evt_',
  delivery: 'dlv_',
} as const;

/** The kinds of id that `newId` mints, each behind its prefix. */
export type IdKind = 'project' | 'app' | 'account' | keyof typeof RECORD_ID_PREFIX;

const PREFIX: Readonly<Record<IdKind, string>> = {
  project: ID_PREFIX.project, app: ID_PREFIX.app, account: ID_PREFIX.account, ...RECORD_ID_PREFIX,
};

/** 128 random bits as 22 base64url characters, behind the kind's prefix (docs/reference/token-api.md, "Identifiers"). */
export function newId(kind: IdKind): string {
  return PREFIX[kind] + newOpaqueId();
}

/** 128 random bits as 22 base64url characters, without a prefix: ids never shown to a caller. */
export function newOpaqueId(): string {
  return randomBytes(16).toString('base64url');
}

/** A key id: the kind's prefix, the creation time and 32 random bits, e.g. `sig-1767225600-9f86d081`. */
export function newKeyId(kind: 'sig' | 'mk', createdAtSec: number): string {
  return `${kind}-${createdAtSec}-${randomBytes(4).toString('hex')}`;
}

/** The epoch of a room's event log: 48 random bits (8 base64url characters), new for every log. */
export function newLogEpoch(): string {
  return randomBytes(6).toString('base64url');
}

// Ids minted on every request are cut from a pool of random bytes: one randomBytes call costs a
// native job and a buffer allocation, several times the cost of the bytes. Each pool is fresh,
// never refilled in place, so a slice handed out is never overwritten or handed out again.
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomPoolOffset = 0;

function takeRandom(size: number): Buffer {
  if (randomPoolOffset + size > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomPoolOffset = 0;
  }
  const bytes = randomPool.subarray(randomPoolOffset, randomPoolOffset + size);
  randomPoolOffset += size;
  return bytes;
}

/** A grant id (`jti`): 16 random bytes. */
export function newGrantId(): Buffer {
  return takeRandom(16);
}

/** A request id for logs and the `x-request-id` header: `req_` + 96 random bits (16 base64url characters). */
export function newRequestId(): string {
  return `req_${takeRandom(12).toString('base64url')}`;
}

/** An App Secret: `sk_` + 256 random bits (43 base64url characters). */
export function newAppSecret(): string {
  return ID_PREFIX.secret + randomBytes(32).toString('base64url');
}

/** A bearer secret of the customer API (`cs_` access token or `rt_` refresh token). */
export function newBearer(kind: 'session' | 'refresh'): string {
  return ID_PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** A webhook signing secret: `whsec_` + 256 random bits (43 base64url characters). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
