/** The customer module's records and its slices of the store: accounts and sessions, projects, credentials. */

export interface AccountRecord {
  readonly id: string;
  readonly email: string;
  readonly passwordHash: string;
  readonly createdAt: number;
}

export type SessionStatus = 'active' | 'rotated' | 'ended';

/** One access/refresh pair of a console session; rotations of one login share a family. */
export interface SessionRecord {
  readonly id: string;
  readonly accountId: string;
  readonly familyId: string;
  readonly accessHash: string;
  readonly accessExpiresAt: number;
  readonly refreshHash: string;
  readonly refreshExpiresAt: number;
  readonly status: SessionStatus;
  readonly createdAt: number;
}

export interface ProjectRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  /** App ID shown on temporary tokens issued from the console (no secret exists for it). */
  readonly consoleAppId: string;
  readonly archivedAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface Scopes {
  readonly publisher: boolean;
  readonly subscriber: boolean;
}

export interface CredentialRecord {
  readonly appId: string;
  readonly projectId: string;
  readonly name: string;
  readonly secretHash: string;
  readonly scopes: Scopes;
  readonly ipAllowlist: readonly string[];
  readonly maxTtlSeconds: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly rotatedAt: number | null;
  readonly revokedAt: number | null;
}

/** A credential with what the token API needs of its project, read in one look-up. */
export interface AuthCredential extends CredentialRecord {
  readonly projectArchived: boolean;
}

/**
 * A project's archive cut-off (docs/decisions/customers.md, "Archiving ends live sessions"): every grant and
 * signaling token of the project issued at or before `cutAt` is refused, also after an unarchive.
 * Kept until `expiresAt`, when every such token has expired anyway.
 */
export interface ProjectCutoffRecord {
  readonly projectId: string;
  readonly cutAt: number;
  readonly expiresAt: number;
}

export interface ProjectPatch {
  readonly name?: string;
  readonly archivedAt?: number | null;
  readonly updatedAt: number;
}

export interface CredentialPatch {
  readonly name?: string;
  readonly scopes?: Scopes;
  readonly ipAllowlist?: readonly string[];
  readonly maxTtlSeconds?: number;
  readonly secretHash?: string;
  readonly rotatedAt?: number;
  readonly revokedAt?: number;
  readonly updatedAt: number;
}

/** Accounts and their console sessions. */
export interface AccountStore {
  /** False when the e-mail address is taken. */
  insertAccount(account: AccountRecord): Promise<boolean>;
  findAccountByEmail(email: string): Promise<AccountRecord | undefined>;
  getAccount(id: string): Promise<AccountRecord | undefined>;
  insertSession(session: SessionRecord): Promise<void>;
  findSessionByAccessHash(hash: string): Promise<SessionRecord | undefined>;
  findSessionByRefreshHash(hash: string): Promise<SessionRecord | undefined>;
  /** Moves an active session to `rotated`; false when it was not active (a race lost). */
  markSessionRotated(id: string): Promise<boolean>;
  endSessionFamily(familyId: string): Promise<void>;
  /** Ends every session of the account, but those of `keepFamilyId` when given. */
  endAccountSessions(accountId: string, keepFamilyId?: string): Promise<void>;
  updateAccountPassword(accountId: string, passwordHash: string): Promise<void>;
  /**
   * Replaces the password hash only while it is still `previous`, so that a password changed in
   * the meantime stays; whether it was replaced.
   */
  replacePasswordHash(accountId: string, previous: string, next: string): Promise<boolean>;
}

/** Projects and their archive cut-offs. */
export interface ProjectStore {
  insertProject(project: ProjectRecord): Promise<void>;
  listProjects(accountId: string): Promise<ProjectRecord[]>;
  getProject(accountId: string, projectId: string): Promise<ProjectRecord | undefined>;
  updateProject(projectId: string, patch: ProjectPatch): Promise<ProjectRecord | undefined>;
  countProjects(accountId: string): Promise<number>;
  /** Records a cut-off; a project archived again keeps the later `cutAt` and `expiresAt`. */
  insertProjectCutoff(cutoff: ProjectCutoffRecord): Promise<void>;
  /** The project's cut-off, expired or not (undefined once purged). */
  projectCutoff(projectId: string): Promise<ProjectCutoffRecord | undefined>;
  /** Cut-offs whose `expiresAt` is `nowSec` or later. */
  listProjectCutoffs(nowSec: number): Promise<ProjectCutoffRecord[]>;
  purgeProjectCutoffs(nowSec: number): Promise<number>;
}

/** A project's credentials, and the look-up the token API authenticates with. */
export interface CredentialStore {
  insertCredential(credential: CredentialRecord): Promise<void>;
  listCredentials(projectId: string): Promise<CredentialRecord[]>;
  getCredential(projectId: string, appId: string): Promise<CredentialRecord | undefined>;
  updateCredential(appId: string, patch: CredentialPatch): Promise<CredentialRecord | undefined>;
  countCredentials(projectId: string): Promise<number>;
  findCredentialForAuth(appId: string): Promise<AuthCredential | undefined>;
}
