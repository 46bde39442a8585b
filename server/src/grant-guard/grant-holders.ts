/**
 * Which live sessions use each grant id, so that a revocation closes exactly those sessions at once
 * (a renewal adds a grant to its session; a session's grants leave with it).
 */
export class GrantHolders<S> {
  private readonly holders = new Map<string, Set<S>>();

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

  /** The sessions that use `grantId` now. */
  of(grantId: string): S[] {
    const set = this.holders.get(grantId);
    return set ? [...set] : [];
  }
}
