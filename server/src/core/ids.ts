import { randomBytes } from 'node:crypto';
import { ID_PREFIX } from '../../../protocol/src/ids.ts';

/** 128 random bits as 22 base64url characters, behind the kind's prefix (docs/reference/token-api.md, "Identifiers"). */
export function newId(kind: 'project' | 'app' | 'account'): string {
  return ID_PREFIX[kind] + randomBytes(16).toString('base64url');
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
