import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { LiveKeyRing } from '../core/keyring.ts';
import { createFileKeyRingSource } from './file-keyring.ts';
import { newKeyDocument, RETIRE_AFTER_SECONDS } from './key-document.ts';
import { KeyRotationError, rotateKeys, type KeyRingSource } from './key-ring-source.ts';
import { openLiveKeyRing, UNKNOWN_KEY_RELOAD_GAP_MS } from './live-key-ring.ts';

const T0 = 1_800_000_000;
const dirs: string[] = [];
const rings: LiveKeyRing[] = [];
after(() => {
  for (const ring of rings) ring.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A key file in a new directory, and a source on it that counts its reads. */
async function fileSource(): Promise<{ source: KeyRingSource; reads: () => number; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-live-keys-'));
  dirs.push(dir);
  const file = createFileKeyRingSource(dir);
  await file.createIfAbsent(newKeyDocument(T0));
  let count = 0;
  const source: KeyRingSource = { ...file, read: () => { count += 1; return file.read(); } };
  return { source, reads: () => count, dir };
}

function live(source: KeyRingSource, initial: Parameters<typeof openLiveKeyRing>[1], options: { nowSec?: () => number; intervalMs?: number; errors?: unknown[] } = {}): LiveKeyRing {
  const ring = openLiveKeyRing(source, initial, {
    clock: { nowMs: () => (options.nowSec?.() ?? T0) * 1000 },
    reloadIntervalMs: options.intervalMs ?? 3_600_000,
    onError: (err) => options.errors?.push(err),
  });
  rings.push(ring);
  return ring;
}

/** Resolves when `check` holds, looking every 10 ms; fails after `timeoutMs`. */
async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('live key ring', () => {
  it('takes a rotation made by another process at its periodic reload, keeping the old key for verification', async () => {
    const { source } = await fileSource();
    const ring = live(source, (await source.read())!, { intervalMs: 20 });
    const first = ring.signing.kid;
    const { signingKid, masterKid } = await rotateKeys(source, T0 + 10, 'missing');
    await until(() => ring.signing.kid === signingKid, 5000, 'the rotated ring');
    assert.equal(ring.mediaMaster.kid, masterKid);
    assert.deepEqual(ring.verifying.map((k) => k.kid), [first, signingKid]);
    assert.ok(ring.verifyingByKid.has(first));
    assert.equal(ring.mediaMasters.size, 2);
  });

  it('reloads at once for an unknown key, but starts at most one load a second however many ask', async () => {
    const { source, reads } = await fileSource();
    const ring = live(source, (await source.read())!);
    const { signingKid } = await rotateKeys(source, T0 + 10, 'missing');
    const before = reads();
    const answers = await Promise.all(Array.from({ length: 50 }, () => ring.reloadForUnknownKey()));
    assert.equal(reads() - before, 1, 'fifty callers shared one load');
    assert.ok(answers.every((a) => a === true));
    assert.equal(ring.signing.kid, signingKid);

    // garbage key ids asking again and again: the next load waits for the gap to pass
    const started = Date.now();
    assert.equal(await ring.reloadForUnknownKey(), false, 'nothing newer');
    assert.equal(await ring.reloadForUnknownKey(), false);
    assert.equal(reads() - before, 3);
    assert.ok(Date.now() - started >= 2 * UNKNOWN_KEY_RELOAD_GAP_MS - 50, 'two more loads took two gaps');
  });

  it('drops retired keys once their time has passed, without a new version', async () => {
    const { source } = await fileSource();
    let now = T0;
    const ring = live(source, (await source.read())!, { nowSec: () => now, intervalMs: 20 });
    const first = ring.signing.kid;
    await rotateKeys(source, T0, 'missing');
    await until(() => ring.verifying.length === 2, 5000, 'the rotated ring');
    now = T0 + RETIRE_AFTER_SECONDS + 1;
    await until(() => !ring.verifyingByKid.has(first), 5000, 'the old key to retire');
    assert.equal(ring.verifying.length, 1);
  });

  it('refuses a stored ring with another secret-hash key and keeps the one in force', async () => {
    const { source, dir } = await fileSource();
    const errors: unknown[] = [];
    const ring = live(source, (await source.read())!, { errors });
    const hashKey = ring.secretHashKey;
    const file = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'keys.json'), JSON.stringify({ ...newKeyDocument(T0), revision: 7, handle_key: file['handle_key'] }));
    assert.equal(await ring.reloadForUnknownKey(), false);
    assert.deepEqual(ring.secretHashKey, hashKey);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /another secret-hash or handle key/);
    assert.doesNotMatch(String(errors[0]), new RegExp(String(file['secret_hash_key'])), 'no key material in the message');
  });

  it('rotation keeps the secret-hash and handle keys, and a rotation based on a stale version fails and changes nothing', async () => {
    const { source } = await fileSource();
    const stored = (await source.read())!;
    await rotateKeys(source, T0 + 10, 'missing');
    const rotated = (await source.read())!;
    assert.equal(rotated.version, stored.version + 1);
    assert.equal(rotated.document.secret_hash_key, stored.document.secret_hash_key);
    assert.equal(rotated.document.handle_key, stored.document.handle_key);
    assert.equal(await source.replace(stored.document, stored.version), false, 'compare-and-swap on the version');
    assert.deepEqual(await source.read(), rotated);
    await assert.rejects(rotateKeys(createFileKeyRingSource(join(tmpdir(), 'rtc-no-such-dir')), T0, 'no keys here'),
      (err: unknown) => err instanceof KeyRotationError && err.message === 'no keys here');
  });
});
