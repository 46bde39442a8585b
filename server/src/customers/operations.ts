import {
  credentialCreateSchema, credentialPatchSchema, loginSchema, projectCreateSchema, projectPatchSchema, refreshSchema,
  registerSchema,
} from './schemas.ts';
import { idParam, requestComponent, type Operation } from '../http/registry.ts';
import {
  accountSchema, credentialListSchema, credentialSchema, credentialWithSecretSchema, projectListSchema, projectSchema, sessionTokensSchema,
} from './responses.ts';

/** The path parameter of a project's operations. */
export const projectId = { id: idParam('project id (prj_…); another account\'s project is 404') };
const credentialIds = { ...projectId, app_id: idParam('App ID (app_…) of a credential of the project') };
/** What a JSON body too large or of another type answers. */
export const BODY_ERRORS = [[413, 'invalid_request'], [415, 'invalid_request']] as const;

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
  logout: {
    id: 'logout', method: 'POST', path: '/v1/auth/logout', hosts: ['api'], tag: 'Accounts',
    summary: 'End the session', auth: 'bearer',
    responses: { 204: { description: 'ended' } },
    errors: ['unauthenticated'],
  },
  getAccount: {
    id: 'getAccount', method: 'GET', path: '/v1/account', hosts: ['api'], tag: 'Accounts',
    summary: 'The signed-in account', auth: 'bearer',
    responses: { 200: { description: 'the account', schema: accountSchema } },
    errors: ['unauthenticated'],
  },
  createProject: {
    id: 'createProject', method: 'POST', path: '/v1/projects', hosts: ['api'], tag: 'Projects',
    summary: 'Create a project', auth: 'bearer', body: requestComponent(projectCreateSchema, 'ProjectCreate'),
    example: { name: 'my app' },
    responses: { 201: { description: 'the project', schema: projectSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'conflict'],
  },
  listProjects: {
    id: 'listProjects', method: 'GET', path: '/v1/projects', hosts: ['api'], tag: 'Projects',
    summary: 'Projects of the account', auth: 'bearer',
    responses: { 200: { description: 'oldest first', schema: projectListSchema } },
    errors: ['unauthenticated'],
  },
  getProject: {
    id: 'getProject', method: 'GET', path: '/v1/projects/{id}', hosts: ['api'], tag: 'Projects',
    summary: 'One project', auth: 'bearer', pathParams: projectId,
    responses: { 200: { description: 'the project', schema: projectSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  updateProject: {
    id: 'updateProject', method: 'PATCH', path: '/v1/projects/{id}', hosts: ['api'], tag: 'Projects',
    summary: 'Rename a project', auth: 'bearer', pathParams: projectId,
    body: requestComponent(projectPatchSchema, 'ProjectPatch'), example: { name: 'renamed app' },
    responses: { 200: { description: 'the project', schema: projectSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'not_found'],
  },
  archiveProject: {
    id: 'archiveProject', method: 'POST', path: '/v1/projects/{id}/archive', hosts: ['api'], tag: 'Projects',
    summary: 'Archive a project (its credentials get 403 project_archived at once)',
    description: 'Also ends, within about a second, every live media session (close code 4003 revoked) and signaling '
      + 'stream (revoked event) of the project, and refuses every media grant and signaling token of the project issued '
      + 'up to the archive (in whole seconds) from then on, also after an unarchive. Archiving an archived project changes nothing.',
    auth: 'bearer', pathParams: projectId,
    responses: { 200: { description: 'the project (idempotent)', schema: projectSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  unarchiveProject: {
    id: 'unarchiveProject', method: 'POST', path: '/v1/projects/{id}/unarchive', hosts: ['api'], tag: 'Projects',
    summary: 'Bring an archived project back',
    description: 'Its credentials issue tokens again; tokens issued up to the archive stay refused: users come back with new ones.',
    auth: 'bearer', pathParams: projectId,
    responses: { 200: { description: 'the project (idempotent)', schema: projectSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  createCredential: {
    id: 'createCredential', method: 'POST', path: '/v1/projects/{id}/credentials', hosts: ['api'], tag: 'Credentials',
    summary: 'Create a credential (App ID and App Secret)',
    description: 'The only response besides rotate that shows app_secret.',
    auth: 'bearer', pathParams: projectId, body: requestComponent(credentialCreateSchema, 'CredentialCreate'),
    example: { name: 'backend', scopes: ['publisher', 'subscriber'], ip_allowlist: ['203.0.113.0/24'], max_ttl_seconds: 1800 },
    responses: { 201: { description: 'the credential with its secret', schema: credentialWithSecretSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'project_archived', 'not_found', 'conflict'],
  },
  listCredentials: {
    id: 'listCredentials', method: 'GET', path: '/v1/projects/{id}/credentials', hosts: ['api'], tag: 'Credentials',
    summary: 'Credentials of a project (without secrets)', auth: 'bearer', pathParams: projectId,
    responses: { 200: { description: 'oldest first', schema: credentialListSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  getCredential: {
    id: 'getCredential', method: 'GET', path: '/v1/projects/{id}/credentials/{app_id}', hosts: ['api'], tag: 'Credentials',
    summary: 'One credential (without its secret)', auth: 'bearer', pathParams: credentialIds,
    responses: { 200: { description: 'the credential', schema: credentialSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
  updateCredential: {
    id: 'updateCredential', method: 'PATCH', path: '/v1/projects/{id}/credentials/{app_id}', hosts: ['api'], tag: 'Credentials',
    summary: 'Change name, scopes, IP allowlist or TTL limit', auth: 'bearer', pathParams: credentialIds,
    body: requestComponent(credentialPatchSchema, 'CredentialPatch'), example: { scopes: ['subscriber'], max_ttl_seconds: 900 },
    responses: { 200: { description: 'the credential', schema: credentialSchema } },
    errors: ['invalid_request', ...BODY_ERRORS, 'unauthenticated', 'not_found', 'conflict'],
  },
  rotateCredential: {
    id: 'rotateCredential', method: 'POST', path: '/v1/projects/{id}/credentials/{app_id}/rotate', hosts: ['api'], tag: 'Credentials',
    summary: 'Replace the App Secret; the old one stops working at once', auth: 'bearer', pathParams: credentialIds,
    responses: { 200: { description: 'the credential with its new secret', schema: credentialWithSecretSchema } },
    errors: ['unauthenticated', 'not_found', 'conflict'],
  },
  revokeCredential: {
    id: 'revokeCredential', method: 'POST', path: '/v1/projects/{id}/credentials/{app_id}/revoke', hosts: ['api'], tag: 'Credentials',
    summary: 'Revoke a credential for good', auth: 'bearer', pathParams: credentialIds,
    responses: { 200: { description: 'the credential (idempotent)', schema: credentialSchema } },
    errors: ['unauthenticated', 'not_found'],
  },
} satisfies Record<string, Operation>;

export const CUSTOMER_API_OPERATIONS: readonly Operation[] = Object.values(CUSTOMER_API);
