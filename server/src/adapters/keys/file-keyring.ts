import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_TTL_SECONDS } from '@rtc/protocol';
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
    kid: `sig-${nowSec}-${randomBytes(4).toString('hex')}`,
    private_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    created_at: nowSec,
  };
}

function newMasterEntry(nowSec: number): KeyFile['media_master'][number] {
  return { kid: `mk-${nowSec}-${randomBytes(4).toString('hex')}`, secret: randomBytes(32).toString('base64url'), created_at: nowSec };
}

function writeKeyFile(dir: string, file: KeyFile): void {
  const path = join(dir, FILE_NAME);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
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
    writeKeyFile(dir, {
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
  writeKeyFile(dir, file);
  return { signingKid: signing.kid, masterKid: master.kid };
}
