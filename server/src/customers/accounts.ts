import { createHmac } from 'node:crypto';
import { AUTH_FAILURE_WINDOW_SECONDS, AUTH_FAILURES_PER_WINDOW, ID_PREFIX, type Account, type SessionTokens } from '@rtc/protocol';
import { ApiError, rateLimited } from '../core/errors.ts';
import { newBearer, newId, newOpaqueId } from '../core/ids.ts';
import type { AccountRecord, SessionRecord } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import type { AccountStore } from './store.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 900;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
const REGISTRATIONS_PER_HOUR = 100;

export type AccountView = Account;
export type { SessionTokens };

const LOGIN_FAILED = 'invalid e-mail address or password';
const SESSION_INVALID = 'the session token is missing, invalid or expired';

export const accountView = (a: AccountRecord): AccountView => ({ id: a.id, email: a.email, created_at: a.createdAt });

function hashBearer(deps: ServiceDeps<AccountStore>, token: string): string {
  return createHmac('sha256', deps.keys.secretHashKey).update(`bearer:${token}`).digest('base64url');
}

async function openSession(deps: ServiceDeps<AccountStore>, account: AccountRecord, familyId: string): Promise<SessionTokens> {
  const now = nowSec(deps.clock);
  const access = newBearer('session');
  const refresh = newBearer('refresh');
  const session: SessionRecord = {
    id: newOpaqueId(), accountId: account.id, familyId,
    accessHash: hashBearer(deps, access), accessExpiresAt: now + ACCESS_TOKEN_TTL_SECONDS,
    refreshHash: hashBearer(deps, refresh), refreshExpiresAt: now + REFRESH_TOKEN_TTL_SECONDS,
    status: 'active', createdAt: now,
  };
  await deps.store.insertSession(session);
  return {
    account: accountView(account), access_token: access, refresh_token: refresh, token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
  };
}

export async function register(deps: ServiceDeps<AccountStore>, email: string, password: string, address: string): Promise<SessionTokens> {
  const rate = await deps.limiter.hit(`register:${address}`, REGISTRATIONS_PER_HOUR, 3600);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  const account: AccountRecord = {
    id: newId('account'), email: email.toLowerCase(), passwordHash: await deps.passwords.hash(password),
    createdAt: nowSec(deps.clock),
  };
  if (!(await deps.store.insertAccount(account))) {
    throw new ApiError('conflict', 'an account with this e-mail address exists');
  }
  return openSession(deps, account, newOpaqueId());
}

// Attempts waiting for, or holding, each failure key (an address or an e-mail address).
const loginQueues = new Map<string, Promise<void>>();

/**
 * Runs `task` once every earlier task of `key` in this process has ended. A password check takes
 * long (scrypt) and its failure is counted only at its end: attempts that ran side by side would all
 * pass the block check before any of them counted, and so could check any number of passwords.
 */
async function oneAtATime<T>(key: string, task: () => Promise<T>): Promise<T> {
  const earlier = loginQueues.get(key);
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = earlier ? earlier.then(() => done) : done;
  loginQueues.set(key, tail);
  try {
    await earlier;
    return await task();
  } finally {
    release();
    if (loginQueues.get(key) === tail) loginQueues.delete(key);
  }
}

/** Login failures are limited like token-API authentication: per address and per e-mail address. */
export async function login(deps: ServiceDeps<AccountStore>, email: string, password: string, address: string): Promise<SessionTokens> {
  const normalized = email.toLowerCase();
  const keys = [`loginfail:addr:${address}`, `loginfail:email:${normalized}`] as const;
  // always the address first, then the e-mail address: no two attempts wait for each other in a cycle
  return oneAtATime(keys[0], () => oneAtATime(keys[1], () => checkLogin(deps, normalized, password, keys)));
}

async function checkLogin(deps: ServiceDeps<AccountStore>, normalized: string, password: string, keys: readonly string[]): Promise<SessionTokens> {
  for (const key of keys) {
    const blocked = await deps.limiter.peek(key, AUTH_FAILURES_PER_WINDOW, AUTH_FAILURE_WINDOW_SECONDS);
    if (!blocked.ok) throw rateLimited(blocked.retryAfterSec);
  }
  const account = await deps.store.findAccountByEmail(normalized);
  const ok = await deps.passwords.verify(password, account?.passwordHash ?? (await deps.passwords.dummyHash()));
  if (!account || !ok) {
    for (const key of keys) await deps.limiter.hit(key, AUTH_FAILURES_PER_WINDOW, AUTH_FAILURE_WINDOW_SECONDS);
    throw new ApiError('invalid_credentials', LOGIN_FAILED);
  }
  if (deps.passwords.needsRehash(account.passwordHash)) await rehash(deps, account.id, account.passwordHash, password);
  return openSession(deps, account, newOpaqueId());
}

/**
 * Hashes a password that verified against a hash of an earlier cost again at today's
 * (docs/decisions/customers.md). The sign-in stands whatever happens here: when the hashing queue
 * is full or the store does not answer, the next sign-in tries again; a password changed meanwhile
 * is kept (the hash is replaced only while it is still the one that verified).
 */
async function rehash(deps: ServiceDeps<AccountStore>, accountId: string, previous: string, password: string): Promise<void> {
  try {
    await deps.store.replacePasswordHash(accountId, previous, await deps.passwords.hash(password));
  } catch {
    // tried again at the next sign-in
  }
}

/** Rotates the pair; a refresh token used twice ends its whole session family (theft detected). */
export async function refresh(deps: ServiceDeps<AccountStore>, refreshToken: string): Promise<SessionTokens> {
  const invalid = new ApiError('unauthenticated', 'the refresh token is invalid, expired or already used');
  if (!refreshToken.startsWith(ID_PREFIX.refresh)) throw invalid;
  const session = await deps.store.findSessionByRefreshHash(hashBearer(deps, refreshToken));
  if (!session) throw invalid;
  if (session.status === 'rotated') {
    await deps.store.endSessionFamily(session.familyId);
    throw invalid;
  }
  if (session.status !== 'active' || session.refreshExpiresAt < nowSec(deps.clock)) throw invalid;
  if (!(await deps.store.markSessionRotated(session.id))) {
    // a concurrent refresh with the same token won the race: that is reuse too
    await deps.store.endSessionFamily(session.familyId);
    throw invalid;
  }
  const account = await deps.store.getAccount(session.accountId);
  if (!account) throw invalid;
  return openSession(deps, account, session.familyId);
}

/** Resolves a console access token to its session; 401 unauthenticated otherwise. */
export async function authenticateSession(deps: ServiceDeps<AccountStore>, authorization: string | undefined): Promise<SessionRecord> {
  const invalid = new ApiError('unauthenticated', SESSION_INVALID);
  if (authorization === undefined || authorization.length > 512) throw invalid;
  const space = authorization.indexOf(' ');
  if (space === -1 || authorization.slice(0, space).toLowerCase() !== 'bearer') throw invalid;
  const token = authorization.slice(space + 1).trim();
  if (!token.startsWith(ID_PREFIX.session)) throw invalid;
  const session = await deps.store.findSessionByAccessHash(hashBearer(deps, token));
  if (!session || session.status !== 'active' || session.accessExpiresAt < nowSec(deps.clock)) throw invalid;
  return session;
}

export async function logout(deps: ServiceDeps<AccountStore>, session: SessionRecord): Promise<void> {
  await deps.store.endSessionFamily(session.familyId);
}

/** Ends every session of the account, this one included: every tab and device signed in must sign in again. */
export async function logoutEverywhere(deps: ServiceDeps<AccountStore>, session: SessionRecord): Promise<void> {
  await deps.store.endAccountSessions(session.accountId);
}

/**
 * Replaces the account's password after checking the current one (its failures count like failed
 * logins of the account's e-mail address), then ends every other session of the account: a password
 * changed because it leaked also signs out whoever used it. The calling session stays signed in.
 */
export async function changePassword(
  deps: ServiceDeps<AccountStore>, session: SessionRecord, currentPassword: string, newPassword: string,
): Promise<void> {
  const account = await deps.store.getAccount(session.accountId);
  if (!account) throw new ApiError('unauthenticated', SESSION_INVALID);
  const key = `loginfail:email:${account.email}`;
  const blocked = await deps.limiter.peek(key, AUTH_FAILURES_PER_WINDOW, AUTH_FAILURE_WINDOW_SECONDS);
  if (!blocked.ok) throw rateLimited(blocked.retryAfterSec);
  if (!(await deps.passwords.verify(currentPassword, account.passwordHash))) {
    await deps.limiter.hit(key, AUTH_FAILURES_PER_WINDOW, AUTH_FAILURE_WINDOW_SECONDS);
    throw new ApiError('invalid_credentials', 'the current password is not right');
  }
  await deps.store.updateAccountPassword(account.id, await deps.passwords.hash(newPassword));
  await deps.store.endAccountSessions(account.id, session.familyId);
}
