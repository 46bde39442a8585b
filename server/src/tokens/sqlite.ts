import type Database from 'better-sqlite3';
import type { RedeemedInvitationStore, RevocationStore, TokenCount, TokenCountStore } from './store.ts';

/** The token module's part of the SQLite store (revocations, issued-token counts, redeemed invitations), on its connection. */
export function sqliteTokenStore(db: Database.Database): RevocationStore & TokenCountStore & RedeemedInvitationStore {
  const q = {
    insertRevocation: db.prepare(`INSERT INTO revocations (grant_id, project_id, expires_at)
      VALUES (@grantId, @projectId, @expiresAt) ON CONFLICT (grant_id) DO NOTHING`),
    isRevoked: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM revocations WHERE grant_id = ?'),
    listRevocations: db.prepare<[number], { grant_id: string; project_id: string; expires_at: number }>(
      'SELECT * FROM revocations WHERE expires_at >= ?'),
    purgeRevocations: db.prepare('DELETE FROM revocations WHERE expires_at < ?'),
    addTokenCount: db.prepare<[string, string, number]>(`INSERT INTO token_counts (project_id, day, count) VALUES (?, ?, ?)
      ON CONFLICT (project_id, day) DO UPDATE SET count = count + excluded.count`),
    listTokenCounts: db.prepare<[string, string], { project_id: string; day: string; count: number }>(
      'SELECT project_id, day, count FROM token_counts WHERE project_id = ? AND day >= ? ORDER BY day'),
    claimInvitation: db.prepare<[string, number]>(
      'INSERT INTO redeemed_invitations (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING'),
    releaseInvitation: db.prepare<[string]>('DELETE FROM redeemed_invitations WHERE nonce = ?'),
    purgeRedeemedInvitations: db.prepare<[number]>('DELETE FROM redeemed_invitations WHERE expires_at < ?'),
  };

  const addTokenCounts = db.transaction((counts: readonly TokenCount[]): void => {
    for (const c of counts) q.addTokenCount.run(c.projectId, c.day, c.count);
  });

  return {
    async insertRevocation(r) { q.insertRevocation.run(r); },
    async isRevoked(grantId) { return q.isRevoked.get(grantId) !== undefined; },
    async listRevocations(nowSec) {
      return q.listRevocations.all(nowSec).map((r) => ({ grantId: r.grant_id, projectId: r.project_id, expiresAt: r.expires_at }));
    },
    async purgeRevocations(nowSec) { return q.purgeRevocations.run(nowSec).changes; },
    async addTokenCounts(counts) { addTokenCounts(counts); },
    async listTokenCounts(projectId, sinceDay) {
      return q.listTokenCounts.all(projectId, sinceDay).map((r) => ({ projectId: r.project_id, day: r.day, count: r.count }));
    },
    async claimInvitation(nonce, expiresAt) { return q.claimInvitation.run(nonce, expiresAt).changes === 1; },
    async releaseInvitation(nonce) { q.releaseInvitation.run(nonce); },
    async purgeRedeemedInvitations(nowSec) { return q.purgeRedeemedInvitations.run(nowSec).changes; },
  };
}
