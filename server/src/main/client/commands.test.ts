/** The `rtc` client commands run in this process (runRtc) against the platform served in the test process. */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newLogin } from '../../../../test/helpers/customer.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { useTempDirs } from '../../../../test/helpers/grant-checks.ts';
import { runRtcInProcess } from '../../../../test/helpers/rtc-inproc.ts';

describe('rtc client commands against a running platform', () => {
  const tempDir = useTempDirs();
  let server: ServedPlatform;
  let env: Record<string, string>;
  const { email, password } = newLogin();

  before(async () => {
    server = await serveInProcess();
    env = { XDG_CONFIG_HOME: tempDir(), HOME: tempDir() };
  });
  after(async () => {
    await server.stop();
  });

  it('tightens a loose config directory to 0700 and writes session.json 0600', async () => {
    const home = { XDG_CONFIG_HOME: tempDir(), HOME: tempDir() };
    const dir = join(home.XDG_CONFIG_HOME, 'rtc');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const login = newLogin();
    const res = await runRtcInProcess(['login', '--url', server.api, '--email', login.email, '--register'], home, `${login.password}\n`);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const file = lstatSync(join(dir, 'session.json'));
    assert.ok(file.isFile() && !file.isSymbolicLink(), 'session.json is a file of its own');
    assert.equal(file.mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['session.json'], 'no temporary file is left');
  });

  it('refuses a link at session.json, to write and to read, and leaves its target alone', async () => {
    const home = { XDG_CONFIG_HOME: tempDir(), HOME: tempDir() };
    const dir = join(home.XDG_CONFIG_HOME, 'rtc');
    mkdirSync(dir, { mode: 0o700 });
    const elsewhere = join(tempDir(), 'not-the-session');
    writeFileSync(elsewhere, 'untouched\n');
    symlinkSync(elsewhere, join(dir, 'session.json'));
    const login = newLogin();
    const res = await runRtcInProcess(['login', '--url', server.api, '--email', login.email, '--register'], home, `${login.password}\n`);
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /session\.json is a symbolic link: .*remove it and run rtc login/);
    assert.ok(lstatSync(join(dir, 'session.json')).isSymbolicLink(), 'the link is left for its owner to look at');
    assert.equal(readFileSync(elsewhere, 'utf8'), 'untouched\n');
    // a link to a real session is not read either
    writeFileSync(elsewhere, JSON.stringify({ url: server.api, email: 'x@example.com', access_token: 'a', refresh_token: 'r', access_expires_at: 0 }));
    const listed = await runRtcInProcess(['projects', 'list'], home);
    assert.equal(listed.code, 1, listed.stderr);
    assert.match(listed.stderr, /session\.json is a symbolic link/);
  });

  it('refuses a config directory that belongs to another user', async (t) => {
    // only root can give a directory to another user (npm test runs as root where it installs from apt)
    if (process.getuid?.() !== 0) return t.diagnostic('not root: no directory of another user can be made');
    const home = { XDG_CONFIG_HOME: tempDir(), HOME: tempDir() };
    const dir = join(home.XDG_CONFIG_HOME, 'rtc');
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    chownSync(dir, 65534, 65534);
    const login = newLogin();
    const res = await runRtcInProcess(['login', '--url', server.api, '--email', login.email, '--register'], home, `${login.password}\n`);
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /belongs to another user: the session is not written there/);
    assert.deepEqual(readdirSync(dir), []);
    assert.equal(statSync(dir).mode & 0o777, 0o777, 'another user\'s directory is not changed');
  });

  it('logs in with the password on standard input, manages projects and credentials, issues, verifies and revokes a token', async () => {
    // --register creates the account; the password comes from standard input, never echoed
    const first = await runRtcInProcess(['login', '--url', server.api, '--email', email, '--register'], env, `${password}\n`);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /account created; logged in/);
    // a second run signs in to the existing account (RTC_PASSWORD this time)
    const again = await runRtcInProcess(['login', '--url', server.api, '--email', email, '--register', '--json'], { ...env, RTC_PASSWORD: password });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { logged_in: true, created: false, email, url: server.api });

    const file = join(env['XDG_CONFIG_HOME']!, 'rtc', 'session.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { refresh_token: string; access_token: string };
    for (const out of [first, again]) {
      assert.ok(!out.stdout.includes(stored.refresh_token) && !out.stderr.includes(stored.refresh_token));
      assert.ok(!out.stdout.includes(password) && !out.stderr.includes(password));
    }

    const created = await runRtcInProcess(['projects', 'create', '--name', 'cli app', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const project = (JSON.parse(created.stdout) as { id: string }).id;
    const listed = await runRtcInProcess(['projects', 'list'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${project}\\s+active\\s+cli app`));

    const cred = await runRtcInProcess(['credentials', 'create', '--project', project, '--name', 'backend', '--json'], env);
    assert.equal(cred.code, 0, cred.stderr);
    const { app_id: appId, app_secret: appSecret } = JSON.parse(cred.stdout) as { app_id: string; app_secret: string };
    assert.match(appSecret, /^sk_/);
    const creds = await runRtcInProcess(['credentials', 'list', '--project', project], env);
    assert.equal(creds.code, 0, creds.stderr);
    assert.match(creds.stdout, new RegExp(`${appId}\\s+active\\s+publisher,subscriber\\s+backend`));
    assert.ok(!creds.stdout.includes(appSecret), 'list never shows the App Secret');

    const appEnv = { ...env, RTC_APP_ID: appId, RTC_APP_SECRET: appSecret };
    const issued = await runRtcInProcess(['token', 'create', '--url', server.token, '--room', 'room-1', '--user', 'user-1', '--role', 'speaker',
      '--publish', '1,2', '--subscribe-room', '--ttl', '600'], appEnv);
    assert.equal(issued.code, 0, issued.stderr);
    const response = JSON.parse(issued.stdout) as { media: { grant: string; revocation_handle: string }; publish_streams: number[] };
    assert.deepEqual(response.publish_streams, [1, 2]);

    const verified = await runRtcInProcess(['grant', 'verify', response.media.grant, '--url', server.token], env);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, /^valid rtc-grant\+jwt signed by /);
    assert.match(verified.stdout, /lifetime left: (59\d|600) s/);
    assert.match(verified.stdout, /publish streams: 1,2 {2}subscribe: whole room/);
    assert.match(verified.stdout, /"aud": "rtc-media"/);

    const tampered = `${response.media.grant.slice(0, -4)}AAAA`;
    const bad = await runRtcInProcess(['grant', 'verify', tampered, '--url', server.token], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /rtc: grant verify: bad signature/);

    const revoked = await runRtcInProcess(['token', 'revoke', '--url', server.token, '--handle', response.media.revocation_handle], appEnv);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout.trim(), 'revoked');

    const rotated = await runRtcInProcess(['credentials', 'rotate', appId, '--project', project, '--json'], env);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.notEqual((JSON.parse(rotated.stdout) as { app_secret: string }).app_secret, appSecret);
    // the old secret stopped working: the API's refusal in its own words, exit code 1
    const refused = await runRtcInProcess(['token', 'create', '--url', server.token, '--room', 'r', '--user', 'u', '--role', 'speaker'], appEnv);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^rtc: invalid_credentials: /);

    const revokedCred = await runRtcInProcess(['credentials', 'revoke', appId, '--project', project], env);
    assert.equal(revokedCred.code, 0, revokedCred.stderr);
    assert.match(revokedCred.stdout, new RegExp(`${appId}\\s+revoked`));

    const out = await runRtcInProcess(['logout'], env);
    assert.equal(out.code, 0, out.stderr);
    const afterLogout = await runRtcInProcess(['projects', 'list'], env);
    assert.equal(afterLogout.code, 1);
    assert.match(afterLogout.stderr, /not logged in/);
  });

  it('takes --url on the session\'s commands and refuses one that is not the session\'s platform', async () => {
    const home = { XDG_CONFIG_HOME: tempDir(), HOME: tempDir() };
    const noUrl = await runRtcInProcess(['login', '--email', 'someone@example.com'], home, 'password\n');
    assert.equal(noUrl.code, 2, noUrl.stderr);
    assert.match(noUrl.stderr, /login: --url is required \(or set RTC_URL\)$/m);
    const login = newLogin();
    const res = await runRtcInProcess(['login', '--url', server.api, '--email', login.email, '--register'], home, `${login.password}\n`);
    assert.equal(res.code, 0, res.stderr);
    const listed = await runRtcInProcess(['projects', 'list', '--url', server.api], home);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /no projects|prj_/);
    const elsewhere = 'http://127.0.0.1:9';
    for (const args of [['projects', 'list'], ['credentials', 'list', '--project', 'prj_x'], ['logout']]) {
      const wrong = await runRtcInProcess([...args, '--url', elsewhere], home);
      assert.equal(wrong.code, 1, `${args.join(' ')}: ${wrong.stderr}`);
      assert.match(wrong.stderr, new RegExp(`the stored session is for ${server.api}, not ${elsewhere}: run rtc login --url ${elsewhere}`));
    }
    const out = await runRtcInProcess(['logout', '--url', `${server.api}/`], home);
    assert.equal(out.code, 0, out.stderr);
  });

  it('reports a wrong password in the API\'s words with exit code 1', async () => {
    const res = await runRtcInProcess(['login', '--url', server.api, '--email', email], { ...env, RTC_PASSWORD: 'not the password' });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^rtc: invalid_credentials: /);
  });

  it('reports room commands\' arguments and the API\'s answer', async () => {
    const missing = await runRtcInProcess(['rooms', 'show', '--url', server.api], { ...env, RTC_APP_ID: 'app_x', RTC_APP_SECRET: 'sk_x' });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /rtc: rooms show: ROOM is required/);
    const noAuth = await runRtcInProcess(['rooms', 'list', '--url', server.api], env);
    assert.equal(noAuth.code, 2);
    assert.match(noAuth.stderr, /--app-id and --app-secret are required/);
    const res = await runRtcInProcess(['rooms', 'end', 'room-1', '--url', server.api], { ...env, RTC_APP_ID: 'app_x', RTC_APP_SECRET: 'sk_x' });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^rtc: [a-z_]+: /);
  });
});
