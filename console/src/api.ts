/**
 * The console's client of the public customer API (docs/reference/api.md), on the same origin.
 * Both tokens live in memory while the page is open. The single-use refresh token is put in
 * sessionStorage only while the page is hidden away (a reload, a tab restored), and taken out again
 * at load, so a duplicated tab never holds the same refresh token as its original (the first to
 * use it would end the other's session). Nothing else is stored.
 */
import { isErrorCode, type ErrorCode, type SessionTokens } from '@rtc/protocol';

/** An error answer of the API: its status, and the `error` code and `message` of its body (docs/reference/errors.md). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;

  constructor(status: number, code: ErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const REFRESH_KEY = 'rtc-console-refresh';
let access: string | undefined;
let refreshToken: string | undefined = sessionStorage.getItem(REFRESH_KEY) ?? undefined;
sessionStorage.removeItem(REFRESH_KEY);
addEventListener('pagehide', () => {
  if (refreshToken) sessionStorage.setItem(REFRESH_KEY, refreshToken);
});
addEventListener('pageshow', () => sessionStorage.removeItem(REFRESH_KEY));
/** Moves on at every sign-in and sign-out: an answer to an older session's request is dropped. */
let generation = 0;
let refreshing: Promise<boolean> | undefined;
const listeners = new Set<() => void>();

/** Called when the session starts or ends. */
export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function signedIn(): boolean {
  return access !== undefined || refreshToken !== undefined;
}

function adopt(tokens: SessionTokens): void {
  access = tokens.access_token;
  refreshToken = tokens.refresh_token;
  for (const l of listeners) l();
}

function forget(): void {
  generation += 1;
  access = undefined;
  refreshToken = undefined;
  sessionStorage.removeItem(REFRESH_KEY);
  for (const l of listeners) l();
}

/** Ends the session on the server too (logout needs an access token: one is fetched first if the page holds none). */
export async function signOut(): Promise<void> {
  if (access === undefined) await refresh().catch(() => false);
  const token = access;
  forget();
  if (token) {
    await fetch('/v1/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(() => undefined);
  }
}

/** Ends every session of the account, this tab's included (`POST /v1/auth/logout-all`). */
export async function signOutEverywhere(): Promise<void> {
  await api<undefined>('POST', '/v1/auth/logout-all');
  forget();
}

async function failure(res: Response): Promise<ApiError> {
  let code: ErrorCode = 'internal_error';
  let message = `the server answered ${res.status}`;
  try {
    const body = (await res.json()) as { error?: unknown; message?: unknown };
    if (isErrorCode(body.error)) code = body.error;
    if (typeof body.message === 'string') message = body.message;
  } catch {
    // not JSON: the status says enough
  }
  return new ApiError(res.status, code, message);
}

/**
 * Trades the refresh token for a new pair, once at a time; false when the session is over (the
 * server refused the refresh token). Other failures (rate limit, server down) keep the session.
 */
function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const token = refreshToken;
    const started = generation;
    if (!token) return false;
    const res = await fetch('/v1/auth/refresh', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: token }),
    });
    if (started !== generation) return false;
    if (res.status === 401) {
      forget();
      return false;
    }
    if (!res.ok) throw await failure(res);
    adopt((await res.json()) as SessionTokens);
    return true;
  })().finally(() => {
    refreshing = undefined;
  });
  return refreshing;
}

/** A customer API call with the session; an expired access token is refreshed silently, once. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  if (access === undefined && !(await refresh())) throw new ApiError(401, 'unauthenticated', 'Sign in to continue.');
  let sentWith = access;
  const send = (): Promise<Response> => {
    sentWith = access;
    return fetch(path, {
      method,
      headers: { authorization: `Bearer ${access ?? ''}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
    });
  };
  let res = await send();
  // refreshed meanwhile by another call: retry with the new token rather than rotate it again
  if (res.status === 401 && (access !== sentWith || (await refresh()))) res = await send();
  if (!res.ok) throw await failure(res);
  // 204 No Content and other empty answers
  const text = await res.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** A public endpoint (pricing, JWKS): no session. */
export async function publicApi<T>(path: string): Promise<T> {
  const res = await fetch(path);
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

/** A public POST (redeeming a test-room invitation): no session. */
export async function publicPost<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

export async function signIn(kind: 'login' | 'register', email: string, password: string): Promise<void> {
  const res = await fetch(`/v1/auth/${kind}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }),
  });
  if (!res.ok) throw await failure(res);
  adopt((await res.json()) as SessionTokens);
}
