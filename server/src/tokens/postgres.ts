import type pg from 'pg';
import { pgQueries } from '../sql/postgres.ts';
import type { RedeemedInvitationStore, RevocationRecord, RevocationStore, TokenCountStore } from './store.ts';

interface RevocationRow { grant_id: string; project_id: string; expires_at: number }

/** The token module's part of the PostgreSQL store (revocations, issued-token counts, redeemed invitations), on its pool. */
export function postgresTokenStore(pool: pg.Pool): RevocationStore & TokenCountStore & RedeemedInvitationStore {
  const { rows, one, changed } = pgQueries(pool);
  return {
    async insertRevocation(r) {
      await pool.query(`INSERT INTO revocations (grant_id, project_id, expires_at) VALUES ($1, $2, $3)
        ON CONFLICT (grant_id) DO NOTHING`, [r.grantId, r.projectId, r.expiresAt]);
    },
    async isRevoked(grantId) {
      return (await one<{ one: number }>('SELECT 1 AS one FROM revocations WHERE grant_id = $1', [grantId])) !== undefined;
    },
    async listRevocations(nowSec) {
      return (await rows<RevocationRow>('SELECT grant_id, project_id, expires_at FROM revocations WHERE expires_at >= $1', [nowSec]))
        .map((r): RevocationRecord => ({ grantId: r.grant_id, projectId: r.project_id, expiresAt: r.expires_at }));
    },
    async purgeRevocations(nowSec) { return changed('DELETE FROM revocations WHERE expires_at < $1', [nowSec]); },
    async addTokenCounts(counts) {
      if (counts.length === 0) return;
      // one statement: the rows of a batch are added together or not at all
      await pool.query(`INSERT INTO token_counts (project_id, day, count)
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
        ON CONFLICT (project_id, day) DO UPDATE SET count = token_counts.count + excluded.count`,
      [counts.map((c) => c.projectId), counts.map((c) => c.day), counts.map((c) => c.count)]);
    },
    async listTokenCounts(projectId, sinceDay) {
      return (await rows<{ project_id: string; day: string; count: string }>(
        'SELECT project_id, day, count FROM token_counts WHERE project_id = $1 AND day >= $2 ORDER BY day', [projectId, sinceDay],
      )).map((r) => ({ projectId: r.project_id, day: r.day, count: Number(r.count) }));
    },
    async claimInvitation(nonce, expiresAt) {
      // one statement: of concurrent claims on any connection, the unique key lets exactly one insert
      return (await changed(`INSERT INTO redeemed_invitations (nonce, expires_at) VALUES ($1, $2)
        ON CONFLICT (nonce) DO NOTHING`, [nonce, expiresAt])) === 1;
    },
    async releaseInvitation(nonce) { await changed('DELETE FROM redeemed_invitations WHERE nonce = $1', [nonce]); },
    async purgeRedeemedInvitations(nowSec) { return changed('DELETE FROM redeemed_invitations WHERE expires_at < $1', [nowSec]); },
  };
}
