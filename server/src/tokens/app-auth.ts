import { createHmac } from 'node:crypto';
import type { AddressLimits } from '../http/context.ts';
import { AUTH_FAILURE_WINDOW_SECONDS, AUTH_FAILURES_PER_WINDOW, isId } from '@rtc/protocol';
import { createAddressSet, type AddressSet } from '../core/address.ts';
import { safeEqual } from '../core/encoding.ts';
import { ApiError, badCredentials, rateLimited } from '../core/errors.ts';
import type { AuthCredential } from '../customers/store.ts';
import type { ServiceDeps } from '../core/deps.ts';
import type { CredentialStore } from '../customers/store.ts';

// Compared against when the App ID is unknown, so both failures cost the same work (no timing oracle).
const DUMMY_HASH = Buffer.alloc(32);

const failureKey = (address: string): string => `authfail:${address}`;

/** Step 1 of docs/reference/token-api.md, "Order of checks": a blocked address, or one over its rate limit, gets 429. */
export async function admitAddress(deps: ServiceDeps<CredentialStore>, address: string, limits: AddressLimits): Promise<void> {
  const blocked = await deps.limiter.peek(failureKey(address), AUTH_FAILURES_PER_WINDOW, AUTH_FAILURE_WINDOW_SECONDS);
  if (!blocked.ok) throw rateLimited(blocked.retryAfterSec);
  const rate = await deps.limiter.hit(`addr:${address}`, limits.addressPerMinute, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
}

/** Counts an authentication failure against the address (20 in five minutes block it). */
export async function recordAuthFailure(deps: ServiceDeps<CredentialStore>, address: string): Promise<void> {
  await deps.limiter.hit(failureKey(address), AUTH_FAILURES_PER_WINDOW, AUTH_FAILURE_WINDOW_SECONDS);
}

/** Splits an HTTP Basic header into its user name and password; undefined when malformed. */
export function parseBasicAuth(header: string | undefined): { user: string; password: string } | undefined {
  if (header === undefined || header.length > 1024) return undefined;
  const space = header.indexOf(' ');
  if (space === -1 || header.slice(0, space).toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Steps 5 to 8 of docs/reference/token-api.md, "Order of checks": authentication (one identical 401 for every cause), the
 * App ID's rate limit, the IP allowlist and the project's archived state.
 */
export async function authenticateApp(
  deps: ServiceDeps<CredentialStore>,
  authorization: string | undefined,
  address: string,
  limits: AddressLimits,
): Promise<AuthCredential> {
  const basic = parseBasicAuth(authorization);
  const cred = basic && isId('app', basic.user) ? await deps.store.findCredentialForAuth(basic.user) : undefined;
  const presented = createHmac('sha256', deps.keys.secretHashKey).update(basic?.password ?? '').digest();
  const expected = cred ? Buffer.from(cred.secretHash, 'base64url') : DUMMY_HASH;
  const match = safeEqual(presented, expected);
  if (!cred || !match || cred.revokedAt !== null) {
    await recordAuthFailure(deps, address);
    throw badCredentials();
  }
  const rate = await deps.limiter.hit(`app:${cred.appId}`, limits.appPerMinute, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  if (cred.ipAllowlist.length > 0 && !allowlistOf(cred).has(address)) {
    throw new ApiError('ip_not_allowed', 'the caller address is outside the credential IP allowlist');
  }
  if (cred.projectArchived) throw new ApiError('project_archived', 'the project is archived');
  return cred;
}

// Parsed allowlists, keyed by App ID and invalidated when the list itself changes.
const allowlists = new Map<string, { version: string; set: AddressSet }>();
const MAX_CACHED_ALLOWLISTS = 10_000;

function allowlistOf(cred: AuthCredential): AddressSet {
  const version = cred.ipAllowlist.join(',');
  const cached = allowlists.get(cred.appId);
  if (cached && cached.version === version) return cached.set;
  if (allowlists.size >= MAX_CACHED_ALLOWLISTS) allowlists.clear();
  const set = createAddressSet(cred.ipAllowlist);
  allowlists.set(cred.appId, { version, set });
  return set;
}
