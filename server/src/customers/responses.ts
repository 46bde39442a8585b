import { z } from 'zod';
import { epochSeconds, responseComponent } from '../http/registry.ts';
import type { AccountView, SessionTokens } from './accounts.ts';
import type { CredentialView, CredentialWithSecret } from './credentials.ts';
import type { ProjectView } from './projects.ts';

/**
 * Response bodies of the customer API, as accounts.ts, projects.ts and credentials.ts build them. Each `satisfies` the type it
 * documents, and the contract test checks real responses against them, so a field added or renamed
 * in a use case fails one or the other.
 */

export const accountSchema = responseComponent(z.strictObject({
  id: z.string().meta({ description: 'acc_ followed by 22 base64url characters' }),
  email: z.string(),
  created_at: epochSeconds,
}) satisfies z.ZodType<AccountView>, 'Account');

export const sessionTokensSchema = responseComponent(z.strictObject({
  account: accountSchema,
  access_token: z.string().meta({ description: 'cs_…: send as Authorization: Bearer on the customer API' }),
  refresh_token: z.string().meta({ description: 'rt_…: single use; POST /v1/auth/refresh returns a new pair' }),
  token_type: z.literal('Bearer'),
  expires_in: z.int().min(1).meta({ description: 'lifetime of access_token in seconds' }),
}) satisfies z.ZodType<SessionTokens>, 'SessionTokens');

export const projectSchema = responseComponent(z.strictObject({
  id: z.string(),
  name: z.string(),
  archived: z.boolean(),
  archived_at: epochSeconds.nullable(),
  created_at: epochSeconds,
  updated_at: epochSeconds,
}) satisfies z.ZodType<ProjectView>, 'Project');

export const projectListSchema = responseComponent(z.strictObject({ projects: z.array(projectSchema) }), 'ProjectList');

const credentialFields = {
  app_id: z.string(),
  project_id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(['publisher', 'subscriber'])),
  ip_allowlist: z.array(z.string()),
  max_ttl_seconds: z.int().min(1),
  status: z.enum(['active', 'revoked']),
  created_at: epochSeconds,
  updated_at: epochSeconds,
  rotated_at: epochSeconds.nullable(),
  revoked_at: epochSeconds.nullable(),
};

export const credentialSchema = responseComponent(z.strictObject(credentialFields) satisfies z.ZodType<CredentialView>, 'Credential');

export const credentialWithSecretSchema = responseComponent(z.strictObject({
  ...credentialFields,
  app_secret: z.string().meta({ description: 'sk_…: shown only here; store it in a secret store' }),
}) satisfies z.ZodType<CredentialWithSecret>, 'CredentialWithSecret');

export const credentialListSchema = responseComponent(z.strictObject({ credentials: z.array(credentialSchema) }), 'CredentialList');
