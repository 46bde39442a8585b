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

/** All key material of the platform, as loaded at start. */
export interface KeyRing {
  /** The key new grants are signed with. */
  readonly signing: SigningKey;
  /** Every key whose grants may still be alive (published in the JWKS). */
  readonly verifying: readonly SigningKey[];
  readonly mediaMaster: MediaMasterKey;
  readonly mediaMasters: ReadonlyMap<string, MediaMasterKey>;
  /** Keys the HMAC of App Secrets (`secret_hash`) and of refresh/session tokens. */
  readonly secretHashKey: Buffer;
  /** Keys the MAC of revocation handles. */
  readonly handleKey: Buffer;
}
