/**
 * Which grants are revoked (until they expire) and which live sessions use each grant id, so a
 * revocation event closes exactly those sessions at once.
 */
export class RevocationIndex<S> {
  private readonly revoked = new Map<string, number>();
  private readonly holders = new Map<string, Set<S>>();

  isRevoked(grantId: string): boolean {
    return this.revoked.has(grantId);
  }

  /** Records a revocation; returns the sessions that use the grant (the caller closes them). */
  revoke(grantId: string, expiresAt: number): S[] {
    const known = this.revoked.get(grantId);
    if (known === undefined || known < expiresAt) this.revoked.set(grantId, expiresAt);
    const sessions = this.holders.get(grantId);
    return sessions ? [...sessions] : [];
  }

  add(grantId: string, session: S): void {
    let set = this.holders.get(grantId);
    if (!set) {
      set = new Set();
      this.holders.set(grantId, set);
    }
    set.add(session);
  }

  remove(grantId: string, session: S): void {
    const set = this.holders.get(grantId);
    if (!set) return;
    set.delete(session);
    if (set.size === 0) this.holders.delete(grantId);
  }

  /** Forgets revocations of grants that expired before `nowSec` (they are refused as expired). */
  purge(nowSec: number): void {
    for (const [grantId, expiresAt] of this.revoked) {
      if (expiresAt < nowSec) this.revoked.delete(grantId);
    }
  }

  get size(): number {
    return this.revoked.size;
  }
}
