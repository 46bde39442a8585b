/** `rtc` usage run as a real process: version, help, strict flags, errors before any call. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freeTcpPort } from '../helpers/ports.ts';
import { runCli } from './serve-helpers.ts';

describe('rtc usage', () => {
  it('prints the version of the package', async () => {
    const res = await runCli(['--version'], {});
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(res.code, 0);
    assert.equal(res.stdout, `${version}\n`);
  });

  it('serve --help prints help, exits 0 and listens on nothing', async () => {
    // a port the server would take if it started: still free afterwards
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const res = await runCli(['serve', '--help'], { RTC_API_PORT: String(port), RTC_ROLES: 'api' });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^usage: rtc/);
    assert.match(res.stdout, /default api,token,signaling,media/);
    assert.doesNotMatch(res.stdout, /"role"/);
    assert.equal(res.stderr, '');
  });

  it('gives each command its own help: serve lists every variable the configuration reads', async () => {
    const serve = await runCli(['serve', '--help'], {});
    assert.equal(serve.code, 0, serve.stderr);
    const config = readFileSync(new URL('../../server/src/config.ts', import.meta.url), 'utf8');
    const literals = new Set([...config.matchAll(/'((?:RTC|DATABASE|REDIS)_[A-Z_]+)'/g)].map((m) => m[1]));
    assert.ok(literals.size >= 40, 'the configuration names its variables');
    for (const name of literals) assert.match(serve.stdout, new RegExp(`\\b${name}\\b`), `serve --help names ${name}`);
    assert.doesNotMatch(serve.stdout, /projects list/);

    const projects = await runCli(['projects', '--help'], {});
    assert.equal(projects.code, 0, projects.stderr);
    assert.match(projects.stdout, /^usage: rtc projects/);
    assert.match(projects.stdout, /projects create --name NAME/);
    assert.doesNotMatch(projects.stdout, /token create|serve /);
    const token = await runCli(['help', 'token'], {});
    assert.match(token.stdout, /token create --room R/);
    assert.doesNotMatch(token.stdout, /projects list/);
    const everything = await runCli(['help'], {});
    assert.match(everything.stdout, /operator commands[\s\S]*client commands/);
  });

  it('refuses an unknown flag with exit code 2 and names it', async () => {
    for (const args of [['serve', '--bogus'], ['projects', 'list', '--bogus'], ['token', 'create', '--room']]) {
      const res = await runCli(args, {});
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /^rtc: .*(--bogus|--room)/, args.join(' '));
    }
  });

  it('rejects bad stream lists before calling anything', async () => {
    const res = await runCli(['token', 'create', '--room', 'r', '--user', 'u', '--role', 'speaker', '--publish', 'one', '--url', 'http://127.0.0.1:9'], {});
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--publish takes comma-separated stream numbers/);
  });

  it('says which address it cannot reach', async () => {
    const port = await freeTcpPort();
    const res = await runCli(['grant', 'verify', 'a.b.c', '--url', `http://127.0.0.1:${port}`], {});
    assert.equal(res.code, 1);
    assert.equal(res.stderr, `rtc: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`);
  });
});
