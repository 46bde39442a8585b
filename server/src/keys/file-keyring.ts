import { randomBytes } from 'node:crypto';
import {
  closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { KeyRing } from '../core/keyring.ts';
import {
  buildKeyRing, newKeyDocument, parseKeyDocument, serializeKeyDocument, type KeyDocument,
} from './key-document.ts';
import type { KeyRingSource, VersionedKeyDocument } from './key-ring-source.ts';

const FILE_NAME = 'keys.json';

/**
 * `keys.json`: the key document, plus `revision` (absent: 1), one more with each rotation, by which
 * running processes tell that the file changed. Private: mode 0600, never logged.
 */
function fileText(doc: KeyDocument, revision: number): string {
  return serializeKeyDocument(doc, revision === 1 ? undefined : revision);
}

/** Writes a private temporary file beside `keys.json` and flushes it to disk; returns its path. */
function writeDurableTemp(dir: string, text: string): string {
  const tmp = join(dir, `${FILE_NAME}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
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
function replaceKeyFile(dir: string, text: string): void {
  renameSync(writeDurableTemp(dir, text), join(dir, FILE_NAME));
  fsyncDir(dir);
}

/**
 * Creates `keys.json` only if no other process did: the complete file is linked into place, which
 * fails when the name exists. Processes that start together on an empty data directory therefore
 * all end up reading the one file that won, never keys that did not reach the disk.
 */
function createKeyFileOnce(dir: string, text: string): void {
  const tmp = writeDurableTemp(dir, text);
  try {
    linkSync(tmp, join(dir, FILE_NAME));
    fsyncDir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
}

function readKeyFile(dir: string): VersionedKeyDocument {
  const where = `${FILE_NAME} in the data directory`;
  const text = readFileSync(join(dir, FILE_NAME), 'utf8');
  const document = parseKeyDocument(text, where);
  const revision = (JSON.parse(text) as { revision?: unknown }).revision;
  return { document, version: Number.isSafeInteger(revision) ? revision as number : 1 };
}

/** The key document of `dir`, or undefined when it has no `keys.json` (for a move of the keys into a database). */
export function readKeyFileIfPresent(dir: string): KeyDocument | undefined {
  return existsSync(join(dir, FILE_NAME)) ? readKeyFile(dir).document : undefined;
}

/** Creates `keys.json` in `dir` from `document` unless it exists, and returns what the file holds then. */
function readOrCreateKeyFile(dir: string, document: () => KeyDocument): VersionedKeyDocument {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(join(dir, FILE_NAME))) createKeyFileOnce(dir, fileText(document(), 1));
  return readKeyFile(dir);
}

/** Loads the key ring from the data directory, generating it on first start (tools that read the keys once). */
export function loadKeyRing(dir: string, nowSec: number): KeyRing {
  return buildKeyRing(readOrCreateKeyFile(dir, () => newKeyDocument(nowSec)).document, nowSec, FILE_NAME);
}

/** Why `rtc keys rotate` refuses a data directory without keys. */
export const missingKeyFileMessage = (dir: string): string => `no ${FILE_NAME} in ${dir}: \`rtc serve\` creates the keys on its first start`;

/**
 * `keys.json` in `dir` as a key ring source (SQLite deployments). The compare-and-swap of
 * `replace` checks the revision and then renames, which is not one atomic step between processes:
 * rotations of one data directory are run one at a time (docs/operations/configuration.md).
 */
export function createFileKeyRingSource(dir: string): KeyRingSource {
  return {
    where: `${FILE_NAME} in ${dir}`,
    async read() {
      return existsSync(join(dir, FILE_NAME)) ? readKeyFile(dir) : undefined;
    },
    async createIfAbsent(document) {
      return readOrCreateKeyFile(dir, () => document);
    },
    async replace(document, expectedVersion) {
      if (!existsSync(join(dir, FILE_NAME)) || readKeyFile(dir).version !== expectedVersion) return false;
      replaceKeyFile(dir, fileText(document, expectedVersion + 1));
      return true;
    },
  };
}
