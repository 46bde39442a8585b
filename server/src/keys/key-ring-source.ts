import type { KeyRingStore } from './store.ts';
import { parseKeyDocument, rotateKeyDocument, serializeKeyDocument, type KeyDocument } from './key-document.ts';

/** A key document and the version it is stored at. */
export interface VersionedKeyDocument {
  readonly document: KeyDocument;
  /** Moves on with every replacement; a reader compares it to tell whether the ring changed. */
  readonly version: number;
}

/**
 * Where a deployment keeps its key ring (docs/operations/configuration.md, "Keys"): `keys.json`
 * in the data directory on SQLite, the database on PostgreSQL, so that processes on several
 * machines read one ring.
 */
export interface KeyRingSource {
  /** Names the place in messages (`keys.json in /data`, `the database`); never the content. */
  readonly where: string;
  /** The stored ring, or undefined when none exists yet. */
  read(): Promise<VersionedKeyDocument | undefined>;
  /** Stores `document` unless a ring exists; returns the ring stored in the end (this one or the one that won). */
  createIfAbsent(document: KeyDocument): Promise<VersionedKeyDocument>;
  /** Replaces the ring only if it is still at `expectedVersion`; false when another writer came first. */
  replace(document: KeyDocument, expectedVersion: number): Promise<boolean>;
}

/** The key ring in the store's `key_ring` row (PostgreSQL deployments). */
export function createStoreKeyRingSource(store: KeyRingStore): KeyRingSource {
  const where = 'the key ring in the database';
  const read = async (): Promise<VersionedKeyDocument | undefined> => {
    const stored = await store.readKeyRing();
    return stored && { document: parseKeyDocument(stored.document, where), version: stored.version };
  };
  return {
    where,
    read,
    async createIfAbsent(document) {
      await store.insertKeyRingIfAbsent(serializeKeyDocument(document));
      const stored = await read();
      if (!stored) throw new Error(`${where} vanished right after it was created`);
      return stored;
    },
    replace: (document, expectedVersion) => store.replaceKeyRing(serializeKeyDocument(document), expectedVersion),
  };
}

/** `rtc keys rotate` refused: there is no ring yet, or another rotation changed it first. */
export class KeyRotationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRotationError';
  }
}

/**
 * Rotates the ring (`rotateKeyDocument`) with compare-and-swap on its version. Of two rotations at
 * once, the second fails and changes nothing rather than rotating twice: the operator asked for
 * one new key, and another rotation has just made one.
 */
export async function rotateKeys(source: KeyRingSource, nowSec: number, missing: string): Promise<{ signingKid: string; masterKid: string }> {
  const stored = await source.read();
  if (!stored) throw new KeyRotationError(missing);
  const { document, signingKid, masterKid } = rotateKeyDocument(stored.document, nowSec);
  if (!await source.replace(document, stored.version)) {
    throw new KeyRotationError(`${source.where} changed while rotating (another rotation?); nothing was changed, run it again if a new key is still wanted`);
  }
  return { signingKid, masterKid };
}
