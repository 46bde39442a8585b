/** What the client commands share: the HTTP call over fetch, API errors in the API's words, the stored session. */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** A refusal the command reports as `rtc: <message>` with exit code 1. */
export class CommandError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CommandError';
    this.exitCode = exitCode;
  }
}

/** Bad usage: unknown flag, missing argument; exit code 2. */
export class UsageError extends CommandError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'UsageError';
  }
}

/** An error answer of the API: its code and message, verbatim. */
export class ApiResponseError extends CommandError {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(`${code}: ${message}`);
    this.name = 'ApiResponseError';
    this.status = status;
    this.code = code;
  }
}

/** A console session's access token; the token and room commands go through the server SDK (app-client.ts). */
export type Auth = { readonly bearer: string } | undefined;

export interface CallOptions {
  readonly method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly auth?: Auth;
  readonly body?: unknown;
}

/**
 * Calls the public HTTP API; returns the parsed JSON body of a 2xx answer, as the view `T` the
 * endpoint answers (unchecked), and throws ApiResponseError otherwise.
 */
export async function callApi<T = unknown>(baseUrl: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const auth = options.auth;
  if (auth) headers['authorization'] = `Bearer ${auth.bearer}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const url = new URL(path, `${baseUrl.replace(/\/+$/, '')}/`).toString();
  let res: Response;
  try {
    res = await fetch(url, {
      method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CommandError(`cannot reach ${new URL(url).origin}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const record = isRecord(body) ? body : {};
    const code = typeof record['error'] === 'string' ? record['error'] : `http_${res.status}`;
    const message = typeof record['message'] === 'string' ? record['message'] : (text.slice(0, 200) || res.statusText);
    throw new ApiResponseError(res.status, code, message);
  }
  return body as T;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A customer-API session as `rtc login` keeps it. */
export interface StoredSession {
  readonly url: string;
  readonly email: string;
  readonly access_token: string;
  readonly refresh_token: string;
  /** Seconds since the epoch when access_token stops working. */
  readonly access_expires_at: number;
}

/** `$XDG_CONFIG_HOME/rtc`, else `~/.config/rtc`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CONFIG_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(env['HOME'] || homedir(), '.config'), 'rtc');
}

export function sessionFile(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'session.json');
}

/** A link at session.json is refused, never followed (docs/reference/cli.md): someone else may have put it there. */
function refuseLink(file: string): never {
  throw new CommandError(`${file} is a symbolic link: the session is never read or written through one; remove it and run rtc login`);
}

export function readSession(env: NodeJS.ProcessEnv): StoredSession | undefined {
  const file = sessionFile(env);
  let text: string;
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') refuseLink(file);
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed) && typeof parsed['url'] === 'string' && typeof parsed['access_token'] === 'string'
      && typeof parsed['refresh_token'] === 'string' && typeof parsed['access_expires_at'] === 'number') {
      return parsed as unknown as StoredSession;
    }
  } catch {
    // unreadable: treated as no session
  }
  return undefined;
}

/**
 * Writes the session readable by its owner only (docs/reference/cli.md): the directory is made
 * 0700 also when it existed looser, must be the user's own real directory, a link at session.json
 * is refused, and the file is written new (0600, never through a link) and renamed into place.
 */
export function writeSession(env: NodeJS.ProcessEnv, session: StoredSession): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new CommandError(`${dir} is not a directory: the session is not written there`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw new CommandError(`${dir} belongs to another user: the session is not written there`);
  chmodSync(dir, 0o700);
  const file = sessionFile(env);
  if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) refuseLink(file);
  const next = join(dir, `.session-${process.pid}-${randomBytes(6).toString('hex')}.json`);
  const fd = openSync(next, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeFileSync(fd, `${JSON.stringify(session, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(next, file);
}

export function removeSession(env: NodeJS.ProcessEnv): void {
  rmSync(sessionFile(env), { force: true });
}
