import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { MAX_TTL_SECONDS } from '@rtc/protocol';
import { newKeyId } from '../../core/ids.ts';
import type { KeyRing, MediaMasterKey, SigningKey } from '../../core/keyring.ts';

/** What `keys.json` in the data directory holds. Private: mode 0600, never logged. */
interface KeyFile {
  version: 1;
  signing: { kid: string; private_pem: string; created_at: number; retire_at?: number }[];
  media_master: { kid: string; secret: string; created_at: number; retire_at?: number }[];
  secret_hash_key: string;
  handle_key: string;
}

const FILE_NAME = 'keys.json';
// a retired key stays published until every grant it signed has expired, plus clock skew
const RETIRE_AFTER_SECONDS = MAX_TTL_SECONDS + 300;

function newSigningEntry(nowSec: number): KeyFile['signing'][number] {
  const { privateKey } = generateKeyPairSync('ed25519');
  return {
    kid: newKeyId('sig', nowSec),
    private_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    created_at: nowSec,
  };
}

function newMasterEntry(nowSec: number): KeyFile['media_master'][number] {
  return { kid: newKeyId('mk', nowSec), secret: randomBytes(32).toString('base64url'), created_at: nowSec };
}

/** Writes a private temporary file beside `keys.json` and flushes it to disk; returns its path. */
function writeDurableTemp(dir: string, file: KeyFile): string {
  const tmp = join(dir, `${FILE_NAME}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(file, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/** Flushes the directory entry, so a rename or link survives a crash. */
function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Replaces `keys.json` atomically and durably (rotation). */
function replaceKeyFile(dir: string, file: KeyFile): void {
  renameSync(writeDurableTemp(dir, file), join(dir, FILE_NAME));
  fsyncDir(dir);
}

/**
 * Creates `keys.json` only if no other process did: the complete file is linked into place, which
 * fails when the name exists. Processes that start together on an empty data directory therefore
 * all end up reading the one file that won, never keys that did not reach the disk.
 */
function createKeyFileOnce(dir: string, file: KeyFile): void {
  const tmp = writeDurableTemp(dir, file);
  try {
    linkSync(tmp, join(dir, FILE_NAME));
    fsyncDir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
}

function readKeyFile(dir: string): KeyFile {
  const file = JSON.parse(readFileSync(join(dir, FILE_NAME), 'utf8')) as KeyFile;
  if (file.version !== 1 || !Array.isArray(file.signing) || file.signing.length === 0 ||
      !Array.isArray(file.media_master) || file.media_master.length === 0) {
    throw new Error(`${FILE_NAME} in the data directory is not a valid key file`);
  }
  return file;
}

/** Loads the key ring from the data directory, generating it on first start. */
export function loadKeyRing(dir: string, nowSec: number): KeyRing {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(join(dir, FILE_NAME))) {
    createKeyFileOnce(dir, {
      version: 1,
      signing: [newSigningEntry(nowSec)],
      media_master: [newMasterEntry(nowSec)],
      secret_hash_key: randomBytes(32).toString('base64url'),
      handle_key: randomBytes(32).toString('base64url'),
    });
  }
  const file = readKeyFile(dir);
  const signing: SigningKey[] = file.signing
    .filter((k) => k.retire_at === undefined || k.retire_at > nowSec)
    .map((k) => {
      const privateKey = createPrivateKey(k.private_pem);
      return { kid: k.kid, privateKey, publicKey: createPublicKey(privateKey), retireAt: k.retire_at };
    });
  const masters: MediaMasterKey[] = file.media_master
    .filter((k) => k.retire_at === undefined || k.retire_at > nowSec)
    .map((k) => ({ kid: k.kid, secret: Buffer.from(k.secret, 'base64url'), retireAt: k.retire_at }));
  const activeSigning = signing.findLast((k) => k.retireAt === undefined);
  const activeMaster = masters.findLast((k) => k.retireAt === undefined);
  if (!activeSigning || !activeMaster) throw new Error(`${FILE_NAME} has no current signing or media master key`);
  return {
    signing: activeSigning,
    verifying: signing,
    mediaMaster: activeMaster,
    mediaMasters: new Map(masters.map((k) => [k.kid, k])),
    secretHashKey: Buffer.from(file.secret_hash_key, 'base64url'),
    handleKey: Buffer.from(file.handle_key, 'base64url'),
  };
}

/**
 * Adds a new signing key and media master key and schedules the current ones to retire once
 * every grant they issued has expired. Running processes pick the new keys up on restart.
 */
export function rotateKeyRing(dir: string, nowSec: number): { signingKid: string; masterKid: string } {
  if (!existsSync(join(dir, FILE_NAME))) {
    throw new Error(`no ${FILE_NAME} in ${dir}: \`rtc serve\` creates the keys on its first start`);
  }
  const file = readKeyFile(dir);
  const retireAt = nowSec + RETIRE_AFTER_SECONDS;
  for (const k of file.signing) if (k.retire_at === undefined) k.retire_at = retireAt;
  for (const k of file.media_master) if (k.retire_at === undefined) k.retire_at = retireAt;
  file.signing = file.signing.filter((k) => (k.retire_at ?? Infinity) > nowSec);
  file.media_master = file.media_master.filter((k) => (k.retire_at ?? Infinity) > nowSec);
  const signing = newSigningEntry(nowSec);
  const master = newMasterEntry(nowSec);
  file.signing.push(signing);
  file.media_master.push(master);
  replaceKeyFile(dir, file);
  return { signingKid: signing.kid, masterKid: master.kid };
}
