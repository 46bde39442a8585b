import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createFileKeyRingSource, loadKeyRing } from './file-keyring.ts';
import { rotateKeys } from './key-ring-source.ts';

const KEYRING = fileURLToPath(new URL('./file-keyring.ts', import.meta.url));
const RACERS = 6;

/**
 * A child that waits (spinning, so that all start within microseconds of each other) for the
 * `go` file, loads the key ring and prints the signing key id and the secret-hash key.
 */
const RACER = `
import { existsSync } from 'node:fs';
const { loadKeyRing } = await import(process.argv[1]);
const [dir, go] = process.argv.slice(2);
console.log('ready');
while (!existsSync(go)) { /* spin */ }
const ring = loadKeyRing(dir, Math.floor(Date.now() / 1000));
console.log(JSON.stringify({ kid: ring.signing.kid, hashKey: ring.secretHashKey.toString('base64url') }));
`;

function racer(dir: string, go: string): { ready: Promise<void>; result: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RACER, KEYRING, dir, go],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => { onReady = resolve; });
  const result = new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => (line === 'ready' ? onReady() : resolve(line)));
    child.on('exit', (code) => reject(new Error(`racer exited with ${code}`)));
  });
  return { ready, result };
}

describe('file key ring', () => {
  it('processes creating it at the same moment all end up with the one key file on disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtc-keys-'));
    const go = join(dir, '..', `${dir.split('/').pop()}.go`);
    const racers = Array.from({ length: RACERS }, () => racer(dir, go));
    await Promise.all(racers.map((r) => r.ready));
    writeFileSync(go, '');
    const seen = await Promise.all(racers.map((r) => r.result));
    const onDisk = loadKeyRing(dir, Math.floor(Date.now() / 1000));
    const expected = JSON.stringify({ kid: onDisk.signing.kid, hashKey: onDisk.secretHashKey.toString('base64url') });
    assert.deepEqual(seen, Array.from({ length: RACERS }, () => expected));
    assert.deepEqual(readdirSync(dir), ['keys.json'], 'no temporary file is left behind');
    assert.equal(statSync(join(dir, 'keys.json')).mode & 0o777, 0o600);
  });

  it('rotation keeps the old keys for verification and the secret-hash key unchanged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtc-keys-'));
    const now = 1_800_000_000;
    const first = loadKeyRing(dir, now);
    const { signingKid } = await rotateKeys(createFileKeyRingSource(dir), now + 10, 'missing');
    const rotated = loadKeyRing(dir, now + 20);
    assert.equal(rotated.signing.kid, signingKid);
    assert.ok(rotated.verifying.some((k) => k.kid === first.signing.kid), 'the old key still verifies');
    assert.deepEqual(rotated.secretHashKey, first.secretHashKey);
    assert.deepEqual(readdirSync(dir), ['keys.json']);
    const file = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')) as { version: number; revision: number };
    assert.deepEqual([file.version, file.revision], [1, 2], 'the format stays version 1; the revision counts rotations');
  });
});
