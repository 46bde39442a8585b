import { randomBytes } from 'node:crypto';
import { request, type HttpResult } from './http.ts';

/** A console account registered through `POST /v1/auth/register`. */
export interface Account {
  readonly email: string;
  readonly password: string;
  readonly accountId: string;
  readonly accessToken: string;
  readonly refreshToken: string;
}

export interface SessionBody {
  readonly account: { readonly id: string; readonly email: string; readonly created_at: number };
  readonly access_token: string;
  readonly refresh_token: string;
  readonly token_type: string;
  readonly expires_in: number;
}

/** `{ authorization: 'Bearer <token>' }`. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** A fresh e-mail address and a password that passes the rules. */
export function newLogin(): { email: string; password: string } {
  return {
    email: `user-${randomBytes(6).toString('hex')}@example.test`,
    password: `pw-${randomBytes(12).toString('base64url')}`,
  };
}

function expectStatus(what: string, res: HttpResult, status: number): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text}`);
}

/** Registers a new account and returns its credentials and first session. */
export async function registerAccount(api: string, options: { localAddress?: string } = {}): Promise<Account> {
  const { email, password } = newLogin();
  const res = await request(`${api}/v1/auth/register`, { body: { email, password }, ...options });
  expectStatus('register', res, 201);
  const body = res.json<SessionBody>();
  return { email, password, accountId: body.account.id, accessToken: body.access_token, refreshToken: body.refresh_token };
}

/** Creates a project of the account and returns its id. */
export async function createProject(api: string, accessToken: string, name = 'project'): Promise<string> {
  const res = await request(`${api}/v1/projects`, { headers: bearer(accessToken), body: { name } });
  expectStatus('create project', res, 201);
  return res.json<{ id: string }>().id;
}
