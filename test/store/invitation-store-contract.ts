import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Store } from '../../server/src/store/port.ts';

const nonce = (): string => randomBytes(16).toString('base64url');

/**
 * The redeemed invitations' part of the store contract (store-contract.ts): an invitation is
 * claimed once, whichever store (connection, process) claims it and however many at once; expired marks are purged.
 */
export function describeInvitationStoreContract(stores: () => { readonly store: Store; readonly other: Store }): void {
  describe('redeemed invitations', () => {
    it('lets the first claim of an invitation win, on this store or another, and no later one', async () => {
      const { store, other } = stores();
      const n = nonce();
      assert.equal(await store.claimInvitation(n, 2_000_000_600), true);
      assert.equal(await store.claimInvitation(n, 2_000_000_600), false);
      assert.equal(await other.claimInvitation(n, 2_000_000_900), false);
      assert.equal(await other.claimInvitation(nonce(), 2_000_000_600), true);
    });

    it('lets a released claim be made again, on this store or another, and once only', async () => {
      const { store, other } = stores();
      const n = nonce();
      const kept = nonce();
      assert.equal(await store.claimInvitation(n, 2_000_000_600), true);
      assert.equal(await store.claimInvitation(kept, 2_000_000_600), true);
      await other.releaseInvitation(n);
      assert.equal(await other.claimInvitation(n, 2_000_000_600), true);
      assert.equal(await store.claimInvitation(n, 2_000_000_600), false);
      assert.equal(await store.claimInvitation(kept, 2_000_000_600), false, 'another claim stays');
    });

    it('lets exactly one of concurrent claims on two stores win', async () => {
      const { store, other } = stores();
      const n = nonce();
      const won = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : other).claimInvitation(n, 2_000_000_600)));
      assert.equal(won.filter(Boolean).length, 1);
    });

    it('purges the marks that expired, and keeps those that have not (an invitation is refused then anyway)', async () => {
      const { store, other } = stores();
      const now = 1_900_000_000; // before the other tests' marks expire: they stay
      const [expired, boundary, live] = [nonce(), nonce(), nonce()];
      await store.claimInvitation(expired, now - 1);
      await store.claimInvitation(boundary, now);
      await store.claimInvitation(live, now + 600);
      assert.equal(await other.purgeRedeemedInvitations(now), 1);
      assert.equal(await store.claimInvitation(boundary, now + 600), false, 'a mark expiring now is kept');
      assert.equal(await store.claimInvitation(live, now + 600), false);
      assert.equal(await store.claimInvitation(expired, now + 600), true, 'a purged mark is gone');
      assert.equal(await store.purgeRedeemedInvitations(now), 0);
    });
  });
}
