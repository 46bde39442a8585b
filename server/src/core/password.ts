import { randomBytes, scrypt, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { safeEqual } from './encoding.ts';
import { ApiError } from './errors.ts';
import { Gate } from './gate.ts';

// The least memory of OWASP's equal-strength scrypt settings: N=2^13, r=8, p=10. Each hash holds
// 8 MiB (128 * r * N) where N=2^15, p=3 held 32 MiB, a peak every process that serves a sign-in
// reached (docs/decisions/customers.md); the p blocks run one after the other in the same memory.
const PARAMS: ScryptParams = { N: 8192, r: 8, p: 10 };
const KEY_LENGTH = 32;
const MAXMEM = 128 * 1024 * 1024;

/**
 * Each hash costs about a seventh of a second of CPU and 8 MiB: at most one per core at once, and a short
 * queue behind them; a sign-in or registration beyond that is answered 503 with Retry-After at once,
 * so a burst of logins cannot starve the token API of CPU or the process of memory.
 */
const HASH_CONCURRENCY = Math.max(1, availableParallelism());
const HASH_QUEUE = 16 * HASH_CONCURRENCY;
const hashing = new Gate(HASH_CONCURRENCY, HASH_QUEUE, () =>
  new ApiError('unavailable', 'too many sign-ins are being checked right now; retry shortly', { retryAfterSec: 1 }));

function scryptAsync(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return hashing.run(() => new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  }));
}

/** scrypt cost parameters; a stored hash records its own, so verification follows the hash. */
export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** Hashing and checking of account passwords, as the services use it. */
export interface PasswordHasher {
  /** Hashes a password as `scrypt$N$r$p$salt$hash` (base64url parts). */
  hash(password: string): Promise<string>;
  /** Checks a password against a stored hash in constant time; false for a malformed hash. */
  verify(password: string, stored: string): Promise<boolean>;
  /** Whether a stored hash was made at another cost than this hasher's (it is hashed again at the next sign-in). */
  needsRehash(stored: string): boolean;
  /**
   * A hash of a password nobody knows: verified against when an e-mail is unknown (no timing
   * oracle). Made on first use, so processes that never see a login never pay for it.
   */
  dummyHash(): Promise<string>;
}

/**
 * The platform's password hasher. `params` defaults to the production cost; only tests pass a
 * cheaper one (the in-process test platform), so that creating a test account does not cost half a
 * second of CPU.
 */
export function createPasswordHasher(params: ScryptParams = PARAMS): PasswordHasher {
  let dummy: Promise<string> | undefined;
  const hash = async (password: string): Promise<string> => {
    const salt = randomBytes(16);
    const key = await scryptAsync(password, salt, KEY_LENGTH, { ...params, maxmem: MAXMEM });
    return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
  };
  return {
    hash,
    async verify(password, stored) {
      const [scheme, n, r, p, salt, expectedHash] = stored.split('$');
      if (scheme !== 'scrypt' || !n || !r || !p || !salt || !expectedHash) return false;
      const expected = Buffer.from(expectedHash, 'base64url');
      const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length,
        { N: Number(n), r: Number(r), p: Number(p), maxmem: MAXMEM });
      return safeEqual(actual, expected);
    },
    needsRehash(stored) {
      const [scheme, n, r, p] = stored.split('$');
      return scheme !== 'scrypt' || Number(n) !== params.N || Number(r) !== params.r || Number(p) !== params.p;
    },
    dummyHash() {
      dummy ??= hash(randomBytes(16).toString('base64url'));
      return dummy;
    },
  };
}
