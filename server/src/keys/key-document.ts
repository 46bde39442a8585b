import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { MAX_TTL_SECONDS } from '@rtc/protocol';
import { newKeyId } from '../core/ids.ts';
import type { KeyRing, MediaMasterKey, SigningKey } from '../core/keyring.ts';

/**
 * The key ring as it is kept: `keys.json` in the data directory, or the `key_ring` row of a
 * PostgreSQL database (docs/operations/configuration.md, "Keys"). Secret: never logged.
 */
export interface KeyDocument {
  readonly version: 1;
  readonly signing: readonly { kid: string; private_pem: string; created_at: number; retire_at?: number }[];
  readonly media_master: readonly { kid: string; secret: string; created_at: number; retire_at?: number }[];
  readonly secret_hash_key: string;
  readonly handle_key: string;
}

// a retired key stays published until every grant it signed has expired, plus clock skew
export const RETIRE_AFTER_SECONDS = MAX_TTL_SECONDS + 300;

function newSigningEntry(nowSec: number): KeyDocument['signing'][number] {
  const { privateKey } = generateKeyPairSync('ed25519');
  return {
    kid: newKeyId('sig', nowSec),
    private_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    created_at: nowSec,
  };
}

function newMasterEntry(nowSec: number): KeyDocument['media_master'][number] {
  return { kid: newKeyId('mk', nowSec), secret: randomBytes(32).toString('base64url'), created_at: nowSec };
}

/** A complete first key ring: one signing key, one media master key, the secret-hash and handle keys. */
export function newKeyDocument(nowSec: number): KeyDocument {
  return {
    version: 1,
    signing: [newSigningEntry(nowSec)],
    media_master: [newMasterEntry(nowSec)],
    secret_hash_key: randomBytes(32).toString('base64url'),
    handle_key: randomBytes(32).toString('base64url'),
  };
}

/** Parses a key document; throws (without echoing the content) when it is not one. */
export function parseKeyDocument(text: string, where: string): KeyDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = undefined;
  }
  const d = doc as Partial<KeyDocument> | undefined;
  if (typeof d !== 'object' || d === null || d.version !== 1 || !Array.isArray(d.signing) || d.signing.length === 0 ||
      !Array.isArray(d.media_master) || d.media_master.length === 0 ||
      typeof d.secret_hash_key !== 'string' || typeof d.handle_key !== 'string') {
    throw new Error(`${where} is not a valid key file`);
  }
  return d as KeyDocument;
}

/** The document as stored, fields in a fixed order; `revision` is the file's change counter (file-keyring.ts). */
export function serializeKeyDocument(doc: KeyDocument, revision?: number): string {
  const { version, signing, media_master, secret_hash_key, handle_key } = doc;
  return `${JSON.stringify({ version, signing, media_master, secret_hash_key, handle_key, revision }, null, 2)}\n`;
}

/**
 * Adds a new signing key and media master key and schedules the current ones to retire once every
 * grant they issued has expired; keys already past retirement are dropped. The secret-hash and
 * handle keys are kept as they are: stored App Secret hashes and issued handles depend on them.
 */
export function rotateKeyDocument(doc: KeyDocument, nowSec: number): { document: KeyDocument; signingKid: string; masterKid: string } {
  const retireAt = nowSec + RETIRE_AFTER_SECONDS;
  const live = <K extends { retire_at?: number }>(keys: readonly K[]): K[] => keys
    .map((k) => (k.retire_at === undefined ? { ...k, retire_at: retireAt } : k))
    .filter((k) => (k.retire_at ?? Infinity) > nowSec);
  const signing = newSigningEntry(nowSec);
  const master = newMasterEntry(nowSec);
  return {
    document: {
      ...doc,
      signing: [...live(doc.signing), signing],
      media_master: [...live(doc.media_master), master],
    },
    signingKid: signing.kid,
    masterKid: master.kid,
  };
}

/** The keys of a document in force at `nowSec`: retired ones left out, the newest current one signing. */
export function buildKeyRing(doc: KeyDocument, nowSec: number, where: string): KeyRing {
  const signing: SigningKey[] = doc.signing
    .filter((k) => k.retire_at === undefined || k.retire_at > nowSec)
    .map((k) => {
      const privateKey = createPrivateKey(k.private_pem);
      return { kid: k.kid, privateKey, publicKey: createPublicKey(privateKey), retireAt: k.retire_at };
    });
  const masters: MediaMasterKey[] = doc.media_master
    .filter((k) => k.retire_at === undefined || k.retire_at > nowSec)
    .map((k) => ({ kid: k.kid, secret: Buffer.from(k.secret, 'base64url'), retireAt: k.retire_at }));
  const activeSigning = signing.findLast((k) => k.retireAt === undefined);
  const activeMaster = masters.findLast((k) => k.retireAt === undefined);
  if (!activeSigning || !activeMaster) throw new Error(`${where} has no current signing or media master key`);
  return {
    signing: activeSigning,
    verifying: signing,
    verifyingByKid: new Map(signing.map((k) => [k.kid, k])),
    mediaMaster: activeMaster,
    mediaMasters: new Map(masters.map((k) => [k.kid, k])),
    secretHashKey: Buffer.from(doc.secret_hash_key, 'base64url'),
    handleKey: Buffer.from(doc.handle_key, 'base64url'),
  };
}
