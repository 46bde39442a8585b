import type { Migration } from '../sql/dialect.ts';

/** Revoked grants until they expire (docs/reference/token-api.md, "Revocation"). */
export const REVOCATIONS: Migration = {
  sql: (d) => `CREATE TABLE revocations (
     grant_id TEXT PRIMARY KEY,
     project_id TEXT NOT NULL,
     expires_at ${d.bigint} NOT NULL
   );
   CREATE INDEX revocations_expiry ON revocations(expires_at);`,
};

/** Tokens issued per project and UTC day (docs/console.md, "Usage"). */
export const TOKEN_COUNTS: Migration = {
  sql: (d) => `CREATE TABLE token_counts (
     project_id TEXT NOT NULL,
     day TEXT NOT NULL,
     count ${d.bigint} NOT NULL,
     PRIMARY KEY (project_id, day)
   );`,
};

/** Share-link invitations already redeemed, until they expire (docs/console.md, "Share links"): one row per nonce, the first insert wins. */
export const REDEEMED_INVITATIONS: Migration = {
  sql: (d) => `CREATE TABLE redeemed_invitations (
     nonce TEXT PRIMARY KEY,
     expires_at ${d.bigint} NOT NULL
   );
   CREATE INDEX redeemed_invitations_expiry ON redeemed_invitations(expires_at);`,
};
