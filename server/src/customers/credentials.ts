import { createHmac } from 'node:crypto';
import { MAX_TTL_SECONDS, type Credential, type CredentialScope, type CredentialWithSecret } from '@rtc/protocol';
import { ApiError, notFound } from '../core/errors.ts';
import { newAppSecret, newId } from '../core/ids.ts';
import type { CredentialRecord, Scopes } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { getOwnProject } from './projects.ts';
import type { CredentialStore, ProjectStore } from './store.ts';

/** HMAC-SHA-256 of an App Secret under the server key: the only form in which secrets are stored. */
export function hashAppSecret(key: Buffer, secret: string): string {
  return createHmac('sha256', key).update(secret).digest('base64url');
}

export const MAX_CREDENTIALS_PER_PROJECT = 50;

export type ScopeName = CredentialScope;

/** A new credential; fields left out take the defaults. */
export interface CredentialCreate {
  readonly name?: string | undefined;
  readonly scopes: readonly ScopeName[];
  readonly ip_allowlist?: readonly string[] | undefined;
  readonly max_ttl_seconds?: number | undefined;
}

/** A change to a credential; fields left out stay as they are. */
export type CredentialPatch = Partial<CredentialCreate>;

export type CredentialView = Credential;
/** A credential as shown once, at creation or rotation: with its App Secret. */
export type { CredentialWithSecret };

const scopesOf = (list: readonly string[]): Scopes =>
  ({ publisher: list.includes('publisher'), subscriber: list.includes('subscriber') });

export const credentialView = (c: CredentialRecord): CredentialView => ({
  app_id: c.appId,
  project_id: c.projectId,
  name: c.name,
  scopes: [...(c.scopes.publisher ? ['publisher' as const] : []), ...(c.scopes.subscriber ? ['subscriber' as const] : [])],
  ip_allowlist: c.ipAllowlist,
  max_ttl_seconds: c.maxTtlSeconds,
  status: c.revokedAt === null ? 'active' : 'revoked',
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  rotated_at: c.rotatedAt,
  revoked_at: c.revokedAt,
});

export async function createCredential(
  deps: ServiceDeps<CredentialStore & ProjectStore>, accountId: string, projectId: string, body: CredentialCreate,
): Promise<CredentialWithSecret> {
  const project = await getOwnProject(deps, accountId, projectId);
  if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
  if ((await deps.store.countCredentials(projectId)) >= MAX_CREDENTIALS_PER_PROJECT) {
    throw new ApiError('conflict', `a project may hold at most ${MAX_CREDENTIALS_PER_PROJECT} active credentials; revoke one to make room`);
  }
  const now = nowSec(deps.clock);
  const secret = newAppSecret();
  const record: CredentialRecord = {
    appId: newId('app'), projectId, name: body.name ?? 'default', secretHash: hashAppSecret(deps.keys.secretHashKey, secret),
    scopes: scopesOf(body.scopes), ipAllowlist: body.ip_allowlist ?? [], maxTtlSeconds: body.max_ttl_seconds ?? MAX_TTL_SECONDS,
    createdAt: now, updatedAt: now, rotatedAt: null, revokedAt: null,
  };
  await deps.store.insertCredential(record);
  return { ...credentialView(record), app_secret: secret };
}

export async function listCredentials(deps: ServiceDeps<CredentialStore & ProjectStore>, accountId: string, projectId: string): Promise<CredentialView[]> {
  await getOwnProject(deps, accountId, projectId);
  return (await deps.store.listCredentials(projectId)).map(credentialView);
}

export async function getOwnCredential(deps: ServiceDeps<CredentialStore & ProjectStore>, accountId: string, projectId: string, appId: string): Promise<CredentialRecord> {
  await getOwnProject(deps, accountId, projectId);
  const credential = await deps.store.getCredential(projectId, appId);
  if (!credential) throw notFound('credential');
  return credential;
}

function ensureActive(credential: CredentialRecord): void {
  if (credential.revokedAt !== null) throw new ApiError('conflict', 'the credential is revoked');
}

async function update(
  deps: ServiceDeps<CredentialStore & ProjectStore>, projectId: string, appId: string,
  patch: Parameters<ServiceDeps<CredentialStore & ProjectStore>['store']['updateCredential']>[1],
): Promise<CredentialRecord> {
  // token nodes stop using what they cached of the project's credentials before the write
  // (docs/decisions/scale-out.md, "Credential cache")
  await deps.credentialVersions?.beforeChange(projectId);
  let updated: CredentialRecord | undefined;
  try {
    updated = await deps.store.updateCredential(appId, patch);
  } finally {
    await deps.credentialVersions?.afterChange(projectId);
  }
  if (!updated) throw notFound('credential');
  // other processes drop whatever they cached of this credential
  await deps.bus.publish({ type: 'credential.changed', appId });
  return updated;
}

export async function updateCredential(
  deps: ServiceDeps<CredentialStore & ProjectStore>, accountId: string, projectId: string, appId: string, body: CredentialPatch,
): Promise<CredentialView> {
  ensureActive(await getOwnCredential(deps, accountId, projectId, appId));
  return credentialView(await update(deps, projectId, appId, {
    ...(body.name !== undefined && { name: body.name }),
    ...(body.scopes !== undefined && { scopes: scopesOf(body.scopes) }),
    ...(body.ip_allowlist !== undefined && { ipAllowlist: body.ip_allowlist }),
    ...(body.max_ttl_seconds !== undefined && { maxTtlSeconds: body.max_ttl_seconds }),
    updatedAt: nowSec(deps.clock),
  }));
}

/** A new secret; the old one stops working when this returns (docs/reference/token-api.md, "Customer API"). */
export async function rotateCredential(deps: ServiceDeps<CredentialStore & ProjectStore>, accountId: string, projectId: string, appId: string): Promise<CredentialWithSecret> {
  ensureActive(await getOwnCredential(deps, accountId, projectId, appId));
  const secret = newAppSecret();
  const now = nowSec(deps.clock);
  const updated = await update(deps, projectId, appId, { secretHash: hashAppSecret(deps.keys.secretHashKey, secret), rotatedAt: now, updatedAt: now });
  await deps.events.record({ projectId, type: 'credential.rotated', occurredAt: now, data: { app_id: appId } });
  return { ...credentialView(updated), app_secret: secret };
}

/** Revocation is final and idempotent. */
export async function revokeCredential(deps: ServiceDeps<CredentialStore & ProjectStore>, accountId: string, projectId: string, appId: string): Promise<CredentialView> {
  const credential = await getOwnCredential(deps, accountId, projectId, appId);
  if (credential.revokedAt !== null) return credentialView(credential);
  const now = nowSec(deps.clock);
  const revoked = await update(deps, projectId, appId, { revokedAt: now, updatedAt: now });
  await deps.events.record({ projectId, type: 'credential.revoked', occurredAt: now, data: { app_id: appId } });
  return credentialView(revoked);
}
