/** Console accounts, projects and credentials, made through the public HTTP API of a running platform. */
import { randomBytes } from 'node:crypto';
import { basic, type HttpResult, type PlatformClient } from './http.ts';

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

/** An account with one project and one credential of it. */
export interface Customer extends Account {
  readonly projectId: string;
  readonly appId: string;
  readonly appSecret: string;
  /** The Basic header of the credential. */
  readonly auth: string;
}

export interface CustomerOptions {
  readonly scopes?: readonly string[];
  readonly ip_allowlist?: readonly string[];
  readonly max_ttl_seconds?: number;
  readonly localAddress?: string;
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

const from = (localAddress: string | undefined) => (localAddress !== undefined ? { localAddress } : {});

/** Registers a new account and returns its credentials and first session. */
export async function registerAccount(platform: PlatformClient, options: { localAddress?: string } = {}): Promise<Account> {
  const { email, password } = newLogin();
  const res = await platform.request(`${platform.api}/v1/auth/register`, { body: { email, password }, ...from(options.localAddress) });
  expectStatus('register', res, 201);
  const body = res.json<SessionBody>();
  return { email, password, accountId: body.account.id, accessToken: body.access_token, refreshToken: body.refresh_token };
}

/** Creates a project of the account and returns its id. */
export async function createProject(platform: PlatformClient, accessToken: string, name = 'project', localAddress?: string): Promise<string> {
  const res = await platform.request(`${platform.api}/v1/projects`, { headers: bearer(accessToken), body: { name }, ...from(localAddress) });
  expectStatus('create project', res, 201);
  return res.json<{ id: string }>().id;
}

/** Registers an account, creates a project and one credential through the public HTTP API. */
export async function createCustomer(platform: PlatformClient, options: CustomerOptions = {}): Promise<Customer> {
  const account = await registerAccount(platform, from(options.localAddress));
  const projectId = await createProject(platform, account.accessToken, 'test project', options.localAddress);
  const cred = await platform.request(`${platform.api}/v1/projects/${projectId}/credentials`, {
    headers: bearer(account.accessToken),
    body: {
      scopes: options.scopes ?? ['publisher', 'subscriber'],
      ...(options.ip_allowlist && { ip_allowlist: options.ip_allowlist }),
      ...(options.max_ttl_seconds !== undefined && { max_ttl_seconds: options.max_ttl_seconds }),
    },
    ...from(options.localAddress),
  });
  expectStatus('create credential', cred, 201);
  const { app_id: appId, app_secret: appSecret } = cred.json<{ app_id: string; app_secret: string }>();
  return { ...account, projectId, appId, appSecret, auth: basic(appId, appSecret) };
}
