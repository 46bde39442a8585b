/** The key ring as a store keeps it: the document of `keys.json` (JSON text, secret) and its version. */
export interface StoredKeyRing {
  readonly document: string;
  /** 1 when created, one more on each replacement. */
  readonly version: number;
}

/** Where a deployment that keeps its key ring in the store reads and replaces it (docs/operations/configuration.md, "Keys"). */
export interface KeyRingStore {
  /** Undefined until a ring was inserted. */
  readKeyRing(): Promise<StoredKeyRing | undefined>;
  /** Stores the first ring at version 1; false (nothing changed) when one exists. */
  insertKeyRingIfAbsent(document: string): Promise<boolean>;
  /** Replaces the ring only if it is still at `expectedVersion`, moving it one version on; false otherwise. */
  replaceKeyRing(document: string, expectedVersion: number): Promise<boolean>;
}
