/** `rtc` usage run in this process (runRtc): version, help, strict flags, errors before any call. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freeTcpPort } from '../../../test/helpers/ports.ts';
import { runRtcInProcess } from '../../../test/helpers/rtc-inproc.ts';

describe('rtc usage', () => {
  it('prints the version of the package', async () => {
    const res = await runRtcInProcess(['--version'], {});
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(res.code, 0);
    assert.equal(res.stdout, `${version}\n`);
  });

  it('serve --help prints help, exits 0 and listens on nothing', async () => {
    // a port the server would take if it started: still free afterwards
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const res = await runRtcInProcess(['serve', '--help'], { RTC_API_PORT: String(port), RTC_ROLES: 'api' });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^usage: rtc/);
    assert.match(res.stdout, /default api,token,signaling,media/);
    assert.doesNotMatch(res.stdout, /"role"/);
    assert.equal(res.stderr, '');
  });

  it('gives each command its own help: serve lists every variable the configuration reads', async () => {
    const serve = await runRtcInProcess(['serve', '--help'], {});
    assert.equal(serve.code, 0, serve.stderr);
    const config = readFileSync(new URL('../config.ts', import.meta.url), 'utf8');
    // digits too: RTC_MEDIA_ICE_IPV6
    const literals = new Set([...config.matchAll(/'((?:RTC|DATABASE|REDIS)_[A-Z0-9_]+)'/g)].map((m) => m[1]));
    assert.ok(literals.size >= 40 && literals.has('RTC_MEDIA_ICE_IPV6'), 'the configuration names its variables');
    for (const name of literals) assert.match(serve.stdout, new RegExp(`\\b${name}\\b`), `serve --help names ${name}`);
    // and each is one the configuration guide describes
    const guide = readFileSync(new URL('../../../docs/operations/configuration.md', import.meta.url), 'utf8');
    const listed = serve.stdout.slice(serve.stdout.indexOf('reads')).match(/\b(?:RTC|DATABASE|REDIS)_[A-Z0-9_]+\b/g) ?? [];
    assert.deepEqual(new Set(listed), literals, 'serve --help lists exactly the variables the configuration reads');
    for (const name of listed) assert.ok(guide.includes(`\`${name}\``), `docs/operations/configuration.md describes ${name}`);
    assert.doesNotMatch(serve.stdout, /projects list/);

    const projects = await runRtcInProcess(['projects', '--help'], {});
    assert.equal(projects.code, 0, projects.stderr);
    assert.match(projects.stdout, /^usage: rtc projects/);
    assert.match(projects.stdout, /projects create --name NAME/);
    assert.doesNotMatch(projects.stdout, /token create|serve /);
    const token = await runRtcInProcess(['help', 'token'], {});
    assert.match(token.stdout, /token create --room R/);
    assert.doesNotMatch(token.stdout, /projects list/);
    const everything = await runRtcInProcess(['help'], {});
    assert.match(everything.stdout, /operator commands[\s\S]*client commands/);
  });

  it('lists in each client command\'s help the flags the command takes, which it does take', async () => {
    const home = { XDG_CONFIG_HOME: '/nonexistent/rtc-test-config', HOME: '/nonexistent/rtc-test-home' };
    const cases: readonly (readonly [string[], readonly string[]])[] = [
      [['logout'], ['--url']],
      [['projects', 'list'], ['--url']],
      [['projects', 'create', '--name', 'n'], ['--url', '--name']],
      [['credentials', 'list', '--project', 'prj_x'], ['--url', '--project']],
      [['token', 'create', '--room', 'r', '--user', 'u', '--role', 'speaker'], ['--url', '--app-id', '--app-secret', '--room', '--ttl', '--signaling']],
      [['token', 'revoke', '--handle', 'rvk_x'], ['--url', '--app-id', '--app-secret', '--handle']],
      [['rooms', 'list'], ['--url', '--app-id', '--app-secret']],
      [['grant', 'verify', 'g'], ['--url']],
    ];
    for (const [args, flags] of cases) {
      const help = await runRtcInProcess([args[0]!, '--help'], {});
      assert.equal(help.code, 0, help.stderr);
      for (const flag of flags) assert.match(help.stdout, new RegExp(`${flag}\\b`), `rtc ${args[0]} --help names ${flag}`);
      assert.match(help.stdout, /--json/);
      // the command takes the flag: whatever it answers, not an unknown option
      const run = await runRtcInProcess([...args, '--url', 'http://127.0.0.1:9', '--json'], home);
      assert.doesNotMatch(run.stderr, /Unknown option/, `rtc ${args.join(' ')} takes --url`);
    }
  });

  it('refuses an unknown flag with exit code 2 and names it', async () => {
    for (const args of [['serve', '--bogus'], ['projects', 'list', '--bogus'], ['token', 'create', '--room']]) {
      const res = await runRtcInProcess(args, {});
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /^rtc: .*(--bogus|--room)/, args.join(' '));
    }
  });

  it('rejects bad stream lists before calling anything', async () => {
    const res = await runRtcInProcess(['token', 'create', '--room', 'r', '--user', 'u', '--role', 'speaker', '--publish', 'one', '--url', 'http://127.0.0.1:9'], {});
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--publish takes comma-separated stream numbers/);
  });

  it('says which address it cannot reach', async () => {
    const port = await freeTcpPort();
    const res = await runRtcInProcess(['grant', 'verify', 'a.b.c', '--url', `http://127.0.0.1:${port}`], {});
    assert.equal(res.code, 1);
    assert.equal(res.stderr, `rtc: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`);
  });
});
