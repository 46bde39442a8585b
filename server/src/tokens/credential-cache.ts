import type { AuthCredential } from '../customers/store.ts';

/** A credential as this process last read it, with its project's credential version at the time. */
export interface CachedCredential {
  readonly cred: AuthCredential;
  /** The stored secret hash, decoded once. */
  readonly secretHash: Buffer;
  /** The version read before the credential was read from the store (docs/decisions/scale-out.md, "Credential cache"). */
  readonly version: string;
}

/**
 * What one process keeps of the credentials of token requests. An entry is used only when the
 * version read at the start of the request is the one it was cached with; the project of an App ID
 * never changes, so it is kept without one (it says which version to read).
 */
export interface CredentialCache {
  projectOf(appId: string): string | undefined;
  get(appId: string): CachedCredential | undefined;
  /** `version` must have been read before `cred` was read from the store. */
  set(cred: AuthCredential, version: string | undefined): void;
}

const MAX_ENTRIES = 10_000;

export function createCredentialCache(): CredentialCache {
  const projects = new Map<string, string>();
  const entries = new Map<string, CachedCredential>();
  return {
    projectOf: (appId) => projects.get(appId),
    get: (appId) => entries.get(appId),
    set(cred, version) {
      if (projects.size >= MAX_ENTRIES) projects.clear();
      projects.set(cred.appId, cred.projectId);
      if (version === undefined) {
        entries.delete(cred.appId);
        return;
      }
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(cred.appId, { cred, secretHash: Buffer.from(cred.secretHash, 'base64url'), version });
    },
  };
}
