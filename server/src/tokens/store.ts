/** The token module's records and its slices of the store: revocations, issued-token counts and redeemed invitations. */

export interface RevocationRecord {
  readonly grantId: string;
  readonly projectId: string;
  readonly expiresAt: number;
}

/** Tokens issued for a project on one UTC day (`YYYY-MM-DD`): the console's usage figures. */
export interface TokenCount {
  readonly projectId: string;
  readonly day: string;
  readonly count: number;
}

/** Revoked grants, kept until they expire. */
export interface RevocationStore {
  insertRevocation(revocation: RevocationRecord): Promise<void>;
  isRevoked(grantId: string): Promise<boolean>;
  listRevocations(nowSec: number): Promise<RevocationRecord[]>;
  purgeRevocations(nowSec: number): Promise<number>;
}

/** Tokens issued per project and UTC day (the console's usage figures). */
export interface TokenCountStore {
  /** Adds to the tokens issued per project and day (each process adds what it issued). */
  addTokenCounts(counts: readonly TokenCount[]): Promise<void>;
  /** Tokens issued for a project per day, from `sinceDay` on, oldest first; days without any are left out. */
  listTokenCounts(projectId: string, sinceDay: string): Promise<TokenCount[]>;
}

/**
 * The share-link invitations already traded for a token (docs/console.md, "Share links"), by their
 * nonce, kept until they expire: one use holds across restarts and every api process of the store.
 */
export interface RedeemedInvitationStore {
  /** Marks an invitation redeemed; false when it already was (by this process or another): a second claim never wins. */
  claimInvitation(nonce: string, expiresAt: number): Promise<boolean>;
  /** Undoes a claim whose token could not be issued: the invitation can be redeemed again. */
  releaseInvitation(nonce: string): Promise<void>;
  /** Forgets the marks of invitations that expired before `nowSec` (expired ones are refused anyway); how many. */
  purgeRedeemedInvitations(nowSec: number): Promise<number>;
}
