import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig, ROLE_NAMES, type Config } from './config.ts';

/** The problems a ConfigError lists, or a failed assertion when loadConfig succeeds. */
function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
    return err.problems;
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let otherKeyFile: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtc-config-'));
    certFile = join(dir, 'cert.pem');
    keyFile = join(dir, 'key.pem');
    otherKeyFile = join(dir, 'other-key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', otherKeyFile], { stdio: 'ignore' });
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a default for every setting', () => {
    const c = loadConfig({});
    assert.ok(c.roles.includes('api') && c.roles.includes('token'));
    for (const role of c.roles) assert.ok(ROLE_NAMES.includes(role));
    assert.equal(c.host, '127.0.0.1');
    assert.deepEqual({ ...c.ports }, { api: 8080, token: 8081, signaling: 8082, media: 7880 });
    assert.equal(c.dataDir, resolve('data'));
    assert.deepEqual({ ...c.store }, { kind: 'sqlite', path: resolve('data', 'rtc.sqlite') });
    assert.equal(c.tls, undefined);
    assert.deepEqual(c.trustProxy, []);
    assert.equal(c.issuer, 'rtc-platform');
    assert.deepEqual({ ...c.media }, { publicHost: 'localhost', publicPort: undefined });
    assert.equal(c.signaling.publicUrl, undefined);
    assert.equal(c.turn, undefined);
    assert.deepEqual({ ...c.limits }, { appPerMinute: 1200, addressPerMinute: 2400 });
    assert.equal(c.logLevel, 'info');
    assert.equal(c.shutdownGraceMs, 10_000);
  });

  it('treats an empty variable as unset', () => {
    const env: Record<string, string> = {};
    for (const name of [
      'RTC_ROLES', 'RTC_HOST', 'RTC_API_PORT', 'RTC_TOKEN_PORT', 'RTC_SIGNALING_PORT', 'RTC_MEDIA_PORT', 'RTC_DATA_DIR',
      'RTC_TLS_CERT_FILE', 'RTC_TLS_KEY_FILE', 'RTC_TRUST_PROXY', 'RTC_ISSUER', 'RTC_MEDIA_PUBLIC_HOST',
      'RTC_MEDIA_PUBLIC_PORT', 'RTC_SIGNALING_PUBLIC_URL', 'RTC_TURN_SECRET', 'RTC_TURN_URIS', 'RTC_LOG_LEVEL',
      'RTC_APP_RATE_LIMIT_PER_MINUTE', 'RTC_ADDRESS_RATE_LIMIT_PER_MINUTE', 'RTC_SHUTDOWN_GRACE_MS',
      'DATABASE_URL', 'RTC_DATABASE_POOL_SIZE', 'REDIS_URL',
    ]) env[name] = '';
    assert.deepEqual(loadConfig(env), loadConfig({}));
  });

  it('reads the roles, bind host, ports and data directory', () => {
    const c = loadConfig({
      RTC_ROLES: ' token , api ', RTC_HOST: '0.0.0.0', RTC_API_PORT: '0', RTC_TOKEN_PORT: '9001',
      RTC_SIGNALING_PORT: '9002', RTC_MEDIA_PORT: '65535', RTC_DATA_DIR: '/var/lib/rtc',
    });
    assert.deepEqual(c.roles, ['token', 'api']);
    assert.equal(c.host, '0.0.0.0');
    assert.deepEqual({ ...c.ports }, { api: 0, token: 9001, signaling: 9002, media: 65535 });
    assert.equal(c.dataDir, '/var/lib/rtc');
    assert.deepEqual({ ...c.store }, { kind: 'sqlite', path: '/var/lib/rtc/rtc.sqlite' });
  });

  it('names each role once, however often RTC_ROLES lists it', () => {
    assert.deepEqual(loadConfig({ RTC_ROLES: 'api,token,api' }).roles, ['api', 'token']);
  });

  it('reads the TLS certificate and key files', () => {
    const c = loadConfig({ RTC_TLS_CERT_FILE: certFile, RTC_TLS_KEY_FILE: keyFile });
    assert.deepEqual(c.tls?.cert, readFileSync(certFile));
    assert.deepEqual(c.tls?.key, readFileSync(keyFile));
  });

  it('reads the trusted proxies, issuer, public media address and signaling URL', () => {
    const c = loadConfig({
      RTC_TRUST_PROXY: '10.0.0.0/8, 2001:db8::/32,192.0.2.7', RTC_ISSUER: 'https://rtc.example.com',
      RTC_MEDIA_PUBLIC_HOST: 'media.example.com', RTC_MEDIA_PUBLIC_PORT: '443',
      RTC_SIGNALING_PUBLIC_URL: 'https://signal.example.com/base',
    });
    assert.deepEqual(c.trustProxy, ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
    assert.equal(c.issuer, 'https://rtc.example.com');
    assert.deepEqual({ ...c.media }, { publicHost: 'media.example.com', publicPort: 443 });
    assert.equal(c.signaling.publicUrl, 'https://signal.example.com/base');
  });

  it('reads the TURN secret and URIs, the rate limits, log level and shutdown grace', () => {
    const c = loadConfig({
      RTC_TURN_SECRET: 'shared', RTC_TURN_URIS: 'turn:turn.example.com:3478?transport=udp, turns:turn.example.com:443',
      RTC_APP_RATE_LIMIT_PER_MINUTE: '10', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '20', RTC_LOG_LEVEL: 'trace',
      RTC_SHUTDOWN_GRACE_MS: '0',
    });
    assert.deepEqual(c.turn && { secret: c.turn.secret, uris: [...c.turn.uris] },
      { secret: 'shared', uris: ['turn:turn.example.com:3478?transport=udp', 'turns:turn.example.com:443'] });
    assert.deepEqual({ ...c.limits }, { appPerMinute: 10, addressPerMinute: 20 });
    assert.equal(c.logLevel, 'trace');
    assert.equal(c.shutdownGraceMs, 0);
  });

  const invalid: [string, Record<string, string>, RegExp][] = [
    ['a port that is not a number', { RTC_API_PORT: 'abc' }, /^RTC_API_PORT must be an integer from 0 to 65535$/],
    ['a port over 65535', { RTC_TOKEN_PORT: '65536' }, /^RTC_TOKEN_PORT must be an integer/],
    ['a negative port', { RTC_SIGNALING_PORT: '-1' }, /^RTC_SIGNALING_PORT must be an integer/],
    ['a fractional port', { RTC_MEDIA_PORT: '80.5' }, /^RTC_MEDIA_PORT must be an integer/],
    ['a public media port of 0', { RTC_MEDIA_PUBLIC_PORT: '0' }, /^RTC_MEDIA_PUBLIC_PORT must be an integer from 1 to 65535$/],
    ['an unknown role', { RTC_ROLES: 'api,bogus' }, /^RTC_ROLES: unknown role "bogus"$/],
    ['a role list of commas only', { RTC_ROLES: ' , ' }, /^RTC_ROLES must name at least one role$/],
    ['only the TLS certificate', { RTC_TLS_CERT_FILE: '/nonexistent/cert.pem' }, /^RTC_TLS_CERT_FILE and RTC_TLS_KEY_FILE must be set together$/],
    ['only the TLS key', { RTC_TLS_KEY_FILE: '/nonexistent/key.pem' }, /^RTC_TLS_CERT_FILE and RTC_TLS_KEY_FILE must be set together$/],
    ['TLS files that cannot be read', { RTC_TLS_CERT_FILE: '/nonexistent/cert.pem', RTC_TLS_KEY_FILE: '/nonexistent/key.pem' }, /cannot be read: ENOENT/],
    ['a trusted proxy that is not a CIDR', { RTC_TRUST_PROXY: '10.0.0.0/8,nonsense' }, /^RTC_TRUST_PROXY: "nonsense" is not an IPv4 or IPv6 CIDR$/],
    ['an unknown log level', { RTC_LOG_LEVEL: 'verbose' }, /^RTC_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent$/],
    ['a signaling URL that is not http(s)', { RTC_SIGNALING_PUBLIC_URL: 'ftp://x' }, /^RTC_SIGNALING_PUBLIC_URL must be an http\(s\) URL$/],
    ['a TURN secret without URIs', { RTC_TURN_SECRET: 's' }, /^RTC_TURN_SECRET and RTC_TURN_URIS must be set together$/],
    ['TURN URIs without a secret', { RTC_TURN_URIS: 'turn:x' }, /^RTC_TURN_SECRET and RTC_TURN_URIS must be set together$/],
    ['a TURN URI of another scheme', { RTC_TURN_SECRET: 's', RTC_TURN_URIS: 'stun:x' }, /^RTC_TURN_URIS: "stun:x" is not a turn: or turns: URI$/],
    ['a rate limit of 0', { RTC_APP_RATE_LIMIT_PER_MINUTE: '0' }, /^RTC_APP_RATE_LIMIT_PER_MINUTE must be an integer from 1/],
    ['a shutdown grace that is not a number', { RTC_SHUTDOWN_GRACE_MS: '5s' }, /^RTC_SHUTDOWN_GRACE_MS must be an integer/],
    ['a database URL of another scheme', { DATABASE_URL: 'mysql://rtc:pw@db/rtc' },
      /^DATABASE_URL: "mysql:\/\/rtc:\*\*\*@db\/rtc" is not a postgres:\/\/ or postgresql:\/\/ URL$/],
    ['a database URL that is not a URL', { DATABASE_URL: 'db.internal/rtc' }, /^DATABASE_URL is not a URL/],
    ['a database URL without a database', { DATABASE_URL: 'postgres://rtc@db:5432' }, /^DATABASE_URL: .* names no database$/],
    ['a database pool of 0', { DATABASE_URL: 'postgres://db/rtc', RTC_DATABASE_POOL_SIZE: '0' },
      /^RTC_DATABASE_POOL_SIZE must be an integer from 1 to 1000$/],
    ['a Redis URL of another scheme', { REDIS_URL: 'http://:pw@cache:6379' }, /^REDIS_URL: "http:\/\/:\*\*\*@cache:6379\/" is not a redis:\/\/ or rediss:\/\/ URL$/],
    ['a Redis URL that is not a URL', { REDIS_URL: 'cache:6379' }, /^REDIS_URL: .* is not a redis:\/\/ or rediss:\/\/ URL$/],
    ['a Redis URL whose database is not a number', { REDIS_URL: 'redis://cache/rtc' }, /^REDIS_URL: .* names a database that is not a number$/],
  ];
  for (const [what, env, problem] of invalid) {
    it(`refuses ${what}`, () => {
      const problems = problemsOf(env);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0] ?? '', problem);
    });
  }

  it('uses PostgreSQL when DATABASE_URL is a postgres:// or postgresql:// URL', () => {
    assert.deepEqual({ ...loadConfig({ DATABASE_URL: 'postgres://rtc:pw@db.internal:5432/rtc' }).store },
      { kind: 'postgres', url: 'postgres://rtc:pw@db.internal:5432/rtc', poolSize: 10 });
    assert.deepEqual({ ...loadConfig({ DATABASE_URL: 'postgresql:///rtc?host=/run/postgresql', RTC_DATABASE_POOL_SIZE: '25' }).store },
      { kind: 'postgres', url: 'postgresql:///rtc?host=/run/postgresql', poolSize: 25 });
  });

  it('uses Redis when REDIS_URL is a redis:// or rediss:// URL', () => {
    assert.equal(loadConfig({}).redis, undefined);
    assert.deepEqual({ ...loadConfig({ REDIS_URL: 'redis://:pw@cache.internal:6379/2' }).redis }, { url: 'redis://:pw@cache.internal:6379/2' });
    assert.deepEqual({ ...loadConfig({ REDIS_URL: 'rediss://cache.internal' }).redis }, { url: 'rediss://cache.internal' });
  });

  it('never quotes the password of a refused REDIS_URL', () => {
    for (const url of ['http://u:pa55-w0rd@cache', 'redis://u:pa55-w0rd@cache/x', 'redis://u:pa55-w0rd@cache:99999']) {
      const problems = problemsOf({ REDIS_URL: url });
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.ok(!(problems[0] ?? '').includes('pa55-w0rd'), problems[0]);
    }
  });

  it('never quotes the password of a refused DATABASE_URL', () => {
    for (const url of ['mysql://rtc:pa55-w0rd@db/rtc', 'postgres://rtc:pa55-w0rd@db', 'postgres://rtc:pa55-w0rd@db:99999/rtc',
      'postgres://rtc:pa55-w0rd@ db/rtc']) {
      const problems = problemsOf({ DATABASE_URL: url });
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0] ?? '', /^DATABASE_URL/);
      assert.ok(!(problems[0] ?? '').includes('pa55-w0rd'), problems[0]);
    }
  });

  it('refuses TLS files that are not a certificate and its key', () => {
    const notPem = join(dir, 'not.pem');
    writeFileSync(notPem, 'not a certificate\n');
    for (const env of [
      { RTC_TLS_CERT_FILE: notPem, RTC_TLS_KEY_FILE: keyFile },
      { RTC_TLS_CERT_FILE: certFile, RTC_TLS_KEY_FILE: notPem },
      { RTC_TLS_CERT_FILE: certFile, RTC_TLS_KEY_FILE: otherKeyFile },
    ]) {
      const problems = problemsOf(env);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0] ?? '', /^RTC_TLS_CERT_FILE\/RTC_TLS_KEY_FILE/);
      assert.ok(!(problems[0] ?? '').includes('PRIVATE KEY'), 'the key is echoed');
    }
  });

  it('reads the webhook settings, and refuses a CA file that is not a certificate', () => {
    assert.deepEqual({ ...loadConfig({}).webhooks }, { allowPrivate: false, ca: undefined, retryBaseMs: 5000, timeoutMs: 10_000 });
    const c = loadConfig({
      RTC_WEBHOOK_ALLOW_PRIVATE: 'true', RTC_WEBHOOK_CA_FILE: certFile, RTC_WEBHOOK_RETRY_BASE_MS: '100', RTC_WEBHOOK_TIMEOUT_MS: '2000',
    });
    assert.deepEqual({ ...c.webhooks }, { allowPrivate: true, ca: readFileSync(certFile), retryBaseMs: 100, timeoutMs: 2000 });
    assert.match(problemsOf({ RTC_WEBHOOK_ALLOW_PRIVATE: 'yes' })[0] ?? '', /^RTC_WEBHOOK_ALLOW_PRIVATE must be true or false/);
    assert.match(problemsOf({ RTC_WEBHOOK_CA_FILE: keyFile })[0] ?? '', /^RTC_WEBHOOK_CA_FILE must hold a PEM certificate/);
    assert.match(problemsOf({ RTC_WEBHOOK_CA_FILE: join(dir, 'missing.pem') })[0] ?? '', /^RTC_WEBHOOK_CA_FILE cannot be read/);
    assert.match(problemsOf({ RTC_WEBHOOK_RETRY_BASE_MS: '0' })[0] ?? '', /^RTC_WEBHOOK_RETRY_BASE_MS must be an integer/);
    assert.deepEqual(loadConfig({ RTC_WEBHOOK_ALLOW_PRIVATE: '', RTC_WEBHOOK_CA_FILE: '', RTC_WEBHOOK_RETRY_BASE_MS: '', RTC_WEBHOOK_TIMEOUT_MS: '' }),
      loadConfig({}));
  });

  it('reports every problem at once, each named in the error message', () => {
    let caught: unknown;
    try {
      loadConfig({
        RTC_API_PORT: 'abc', RTC_TRUST_PROXY: 'nonsense', RTC_TLS_CERT_FILE: certFile, RTC_LOG_LEVEL: 'loud',
        RTC_ROLES: 'api,nope', RTC_SHUTDOWN_GRACE_MS: '-5',
      });
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof ConfigError);
    assert.equal(caught.name, 'ConfigError');
    assert.equal(caught.problems.length, 6, caught.problems.join('\n'));
    for (const name of ['RTC_API_PORT', 'RTC_TRUST_PROXY', 'RTC_TLS_CERT_FILE', 'RTC_LOG_LEVEL', 'RTC_ROLES', 'RTC_SHUTDOWN_GRACE_MS']) {
      assert.ok(caught.problems.some((p) => p.startsWith(name)), `${name} is not reported`);
      assert.ok(caught.message.includes(name), `${name} is not in the message`);
    }
  });

  it('returns a deeply frozen object', () => {
    const c: Config = loadConfig({ RTC_TRUST_PROXY: '10.0.0.0/8', RTC_TURN_SECRET: 's', RTC_TURN_URIS: 'turn:x' });
    for (const part of [c, c.ports, c.store, c.media, c.signaling, c.limits, c.roles, c.trustProxy, c.turn, c.turn?.uris]) {
      assert.ok(Object.isFrozen(part));
    }
    assert.throws(() => { (c as { host: string }).host = '0.0.0.0'; }, TypeError);
    assert.throws(() => { (c.ports as { api: number }).api = 1; }, TypeError);
    assert.throws(() => { (c.trustProxy as string[]).push('0.0.0.0/0'); }, TypeError);
    assert.equal(c.host, '127.0.0.1');
  });

  it('does not read process.env', () => {
    const saved = process.env['RTC_API_PORT'];
    process.env['RTC_API_PORT'] = '1234';
    try {
      assert.equal(loadConfig({}).ports.api, 8080);
    } finally {
      if (saved === undefined) delete process.env['RTC_API_PORT'];
      else process.env['RTC_API_PORT'] = saved;
    }
  });
});
