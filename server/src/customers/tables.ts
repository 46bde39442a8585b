import type { Migration } from '../sql/dialect.ts';

/** Accounts with their console sessions, projects and their credentials (docs/reference/token-api.md). */
export const CUSTOMER_TABLES: Migration = {
  sql: (d) => `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     password_hash TEXT NOT NULL,
     created_at ${d.bigint} NOT NULL
   );
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     family_id TEXT NOT NULL,
     access_hash TEXT NOT NULL UNIQUE,
     access_expires_at ${d.bigint} NOT NULL,
     refresh_hash TEXT NOT NULL UNIQUE,
     refresh_expires_at ${d.bigint} NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active','rotated','ended')),
     created_at ${d.bigint} NOT NULL
   );
   CREATE INDEX sessions_family ON sessions(family_id);
   CREATE TABLE projects (
     ${d.seqColumn}
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     name TEXT NOT NULL,
     console_app_id TEXT NOT NULL UNIQUE,
     archived_at ${d.bigint},
     created_at ${d.bigint} NOT NULL,
     updated_at ${d.bigint} NOT NULL
   );
   CREATE INDEX projects_account ON projects(account_id, created_at${d.seqKey});
   CREATE TABLE credentials (
     ${d.seqColumn}
     app_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL REFERENCES projects(id),
     name TEXT NOT NULL,
     secret_hash TEXT NOT NULL,
     scope_publisher ${d.boolean} NOT NULL,
     scope_subscriber ${d.boolean} NOT NULL,
     ip_allowlist ${d.json} NOT NULL,
     max_ttl_seconds ${d.bigint} NOT NULL,
     created_at ${d.bigint} NOT NULL,
     updated_at ${d.bigint} NOT NULL,
     rotated_at ${d.bigint},
     revoked_at ${d.bigint}
   );
   CREATE INDEX credentials_project ON credentials(project_id, created_at${d.seqKey});`,
};

/** Archive cut-offs: a project's tokens issued up to its archive are refused (docs/decisions.md). */
export const PROJECT_CUTOFFS: Migration = {
  sql: (d) => `CREATE TABLE project_cutoffs (
     project_id TEXT PRIMARY KEY,
     cut_at ${d.bigint} NOT NULL,
     expires_at ${d.bigint} NOT NULL
   );
   CREATE INDEX project_cutoffs_expiry ON project_cutoffs(expires_at);`,
};
