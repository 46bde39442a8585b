import { randomBytes } from 'node:crypto';
import { basic, request } from './http.ts';

export interface Customer {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly email: string;
  readonly password: string;
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

function expectStatus(what: string, res: { status: number; text: string }, status: number): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text}`);
}

/** Registers an account, creates a project and one credential through the public HTTP API. */
export async function createCustomer(api: string, options: CustomerOptions = {}): Promise<Customer> {
  const email = `user-${randomBytes(6).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(12).toString('base64url')}`;
  const local = options.localAddress !== undefined ? { localAddress: options.localAddress } : {};
  const reg = await request(`${api}/v1/auth/register`, { body: { email, password }, ...local });
  expectStatus('register', reg, 201);
  const { access_token: accessToken, refresh_token: refreshToken } = reg.json<{ access_token: string; refresh_token: string }>();
  const bearer = { authorization: `Bearer ${accessToken}` };
  const project = await request(`${api}/v1/projects`, { headers: bearer, body: { name: 'test project' }, ...local });
  expectStatus('create project', project, 201);
  const projectId = project.json<{ id: string }>().id;
  const cred = await request(`${api}/v1/projects/${projectId}/credentials`, {
    headers: bearer,
    body: {
      scopes: options.scopes ?? ['publisher', 'subscriber'],
      ...(options.ip_allowlist && { ip_allowlist: options.ip_allowlist }),
      ...(options.max_ttl_seconds !== undefined && { max_ttl_seconds: options.max_ttl_seconds }),
    },
    ...local,
  });
  expectStatus('create credential', cred, 201);
  const { app_id: appId, app_secret: appSecret } = cred.json<{ app_id: string; app_secret: string }>();
  return { accessToken, refreshToken, email, password, projectId, appId, appSecret, auth: basic(appId, appSecret) };
}
