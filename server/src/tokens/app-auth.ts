import { createHmac } from 'node:crypto';
import type { AddressLimits } from '../http/context.ts';
import { AUTH_FAILURE_WINDOW_SECONDS, AUTH_FAILURES_PER_WINDOW, isId } from '@rtc/protocol';
import { createAddressSet, type AddressSet } from '../core/address.ts';
import { safeEqual } from '../core/encoding.ts';
import { ApiError, badCredentials, rateLimited } from '../core/errors.ts';
import type { AuthCredential } from '../customers/store.ts';
import type { ServiceDeps } from '../core/deps.ts';
import type { LimitResult, TokenAdmission } from '../core/ports.ts';
import type { CachedCredential, CredentialCache } from './credential-cache.ts';
import type { CredentialStore } from '../customers/store.ts';

// Compared against when the App ID is unknown, so both failures cost the same work (no timing oracle).
const DUMMY_HASH = Buffer.alloc(32);

const failureKey = (address: string): string => `authfail:${address}`;
const appKey = (appId: string): string => `app:${appId}`;

/** The credential a request presents: its App ID when well formed, and the hash of its secret once computed. */
export interface Presented {
  readonly appId: string | undefined;
  readonly password: string;
  hash?: Buffer;
}

export function presentedCredential(authorization: string | undefined): Presented {
  const basic = parseBasicAuth(authorization);
  return { appId: basic && isId('app', basic.user) ? basic.user : undefined, password: basic?.password ?? '' };
}

const presentedHash = (deps: ServiceDeps<unknown>, presented: Presented): Buffer =>
  (presented.hash ??= createHmac('sha256', deps.keys.secretHashKey).update(presented.password).digest());

/** What step 1 learned, for steps 5 to 8. */
export interface Admitted {
  readonly presented: Presented;
  /** The project whose credential version was read, and that version; undefined: no cached credential may be used. */
  readonly projectId: string | undefined;
  readonly version: string | undefined;
  /** A cached credential confirmed current whose App ID was counted in the same step, and that count. */
  readonly confirmed?: { readonly cred: AuthCredential; readonly app: LimitResult } | undefined;
}

/**
 * Step 1 of docs/reference/token-api.md, "Order of checks": a blocked address, or one over its rate
 * limit, gets 429. In a cluster the same round trip reads the version of the claimed credential's
 * project and, when `mayCountApp` (the request can no longer fail before authentication) and this
 * process holds the credential with a matching secret, counts the App ID if that version is still
 * the one it was cached with (docs/decisions/scale-out.md, "Credential cache").
 */
export async function admitTokenRequest(
  deps: ServiceDeps<unknown>, admission: TokenAdmission, cache: CredentialCache | undefined,
  address: string, limits: AddressLimits, presented: Presented, mayCountApp: boolean,
): Promise<Admitted> {
  const appId = presented.appId;
  const projectId = cache && appId !== undefined ? cache.projectOf(appId) : undefined;
  let candidate: CachedCredential | undefined;
  if (mayCountApp && projectId !== undefined && appId !== undefined) {
    const entry = cache!.get(appId);
    if (entry && entry.cred.revokedAt === null && safeEqual(presentedHash(deps, presented), entry.secretHash)) candidate = entry;
  }
  const result = await admission.admit({
    block: { key: failureKey(address), max: AUTH_FAILURES_PER_WINDOW, windowSec: AUTH_FAILURE_WINDOW_SECONDS },
    rate: { key: `addr:${address}`, max: limits.addressPerMinute, windowSec: 60 },
    projectId,
    app: candidate && { key: appKey(candidate.cred.appId), max: limits.appPerMinute, windowSec: 60, version: candidate.version },
  });
  if (!result.address.ok) throw rateLimited(result.address.retryAfterSec);
  return {
    presented, projectId, version: result.version,
    confirmed: candidate && result.app ? { cred: candidate.cred, app: result.app } : undefined,
  };
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

/** The caller's credential: the cached one when its version was confirmed at step 1, else the store's (cached for the next request). */
async function findCredential(
  deps: ServiceDeps<CredentialStore>, cache: CredentialCache | undefined, admitted: Admitted,
): Promise<{ cred: AuthCredential; secretHash: Buffer; cached: boolean } | undefined> {
  const appId = admitted.presented.appId;
  if (appId === undefined) return undefined;
  const entry = cache?.get(appId);
  if (entry && admitted.version !== undefined && entry.version === admitted.version) return { ...entry, cached: true };
  const cred = await deps.store.findCredentialForAuth(appId);
  if (!cred) return undefined;
  // the version was read before the store was: a change between them moved it, so this entry is never used
  cache?.set(cred, admitted.projectId === cred.projectId ? admitted.version : undefined);
  return { cred, secretHash: Buffer.from(cred.secretHash, 'base64url'), cached: false };
}

/**
 * Steps 5 to 8 of docs/reference/token-api.md, "Order of checks": authentication (one identical 401 for every cause), the
 * App ID's rate limit, the IP allowlist and the project's archived state.
 */
export async function authenticateApp(
  deps: ServiceDeps<CredentialStore>, admitted: Admitted, cache: CredentialCache | undefined, address: string, limits: AddressLimits,
): Promise<AuthCredential> {
  let cred: AuthCredential | undefined;
  let rate: LimitResult | undefined;
  if (admitted.confirmed) {
    ({ cred, app: rate } = admitted.confirmed);
  } else {
    const found = await findCredential(deps, cache, admitted);
    // an unknown App ID costs the same work as a wrong secret (no timing oracle)
    const match = safeEqual(presentedHash(deps, admitted.presented), found ? found.secretHash : DUMMY_HASH);
    if (!found || !match || found.cred.revokedAt !== null) {
      // a failure decided from the cache reads the store too: a real App ID with a wrong secret costs
      // what an unknown one costs, in time and in the answer while the store is away (503)
      if (found?.cached) await deps.store.findCredentialForAuth(found.cred.appId);
      await recordAuthFailure(deps, address);
      throw badCredentials();
    }
    cred = found.cred;
  }
  rate ??= await deps.limiter.hit(appKey(cred.appId), limits.appPerMinute, 60);
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
