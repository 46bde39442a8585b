import type { KeyObject } from 'node:crypto';

/** An Ed25519 key that signs grants; `kid` names it in the JWS header and the JWKS. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** Seconds since the epoch after which the key is no longer published (undefined: current). */
  readonly retireAt: number | undefined;
}

/** A media master key: media keys are derived from it per grant (docs/operations/configuration.md, "Keys"). */
export interface MediaMasterKey {
  readonly kid: string;
  readonly secret: Buffer;
  readonly retireAt: number | undefined;
}

/** All key material of the platform, as loaded at one moment. */
export interface KeyRing {
  /** The key new grants are signed with. */
  readonly signing: SigningKey;
  /** Every key whose grants may still be alive (published in the JWKS). */
  readonly verifying: readonly SigningKey[];
  /** The same keys by `kid`. */
  readonly verifyingByKid: ReadonlyMap<string, SigningKey>;
  readonly mediaMaster: MediaMasterKey;
  readonly mediaMasters: ReadonlyMap<string, MediaMasterKey>;
  /** Keys the HMAC of App Secrets (`secret_hash`) and of refresh/session tokens. */
  readonly secretHashKey: Buffer;
  /** Keys the MAC of revocation handles. */
  readonly handleKey: Buffer;
}

/**
 * The key ring a running process reads: every getter answers from the newest ring this process
 * loaded, without I/O. Another process may rotate the stored ring; it is reloaded periodically and
 * when a token names a key this process does not know (docs/operations/configuration.md, "Keys").
 */
export interface LiveKeyRing extends KeyRing {
  /**
   * Reloads the ring because a token named an unknown key: at most one load a second however many
   * ask (a caller may wait for the next slot), so garbage key ids cannot hammer the store. True when
   * a newer ring was loaded; false when none exists or the load failed.
   */
  reloadForUnknownKey(): Promise<boolean>;
  /** Stops the periodic reload. */
  close(): void;
}

/** A live ring that never changes: for tools and benchmarks that load the keys once. */
export function fixedKeyRing(ring: KeyRing): LiveKeyRing {
  return { ...ring, reloadForUnknownKey: () => Promise.resolve(false), close: () => undefined };
}
