import type pg from 'pg';
import { pgQueries } from '../sql/postgres.ts';
import { toAccount, toProject, toSession, type AccountRow, type ProjectRow, type SessionRow } from './rows.ts';
import type {
  AccountStore, AuthCredential, CredentialRecord, CredentialStore, ProjectCutoffRecord, ProjectStore,
} from './store.ts';

interface CredentialRow {
  app_id: string; project_id: string; name: string; secret_hash: string; scope_publisher: boolean;
  scope_subscriber: boolean; ip_allowlist: string[]; max_ttl_seconds: number; created_at: number;
  updated_at: number; rotated_at: number | null; revoked_at: number | null;
}
interface CutoffRow { project_id: string; cut_at: number; expires_at: number }

const toCutoff = (r: CutoffRow): ProjectCutoffRecord => ({ projectId: r.project_id, cutAt: r.cut_at, expiresAt: r.expires_at });

const toCredential = (r: CredentialRow): CredentialRecord => ({
  appId: r.app_id, projectId: r.project_id, name: r.name, secretHash: r.secret_hash,
  scopes: { publisher: r.scope_publisher, subscriber: r.scope_subscriber },
  ipAllowlist: r.ip_allowlist, maxTtlSeconds: r.max_ttl_seconds,
  createdAt: r.created_at, updatedAt: r.updated_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at,
});

/** The customer module's part of the PostgreSQL store (accounts, projects, credentials), on its pool. */
export function postgresCustomerStore(pool: pg.Pool): AccountStore & ProjectStore & CredentialStore {
  const { rows, one, changed } = pgQueries(pool);
  return {
    async insertAccount(a) {
      return await changed(`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (email) DO NOTHING`, [a.id, a.email, a.passwordHash, a.createdAt]) === 1;
    },
    async findAccountByEmail(email) {
      const r = await one<AccountRow>('SELECT * FROM accounts WHERE email = $1', [email]);
      return r && toAccount(r);
    },
    async getAccount(id) {
      const r = await one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
      return r && toAccount(r);
    },
    async insertSession(s) {
      await pool.query(`INSERT INTO sessions (id, account_id, family_id, access_hash, access_expires_at, refresh_hash,
        refresh_expires_at, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [s.id, s.accountId, s.familyId, s.accessHash, s.accessExpiresAt, s.refreshHash, s.refreshExpiresAt, s.status, s.createdAt]);
    },
    async findSessionByAccessHash(h) {
      const r = await one<SessionRow>('SELECT * FROM sessions WHERE access_hash = $1', [h]);
      return r && toSession(r);
    },
    async findSessionByRefreshHash(h) {
      const r = await one<SessionRow>('SELECT * FROM sessions WHERE refresh_hash = $1', [h]);
      return r && toSession(r);
    },
    // one statement: of two concurrent rotations the second waits for the first's row lock, then
    // sees the row no longer active and changes nothing
    async markSessionRotated(id) {
      return await changed(`UPDATE sessions SET status = 'rotated' WHERE id = $1 AND status = 'active'`, [id]) === 1;
    },
    async endSessionFamily(familyId) {
      await pool.query(`UPDATE sessions SET status = 'ended' WHERE family_id = $1`, [familyId]);
    },
    async endAccountSessions(accountId, keepFamilyId) {
      await pool.query(`UPDATE sessions SET status = 'ended' WHERE account_id = $1 AND family_id <> $2`, [accountId, keepFamilyId ?? '']);
    },
    async updateAccountPassword(accountId, hash) {
      await pool.query('UPDATE accounts SET password_hash = $1 WHERE id = $2', [hash, accountId]);
    },
    async replacePasswordHash(accountId, previous, next) {
      const res = await pool.query('UPDATE accounts SET password_hash = $1 WHERE id = $2 AND password_hash = $3', [next, accountId, previous]);
      return res.rowCount === 1;
    },
    async insertProject(p) {
      await pool.query(`INSERT INTO projects (id, account_id, name, console_app_id, archived_at, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`, [p.id, p.accountId, p.name, p.consoleAppId, p.archivedAt, p.createdAt, p.updatedAt]);
    },
    async listProjects(accountId) {
      return (await rows<ProjectRow>(`SELECT * FROM projects WHERE account_id = $1 ORDER BY created_at, seq`,
        [accountId])).map(toProject);
    },
    async getProject(accountId, id) {
      const r = await one<ProjectRow>(`SELECT * FROM projects WHERE account_id = $1 AND id = $2`, [accountId, id]);
      return r && toProject(r);
    },
    // one statement, so a patch never overwrites a concurrent one's other fields with values read before it
    async updateProject(id, patch) {
      const r = await one<ProjectRow>(`UPDATE projects SET name = COALESCE($2, name),
        archived_at = CASE WHEN $3::boolean THEN $4::bigint ELSE archived_at END, updated_at = $5
        WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.archivedAt !== undefined, patch.archivedAt ?? null, patch.updatedAt]);
      return r && toProject(r);
    },
    async countProjects(accountId) {
      return (await one<{ n: number }>('SELECT count(*) AS n FROM projects WHERE account_id = $1', [accountId]))?.n ?? 0;
    },
    async insertCredential(c) {
      await pool.query(`INSERT INTO credentials (app_id, project_id, name, secret_hash, scope_publisher, scope_subscriber,
        ip_allowlist, max_ttl_seconds, created_at, updated_at, rotated_at, revoked_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12)`,
      [c.appId, c.projectId, c.name, c.secretHash, c.scopes.publisher, c.scopes.subscriber, JSON.stringify(c.ipAllowlist),
        c.maxTtlSeconds, c.createdAt, c.updatedAt, c.rotatedAt, c.revokedAt]);
    },
    async listCredentials(projectId) {
      return (await rows<CredentialRow>(
        `SELECT * FROM credentials WHERE project_id = $1 ORDER BY created_at, seq`, [projectId],
      )).map(toCredential);
    },
    async getCredential(projectId, appId) {
      const r = await one<CredentialRow>(`SELECT * FROM credentials WHERE project_id = $1 AND app_id = $2`,
        [projectId, appId]);
      return r && toCredential(r);
    },
    async updateCredential(appId, patch) {
      const r = await one<CredentialRow>(`UPDATE credentials SET name = COALESCE($2, name),
        secret_hash = COALESCE($3, secret_hash),
        scope_publisher = COALESCE($4::boolean, scope_publisher), scope_subscriber = COALESCE($5::boolean, scope_subscriber),
        ip_allowlist = COALESCE($6::jsonb, ip_allowlist), max_ttl_seconds = COALESCE($7::bigint, max_ttl_seconds),
        rotated_at = COALESCE($8::bigint, rotated_at), revoked_at = COALESCE($9::bigint, revoked_at), updated_at = $10
        WHERE app_id = $1 RETURNING *`,
      [appId, patch.name ?? null, patch.secretHash ?? null, patch.scopes?.publisher ?? null, patch.scopes?.subscriber ?? null,
        patch.ipAllowlist ? JSON.stringify(patch.ipAllowlist) : null, patch.maxTtlSeconds ?? null, patch.rotatedAt ?? null,
        patch.revokedAt ?? null, patch.updatedAt]);
      return r && toCredential(r);
    },
    // revoked credentials stay listed but no longer count toward the project's limit
    async countCredentials(projectId) {
      return (await one<{ n: number }>('SELECT count(*) AS n FROM credentials WHERE project_id = $1 AND revoked_at IS NULL',
        [projectId]))?.n ?? 0;
    },
    // read by a token node when its cached copy is not confirmed current by the credential version
    // in Redis (docs/decisions/scale-out.md, "Credential cache"), and on every token request without Redis
    async findCredentialForAuth(appId) {
      const r = await one<CredentialRow & { project_archived_at: number | null }>(
        `SELECT c.*, p.archived_at AS project_archived_at
         FROM credentials c JOIN projects p ON p.id = c.project_id WHERE c.app_id = $1`, [appId]);
      if (!r) return undefined;
      const cred = toCredential(r);
      Object.freeze(cred.scopes);
      Object.freeze(cred.ipAllowlist);
      const found: AuthCredential = Object.freeze({ ...cred, projectArchived: r.project_archived_at !== null });
      return found;
    },
    async insertProjectCutoff(c) {
      await pool.query(`INSERT INTO project_cutoffs (project_id, cut_at, expires_at) VALUES ($1, $2, $3)
        ON CONFLICT (project_id) DO UPDATE SET cut_at = GREATEST(project_cutoffs.cut_at, EXCLUDED.cut_at),
        expires_at = GREATEST(project_cutoffs.expires_at, EXCLUDED.expires_at)`, [c.projectId, c.cutAt, c.expiresAt]);
    },
    async projectCutoff(projectId) {
      const r = await one<CutoffRow>('SELECT project_id, cut_at, expires_at FROM project_cutoffs WHERE project_id = $1', [projectId]);
      return r && toCutoff(r);
    },
    async listProjectCutoffs(nowSec) {
      return (await rows<CutoffRow>('SELECT project_id, cut_at, expires_at FROM project_cutoffs WHERE expires_at >= $1', [nowSec]))
        .map(toCutoff);
    },
    async purgeProjectCutoffs(nowSec) { return changed('DELETE FROM project_cutoffs WHERE expires_at < $1', [nowSec]); },
  };
}
