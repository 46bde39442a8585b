import {
  credentialCreateSchema, credentialPatchSchema, loginSchema, passwordChangeSchema, projectCreateSchema, projectPatchSchema, refreshSchema,
  registerSchema,
} from './schemas.ts';
import { idParam, requestComponent, type Operation } from '../http/registry.ts';
import { BODY_ERRORS, consoleOperation, projectId } from '../http/console-operation.ts';
import {
  accountSchema, credentialListSchema, credentialSchema, credentialWithSecretSchema, projectListSchema, projectSchema, sessionTokensSchema,
} from './responses.ts';

const credentialIds = { ...projectId, app_id: idParam('App ID (app_…) of a credential of the project') };

/**
 * The customer API (docs/reference/token-api.md, "Customer API"): accounts, projects, credentials. The
 * console's temporary tokens and usage (tokens/operations.ts) and its view of live rooms
 * (rooms/operations.ts) are in the modules that serve them.
 */
export const CUSTOMER_API = {
  register: {
    id: 'register', method: 'POST', path: '/v1/auth/register', hosts: ['api'], tag: 'Accounts',
    summary: 'Create an account and sign in', auth: 'none',
    body: requestComponent(registerSchema, 'RegisterRequest'),
    example: { email: 'dev@example.com', password: 'a long passphrase' },
    responses: { 201: { description: 'the account and a session', schema: sessionTokensSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'conflict', 'rate_limited', [503, 'unavailable']],
  },
  login: {
    id: 'login', method: 'POST', path: '/v1/auth/login', hosts: ['api'], tag: 'Accounts',
    summary: 'Sign in',
    description: 'Failures are limited per address and per e-mail address like token-API authentication. '
      + 'Password checks run at most one per core with a short queue; beyond it the answer is 503 with Retry-After.',
    auth: 'none', body: requestComponent(loginSchema, 'LoginRequest'),
    example: { email: 'dev@example.com', password: 'a long passphrase' },
    responses: { 200: { description: 'a new session', schema: sessionTokensSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'invalid_credentials', 'rate_limited', [503, 'unavailable']],
  },
  refreshSession: {
    id: 'refreshSession', method: 'POST', path: '/v1/auth/refresh', hosts: ['api'], tag: 'Accounts',
    summary: 'Rotate the access and refresh tokens',
    description: 'A refresh token works once; using a spent one ends the whole session family.',
    auth: 'none', body: requestComponent(refreshSchema, 'RefreshRequest'),
    example: { refresh_token: 'rt_example' },
    responses: { 200: { description: 'a new pair', schema: sessionTokensSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated'],
  },
  logout: consoleOperation({
    id: 'logout', method: 'POST', path: '/v1/auth/logout', tag: 'Accounts',
    summary: 'End the session',
    responses: { 204: { description: 'ended' } },
  }),
  logoutEverywhere: consoleOperation({
    id: 'logoutEverywhere', method: 'POST', path: '/v1/auth/logout-all', tag: 'Accounts',
    summary: 'End every session of the account, this one included',
    description: 'Every tab and device signed in to the account must sign in again.',
    responses: { 204: { description: 'ended' } },
  }),
  changePassword: consoleOperation({
    id: 'changePassword', method: 'POST', path: '/v1/account/password', tag: 'Accounts',
    summary: 'Change the password; every other session of the account ends',
    description: 'The current password is checked first: a wrong one is 401 invalid_credentials and counts as a failed '
      + 'login of the account\'s e-mail address (20 within five minutes block it, 429). The calling session stays signed in.',
    body: requestComponent(passwordChangeSchema, 'PasswordChange'),
    example: { current_password: 'a long passphrase', new_password: 'another long passphrase' },
    responses: { 204: { description: 'changed' } },
    errors: ['invalid_credentials', 'rate_limited'],
  }),
  getAccount: consoleOperation({
    id: 'getAccount', method: 'GET', path: '/v1/account', tag: 'Accounts',
    summary: 'The signed-in account',
    responses: { 200: { description: 'the account', schema: accountSchema } },
  }),
  createProject: consoleOperation({
    id: 'createProject', method: 'POST', path: '/v1/projects', tag: 'Projects',
    summary: 'Create a project', body: requestComponent(projectCreateSchema, 'ProjectCreate'),
    example: { name: 'my app' },
    responses: { 201: { description: 'the project', schema: projectSchema } },
    errors: ['conflict'],
  }),
  listProjects: consoleOperation({
    id: 'listProjects', method: 'GET', path: '/v1/projects', tag: 'Projects',
    summary: 'Projects of the account',
    responses: { 200: { description: 'oldest first', schema: projectListSchema } },
  }),
  getProject: consoleOperation({
    id: 'getProject', method: 'GET', path: '/v1/projects/{id}', tag: 'Projects',
    summary: 'One project', pathParams: projectId,
    responses: { 200: { description: 'the project', schema: projectSchema } },
  }),
  updateProject: consoleOperation({
    id: 'updateProject', method: 'PATCH', path: '/v1/projects/{id}', tag: 'Projects',
    summary: 'Rename a project', pathParams: projectId,
    body: requestComponent(projectPatchSchema, 'ProjectPatch'), example: { name: 'renamed app' },
    responses: { 200: { description: 'the project', schema: projectSchema } },
  }),
  archiveProject: consoleOperation({
    id: 'archiveProject', method: 'POST', path: '/v1/projects/{id}/archive', tag: 'Projects',
    summary: 'Archive a project (its credentials get 403 project_archived at once)',
    description: 'Also ends, within about a second, every live media session (close code 4003 revoked) and signaling '
      + 'stream (revoked event) of the project, and refuses every media grant and signaling token of the project issued '
      + 'up to the archive (in whole seconds) from then on, also after an unarchive. Archiving an archived project changes nothing.',
    pathParams: projectId,
    responses: { 200: { description: 'the project (idempotent)', schema: projectSchema } },
    errors: [[503, 'unavailable']],
  }),
  unarchiveProject: consoleOperation({
    id: 'unarchiveProject', method: 'POST', path: '/v1/projects/{id}/unarchive', tag: 'Projects',
    summary: 'Bring an archived project back',
    description: 'Its credentials issue tokens again; tokens issued up to the archive stay refused: users come back with new ones.',
    pathParams: projectId,
    responses: { 200: { description: 'the project (idempotent)', schema: projectSchema } },
    errors: [[503, 'unavailable']],
  }),
  createCredential: consoleOperation({
    id: 'createCredential', method: 'POST', path: '/v1/projects/{id}/credentials', tag: 'Credentials',
    summary: 'Create a credential (App ID and App Secret)',
    description: 'The only response besides rotate that shows app_secret.',
    pathParams: projectId, body: requestComponent(credentialCreateSchema, 'CredentialCreate'),
    example: { name: 'backend', scopes: ['publisher', 'subscriber'], ip_allowlist: ['203.0.113.0/24'], max_ttl_seconds: 1800 },
    responses: { 201: { description: 'the credential with its secret', schema: credentialWithSecretSchema } },
    errors: ['project_archived', 'conflict'],
  }),
  listCredentials: consoleOperation({
    id: 'listCredentials', method: 'GET', path: '/v1/projects/{id}/credentials', tag: 'Credentials',
    summary: 'Credentials of a project (without secrets)', pathParams: projectId,
    responses: { 200: { description: 'oldest first', schema: credentialListSchema } },
  }),
  getCredential: consoleOperation({
    id: 'getCredential', method: 'GET', path: '/v1/projects/{id}/credentials/{app_id}', tag: 'Credentials',
    summary: 'One credential (without its secret)', pathParams: credentialIds,
    responses: { 200: { description: 'the credential', schema: credentialSchema } },
  }),
  updateCredential: consoleOperation({
    id: 'updateCredential', method: 'PATCH', path: '/v1/projects/{id}/credentials/{app_id}', tag: 'Credentials',
    summary: 'Change name, scopes, IP allowlist or TTL limit', pathParams: credentialIds,
    body: requestComponent(credentialPatchSchema, 'CredentialPatch'), example: { scopes: ['subscriber'], max_ttl_seconds: 900 },
    responses: { 200: { description: 'the credential', schema: credentialSchema } },
    errors: ['conflict', [503, 'unavailable']],
  }),
  rotateCredential: consoleOperation({
    id: 'rotateCredential', method: 'POST', path: '/v1/projects/{id}/credentials/{app_id}/rotate', tag: 'Credentials',
    summary: 'Replace the App Secret; the old one stops working at once', pathParams: credentialIds,
    responses: { 200: { description: 'the credential with its new secret', schema: credentialWithSecretSchema } },
    errors: ['conflict', [503, 'unavailable']],
  }),
  revokeCredential: consoleOperation({
    id: 'revokeCredential', method: 'POST', path: '/v1/projects/{id}/credentials/{app_id}/revoke', tag: 'Credentials',
    summary: 'Revoke a credential for good', pathParams: credentialIds,
    responses: { 200: { description: 'the credential (idempotent)', schema: credentialSchema } },
    errors: [[503, 'unavailable']],
  }),
} satisfies Record<string, Operation>;

export const CUSTOMER_API_OPERATIONS: readonly Operation[] = Object.values(CUSTOMER_API);
