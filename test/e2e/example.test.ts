import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/platform.ts';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `npm run example` from the repository root; killed after two minutes. */
function runExample(): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'example'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const kill = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('examples/quickstart (npm run example)', () => {
  it('starts the platform, exchanges frames between two apps, revokes one through the server SDK and stops', async () => {
    const { code, stdout, stderr } = await runExample();
    assert.equal(code, 0, `exit code ${code}\n${stdout}\n${stderr}`);
    const lines = stdout.trim().split('\n');

    assert.match(stdout, /^platform: api http:\/\/127\.0\.0\.1:\d+, token http:\/\/127\.0\.0\.1:\d+, media ws:\/\/127\.0\.0\.1:\d+$/m);
    assert.match(stdout, /^console: registered \S+@example\.test, project prj_[A-Za-z0-9_-]{22}, credential app_[A-Za-z0-9_-]{22}$/m);
    assert.match(stdout, /^customer server: issued a token for alice /m);
    assert.match(stdout, /^customer server: issued a token for bob /m);
    assert.match(stdout, /^alice: joined quickstart-room as speaker /m);
    assert.match(stdout, /^bob: joined quickstart-room as speaker /m);
    for (let i = 1; i <= 3; i += 1) {
      assert.ok(lines.includes(`bob: received "hello from alice #${i}" on stream 1 from alice`), `bob's frame ${i}\n${stdout}`);
      assert.ok(lines.includes(`alice: received "hello from bob #${i}" on stream 2 from bob`), `alice's frame ${i}\n${stdout}`);
    }

    const revokedAt = lines.indexOf("customer server: revoked bob's token through TokenClient");
    const cutAt = lines.findIndex((l) => /^bob: cut off by the media server: revoked \(close code 4003\)/.test(l));
    assert.ok(revokedAt > 0 && cutAt > 0, stdout);
    assert.ok(cutAt > lines.findIndex((l) => l.startsWith('alice: received "hello from bob #3"')), 'the revocation comes after the frames');
    assert.ok(lines.includes('alice: bob left the room'), stdout);
    assert.ok(lines.includes('alice: still connected: the revocation cut bob only'), stdout);
    assert.ok(lines.includes('bob: asks for a new token: the customer server refused a token (403)'), stdout);
    assert.equal(lines.at(-1), 'example: done: every process stopped');

    // neither the App Secret nor a media key is ever printed
    assert.doesNotMatch(stdout + stderr, /sk_[A-Za-z0-9_-]{20,}/);
    assert.doesNotMatch(stdout + stderr, /"key"/);
  });
});
