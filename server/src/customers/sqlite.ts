import type Database from 'better-sqlite3';
import { toAccount, toProject, toSession, type AccountRow, type ProjectRow, type SessionRow } from './rows.ts';
import type {
  AccountStore, AuthCredential, CredentialPatch, CredentialRecord, CredentialStore, ProjectCutoffRecord, ProjectPatch, ProjectRecord,
  ProjectStore,
} from './store.ts';

interface CredentialRow {
  app_id: string; project_id: string; name: string; secret_hash: string; scope_publisher: number;
  scope_subscriber: number; ip_allowlist: string; max_ttl_seconds: number; created_at: number;
  updated_at: number; rotated_at: number | null; revoked_at: number | null;
}

const toCredential = (r: CredentialRow): CredentialRecord => ({
  appId: r.app_id, projectId: r.project_id, name: r.name, secretHash: r.secret_hash,
  scopes: { publisher: r.scope_publisher === 1, subscriber: r.scope_subscriber === 1 },
  ipAllowlist: JSON.parse(r.ip_allowlist) as string[], maxTtlSeconds: r.max_ttl_seconds,
  createdAt: r.created_at, updatedAt: r.updated_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at,
});

interface CutoffRow { project_id: string; cut_at: number; expires_at: number }

const toCutoff = (r: CutoffRow): ProjectCutoffRecord => ({ projectId: r.project_id, cutAt: r.cut_at, expiresAt: r.expires_at });

/** The customer module's part of the SQLite store (accounts, projects, credentials), on its connection. */
export function sqliteCustomerStore(db: Database.Database): AccountStore & ProjectStore & CredentialStore {
  const q = {
    insertAccount: db.prepare(`INSERT INTO accounts (id, email, password_hash, created_at)
      VALUES (@id, @email, @passwordHash, @createdAt) ON CONFLICT (email) DO NOTHING`),
    accountByEmail: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE email = ?'),
    accountById: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
    insertSession: db.prepare(`INSERT INTO sessions (id, account_id, family_id, access_hash, access_expires_at,
      refresh_hash, refresh_expires_at, status, created_at) VALUES (@id, @accountId, @familyId, @accessHash,
      @accessExpiresAt, @refreshHash, @refreshExpiresAt, @status, @createdAt)`),
    sessionByAccess: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE access_hash = ?'),
    sessionByRefresh: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE refresh_hash = ?'),
    rotateSession: db.prepare(`UPDATE sessions SET status = 'rotated' WHERE id = ? AND status = 'active'`),
    endFamily: db.prepare(`UPDATE sessions SET status = 'ended' WHERE family_id = ?`),
    endAccount: db.prepare<[string, string]>(`UPDATE sessions SET status = 'ended' WHERE account_id = ? AND family_id <> ?`),
    setPassword: db.prepare<[string, string]>('UPDATE accounts SET password_hash = ? WHERE id = ?'),
    replacePassword: db.prepare<[string, string, string]>('UPDATE accounts SET password_hash = ? WHERE id = ? AND password_hash = ?'),
    insertProject: db.prepare(`INSERT INTO projects (id, account_id, name, console_app_id, archived_at, created_at,
      updated_at) VALUES (@id, @accountId, @name, @consoleAppId, @archivedAt, @createdAt, @updatedAt)`),
    listProjects: db.prepare<[string], ProjectRow>(
      // rowid breaks ties in insertion order (ids are random; created_at has one-second steps)
      'SELECT * FROM projects WHERE account_id = ? ORDER BY created_at, rowid'),
    getProject: db.prepare<[string, string], ProjectRow>('SELECT * FROM projects WHERE account_id = ? AND id = ?'),
    projectById: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE id = ?'),
    countProjects: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM projects WHERE account_id = ?'),
    insertCredential: db.prepare(`INSERT INTO credentials (app_id, project_id, name, secret_hash, scope_publisher,
      scope_subscriber, ip_allowlist, max_ttl_seconds, created_at, updated_at, rotated_at, revoked_at)
      VALUES (@appId, @projectId, @name, @secretHash, @publisher, @subscriber, @ipAllowlist, @maxTtlSeconds,
      @createdAt, @updatedAt, @rotatedAt, @revokedAt)`),
    listCredentials: db.prepare<[string], CredentialRow>(
      'SELECT * FROM credentials WHERE project_id = ? ORDER BY created_at, rowid'),
    getCredential: db.prepare<[string, string], CredentialRow>(
      'SELECT * FROM credentials WHERE project_id = ? AND app_id = ?'),
    credentialById: db.prepare<[string], CredentialRow>('SELECT * FROM credentials WHERE app_id = ?'),
    // revoked credentials stay listed but no longer count toward the project's limit
    countCredentials: db.prepare<[string], { n: number }>(
      'SELECT count(*) AS n FROM credentials WHERE project_id = ? AND revoked_at IS NULL'),
    authCredential: db.prepare<[string], CredentialRow & { project_archived_at: number | null }>(
      `SELECT c.*, p.archived_at AS project_archived_at FROM credentials c JOIN projects p ON p.id = c.project_id
       WHERE c.app_id = ?`),
    // together they move whenever the file was written: data_version by other connections (a plain
    // PRAGMA; the pragma_data_version() table form re-prepares on every call), total_changes() by this one
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    totalChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),
    insertProjectCutoff: db.prepare(`INSERT INTO project_cutoffs (project_id, cut_at, expires_at)
      VALUES (@projectId, @cutAt, @expiresAt) ON CONFLICT (project_id) DO UPDATE
      SET cut_at = max(cut_at, excluded.cut_at), expires_at = max(expires_at, excluded.expires_at)`),
    projectCutoff: db.prepare<[string], CutoffRow>('SELECT * FROM project_cutoffs WHERE project_id = ?'),
    listProjectCutoffs: db.prepare<[number], CutoffRow>('SELECT * FROM project_cutoffs WHERE expires_at >= ?'),
    purgeProjectCutoffs: db.prepare('DELETE FROM project_cutoffs WHERE expires_at < ?'),
  };

  // The token API looks its caller's credential up on every request. Rows read for it are kept
  // only while nothing has written to the file since (any table, any connection or process), so a
  // rotation, revocation or archive is seen by the very next request, as without the cache.
  const authCache = { dataVersion: -1, changes: -1, rows: new Map<string, AuthCredential>() };
  const MAX_CACHED_AUTH_CREDENTIALS = 10_000;

  const updateProject = db.transaction((id: string, patch: ProjectPatch): ProjectRecord | undefined => {
    const row = q.projectById.get(id);
    if (!row) return undefined;
    const next: ProjectRow = {
      ...row,
      name: patch.name ?? row.name,
      archived_at: patch.archivedAt === undefined ? row.archived_at : patch.archivedAt,
      updated_at: patch.updatedAt,
    };
    db.prepare('UPDATE projects SET name = ?, archived_at = ?, updated_at = ? WHERE id = ?')
      .run(next.name, next.archived_at, next.updated_at, id);
    return toProject(next);
  });

  const updateCredential = db.transaction((appId: string, patch: CredentialPatch): CredentialRecord | undefined => {
    const row = q.credentialById.get(appId);
    if (!row) return undefined;
    const next: CredentialRow = {
      ...row,
      name: patch.name ?? row.name,
      secret_hash: patch.secretHash ?? row.secret_hash,
      scope_publisher: patch.scopes ? Number(patch.scopes.publisher) : row.scope_publisher,
      scope_subscriber: patch.scopes ? Number(patch.scopes.subscriber) : row.scope_subscriber,
      ip_allowlist: patch.ipAllowlist ? JSON.stringify(patch.ipAllowlist) : row.ip_allowlist,
      max_ttl_seconds: patch.maxTtlSeconds ?? row.max_ttl_seconds,
      rotated_at: patch.rotatedAt ?? row.rotated_at,
      revoked_at: patch.revokedAt ?? row.revoked_at,
      updated_at: patch.updatedAt,
    };
    db.prepare(`UPDATE credentials SET name = @name, secret_hash = @secret_hash, scope_publisher = @scope_publisher,
      scope_subscriber = @scope_subscriber, ip_allowlist = @ip_allowlist, max_ttl_seconds = @max_ttl_seconds,
      rotated_at = @rotated_at, revoked_at = @revoked_at, updated_at = @updated_at WHERE app_id = @app_id`).run(next);
    return toCredential(next);
  });

  return {
    async insertAccount(a) { return q.insertAccount.run(a).changes === 1; },
    async findAccountByEmail(email) { const r = q.accountByEmail.get(email); return r && toAccount(r); },
    async getAccount(id) { const r = q.accountById.get(id); return r && toAccount(r); },
    async insertSession(s) { q.insertSession.run(s); },
    async findSessionByAccessHash(h) { const r = q.sessionByAccess.get(h); return r && toSession(r); },
    async findSessionByRefreshHash(h) { const r = q.sessionByRefresh.get(h); return r && toSession(r); },
    async markSessionRotated(id) { return q.rotateSession.run(id).changes === 1; },
    async endSessionFamily(familyId) { q.endFamily.run(familyId); },
    async endAccountSessions(accountId, keepFamilyId) { q.endAccount.run(accountId, keepFamilyId ?? ''); },
    async updateAccountPassword(accountId, hash) { q.setPassword.run(hash, accountId); },
    async replacePasswordHash(accountId, previous, next) { return q.replacePassword.run(next, accountId, previous).changes === 1; },
    async insertProject(p) { q.insertProject.run(p); },
    async listProjects(accountId) { return q.listProjects.all(accountId).map(toProject); },
    async getProject(accountId, id) { const r = q.getProject.get(accountId, id); return r && toProject(r); },
    async updateProject(id, patch) { return updateProject(id, patch); },
    async countProjects(accountId) { return q.countProjects.get(accountId)?.n ?? 0; },
    async insertCredential(c) {
      q.insertCredential.run({
        appId: c.appId, projectId: c.projectId, name: c.name, secretHash: c.secretHash,
        publisher: Number(c.scopes.publisher), subscriber: Number(c.scopes.subscriber),
        ipAllowlist: JSON.stringify(c.ipAllowlist), maxTtlSeconds: c.maxTtlSeconds, createdAt: c.createdAt,
        updatedAt: c.updatedAt, rotatedAt: c.rotatedAt, revokedAt: c.revokedAt,
      });
    },
    async listCredentials(projectId) { return q.listCredentials.all(projectId).map(toCredential); },
    async getCredential(projectId, appId) { const r = q.getCredential.get(projectId, appId); return r && toCredential(r); },
    async updateCredential(appId, patch) { return updateCredential(appId, patch); },
    async countCredentials(projectId) { return q.countCredentials.get(projectId)?.n ?? 0; },
    async findCredentialForAuth(appId) {
      const dataVersion = q.dataVersion.get()!;
      const changes = q.totalChanges.get()!;
      if (dataVersion !== authCache.dataVersion || changes !== authCache.changes) {
        authCache.rows.clear();
        authCache.dataVersion = dataVersion;
        authCache.changes = changes;
      }
      const cached = authCache.rows.get(appId);
      if (cached) return cached;
      const r = q.authCredential.get(appId);
      if (!r) return undefined;
      const cred = toCredential(r);
      Object.freeze(cred.scopes);
      Object.freeze(cred.ipAllowlist);
      const found: AuthCredential = Object.freeze({ ...cred, projectArchived: r.project_archived_at !== null });
      if (authCache.rows.size >= MAX_CACHED_AUTH_CREDENTIALS) authCache.rows.clear();
      authCache.rows.set(appId, found);
      return found;
    },
    async insertProjectCutoff(c) { q.insertProjectCutoff.run(c); },
    async projectCutoff(projectId) { const r = q.projectCutoff.get(projectId); return r && toCutoff(r); },
    async listProjectCutoffs(nowSec) { return q.listProjectCutoffs.all(nowSec).map(toCutoff); },
    async purgeProjectCutoffs(nowSec) { return q.purgeProjectCutoffs.run(nowSec).changes; },
  };
}
