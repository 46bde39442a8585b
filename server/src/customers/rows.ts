import type { AccountRecord, ProjectRecord, SessionRecord, SessionStatus } from './store.ts';

/** Rows both SQL stores read, with the same column names and types in SQLite and PostgreSQL, and their records. */

export interface ProjectRow {
  id: string; account_id: string; name: string; console_app_id: string;
  archived_at: number | null; created_at: number; updated_at: number;
}
export interface SessionRow {
  id: string; account_id: string; family_id: string; access_hash: string; access_expires_at: number;
  refresh_hash: string; refresh_expires_at: number; status: SessionStatus; created_at: number;
}
export interface AccountRow { id: string; email: string; password_hash: string; created_at: number }
export const toAccount = (r: AccountRow): AccountRecord =>
  ({ id: r.id, email: r.email, passwordHash: r.password_hash, createdAt: r.created_at });

export const toSession = (r: SessionRow): SessionRecord => ({
  id: r.id, accountId: r.account_id, familyId: r.family_id, accessHash: r.access_hash,
  accessExpiresAt: r.access_expires_at, refreshHash: r.refresh_hash, refreshExpiresAt: r.refresh_expires_at,
  status: r.status, createdAt: r.created_at,
});

export const toProject = (r: ProjectRow): ProjectRecord => ({
  id: r.id, accountId: r.account_id, name: r.name, consoleAppId: r.console_app_id,
  archivedAt: r.archived_at, createdAt: r.created_at, updatedAt: r.updated_at,
});
