import { randomBytes } from 'node:crypto';

/** What a new customer gets from the console API: a project and one credential. */
export interface Credential {
  readonly projectId: string;
  readonly appId: string;
  /** Shown once, at creation: a real server keeps it in its secret store. */
  readonly appSecret: string;
}

async function post<T>(url: string, body: unknown, bearer?: string): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer !== undefined && { authorization: `Bearer ${bearer}` }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${new URL(url).pathname} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * Does over HTTP what a developer does in the console: registers an account, creates a project,
 * and creates a credential with both scopes.
 */
export async function createCredential(api: string): Promise<{ email: string } & Credential> {
  const email = `quickstart-${randomBytes(4).toString('hex')}@example.test`;
  const { access_token: access } = await post<{ access_token: string }>(`${api}/v1/auth/register`, {
    email,
    password: randomBytes(18).toString('base64url'),
  });
  const project = await post<{ id: string }>(`${api}/v1/projects`, { name: 'quickstart' }, access);
  const credential = await post<{ app_id: string; app_secret: string }>(
    `${api}/v1/projects/${project.id}/credentials`,
    { name: 'quickstart server', scopes: ['publisher', 'subscriber'] },
    access,
  );
  return { email, projectId: project.id, appId: credential.app_id, appSecret: credential.app_secret };
}
