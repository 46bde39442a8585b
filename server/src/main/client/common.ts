/**
 * What the client commands share (docs/reference/cli.md): strict flag parsing, the human or JSON
 * output, and calls to the customer API as the stored session of `rtc login`.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { callApi, CommandError, isRecord, readSession, UsageError, writeSession, type StoredSession } from './http.ts';

export interface ClientIO {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** The password: asked on the terminal without echo, or read from standard input. */
  readonly readPassword: (prompt: string) => Promise<string>;
  readonly nowSec: () => number;
  /** Standard error as it is, for progress drawn in place (`tty`: it is a terminal). */
  readonly progress: { readonly tty: boolean; readonly write: (text: string) => void };
  /** Calls `handler` on SIGINT and SIGTERM until the returned function is called. */
  readonly onSignal: (handler: (signal: InterruptSignal) => void) => () => void;
  /** Ends the command at once with this code, without waiting for anything. */
  readonly exit: (code: number) => void;
}

export type InterruptSignal = 'SIGINT' | 'SIGTERM';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

export const JSON_FLAG: Options = { json: { type: 'boolean' } };
export const URL_FLAG: Options = { url: { type: 'string' } };
/** The flags of the commands that act as the stored session: `--url`, when given, must be the session's platform. */
export const SESSION_FLAGS: Options = { ...URL_FLAG, ...JSON_FLAG };

/** util.parseArgs, strict: an unknown flag or a missing value is a UsageError naming it. */
export function parseCommand(
  command: string, args: readonly string[], options: Options, positionals: number,
): { values: Values; positionals: string[] } {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: positionals > 0 }) as { values: Values; positionals: string[] };
  } catch (err) {
    throw new UsageError(`${command}: ${(err as Error).message.split('\n')[0] ?? 'bad arguments'}`);
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`${command}: unexpected argument ${JSON.stringify(parsed.positionals[positionals])}`);
  }
  return parsed;
}

export function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function required(command: string, values: Values, name: string): string {
  const v = str(values, name);
  if (v === undefined || v === '') throw new UsageError(`${command}: --${name} is required`);
  return v;
}

export function positional(command: string, list: readonly string[], index: number, what: string): string {
  const v = list[index];
  if (v === undefined || v === '') throw new UsageError(`${command}: ${what} is required`);
  return v;
}

export function print(io: ClientIO, json: boolean, value: unknown, human: () => readonly string[]): void {
  if (json) io.out(JSON.stringify(value, null, 2));
  else for (const line of human()) io.out(line);
}

export function sessionOf(body: unknown, url: string, email: string, nowSec: number): StoredSession {
  if (!isRecord(body) || typeof body['access_token'] !== 'string' || typeof body['refresh_token'] !== 'string') {
    throw new CommandError('the API answered without a session');
  }
  const expiresIn = typeof body['expires_in'] === 'number' ? body['expires_in'] : 0;
  return { url, email, access_token: body['access_token'], refresh_token: body['refresh_token'], access_expires_at: nowSec + expiresIn };
}

export const sameUrl = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** The stored session; with `--url`, only when it was made on that platform (a session is good nowhere else). */
export function storedSession(values: Values, io: ClientIO): StoredSession | undefined {
  const session = readSession(io.env);
  const url = str(values, 'url');
  if (url !== undefined && session && !sameUrl(url, session.url)) {
    throw new CommandError(`the stored session is for ${session.url}, not ${url}: run rtc login --url ${url} --email E`);
  }
  return session;
}

/** Calls the customer API as the stored session, refreshing its access token when it ran out. */
export async function asCustomer<T>(
  io: ClientIO, values: Values, path: string, init: { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown } = {},
): Promise<T> {
  let session = storedSession(values, io);
  if (!session) throw new CommandError(`not logged in: run rtc login --url ${str(values, 'url') ?? 'URL'} --email E`);
  const refresh = async (current: StoredSession): Promise<StoredSession> => {
    try {
      const next = sessionOf(await callApi(current.url, '/v1/auth/refresh', { body: { refresh_token: current.refresh_token } }),
        current.url, current.email, io.nowSec());
      writeSession(io.env, next);
      return next;
    } catch (err) {
      if (err instanceof CommandError && 'status' in err) throw new CommandError('the session has ended: run rtc login again');
      throw err;
    }
  };
  if (session.access_expires_at - 30 <= io.nowSec()) session = await refresh(session);
  try {
    return await callApi<T>(session.url, path, { ...init, auth: { bearer: session.access_token } });
  } catch (err) {
    if (!(err instanceof CommandError && 'status' in err && err.status === 401)) throw err;
    session = await refresh(session);
    return callApi<T>(session.url, path, { ...init, auth: { bearer: session.access_token } });
  }
}

/** `--url`, then RTC_URL, then the URL of the stored session. */
export function baseUrl(command: string, values: Values, io: ClientIO): string {
  const url = str(values, 'url') || io.env['RTC_URL'] || readSession(io.env)?.url;
  if (!url) throw new UsageError(`${command}: --url is required (or set RTC_URL${command === 'login' ? '' : ', or run rtc login'})`);
  return url;
}

/** `export NAME='value'`, quoted for a POSIX shell's eval. */
export function exportLine(name: string, value: string): string {
  return `export ${name}='${value.replace(/'/g, `'\\''`)}'`;
}
