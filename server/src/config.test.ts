import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { IPV4_EMBEDDING_RANGES, LOOPBACK_RANGES, NON_UNICAST_RANGES, PRIVATE_RANGES } from './core/address.ts';
import { TEST_TLS } from '../../test/helpers/tls.ts';
import { ConfigError, DEFAULT_LISTENER_LIMITS, loadConfig, ROLE_NAMES, type Config } from './config.ts';

/** The named fields of an object. */
const pick = <T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> =>
  Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;

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
    copyFileSync(TEST_TLS.certFile, certFile);
    copyFileSync(TEST_TLS.keyFile, keyFile);
    copyFileSync(TEST_TLS.otherKeyFile, otherKeyFile);
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
    assert.deepEqual(pick(c.media, ['publicHost', 'publicPort']), { publicHost: '127.0.0.1', publicPort: undefined }, 'the address the media role listens on, as printed');
    assert.equal(c.signaling.publicUrl, undefined);
    assert.equal(c.turn, undefined);
    assert.deepEqual({ ...c.limits }, { appPerMinute: 1200, addressPerMinute: 2400 });
    assert.equal(c.logLevel, 'info');
    assert.equal(c.shutdownGraceMs, 10_000);
    assert.deepEqual(c.listeners, DEFAULT_LISTENER_LIMITS);
    assert.deepEqual(ROLE_NAMES.map((r) => c.listeners[r].maxConnections), [256, 1024, 2048, 1024]);
    assert.deepEqual(ROLE_NAMES.map((r) => c.listeners[r].maxConnectionsPerAddress), [128, 512, 128, 128]);
    for (const role of ROLE_NAMES) {
      const l = c.listeners[role];
      assert.ok(l.maxConnectionsPerAddress < l.maxConnections, `${role}: one address cannot fill the listener`);
      assert.ok(l.headersTimeoutMs <= l.requestTimeoutMs, `${role}: Node refuses a headers timeout over the request timeout`);
    }
    // the token API answers small requests sent at once: the shortest wait of the HTTP roles
    assert.deepEqual({ ...c.listeners.token }, {
      maxConnections: 1024, maxConnectionsPerAddress: 512, headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000,
    });
    assert.equal(c.admin, undefined);
    assert.deepEqual(c.rtc, {
      portRange: undefined, addresses: [], includeLoopback: true, ipv6: false, publicIp: undefined,
      // on loopback, announcing no public address: only what no peer can be at is denied
      peers: { denied: [...NON_UNICAST_RANGES], allowed: [] }, turnRelays: [],
    });
  });

  it('reads the WebRTC settings of the media role', () => {
    const c = loadConfig({
      RTC_HOST: '10.0.0.5', RTC_MEDIA_UDP_PORT_MIN: '40000', RTC_MEDIA_UDP_PORT_MAX: '40100',
      RTC_MEDIA_ICE_ADDRESSES: '10.0.0.5, fd00::5', RTC_MEDIA_ICE_IPV6: 'true', RTC_MEDIA_PUBLIC_IP: '203.0.113.7',
    });
    assert.deepEqual(c.rtc, {
      portRange: [40000, 40100], addresses: ['10.0.0.5', 'fd00::5'], includeLoopback: false, ipv6: true, publicIp: '203.0.113.7',
      // a public address announced: no loopback or private peer either
      peers: { denied: [...NON_UNICAST_RANGES, ...LOOPBACK_RANGES, ...PRIVATE_RANGES, ...IPV4_EMBEDDING_RANGES], allowed: [] }, turnRelays: [],
    });
    assert.equal(loadConfig({ RTC_MEDIA_WEBRTC: 'false' }).rtc, undefined);
  });

  it('denies peers by where the node is, takes denied and allowed peer lists, and finds the TURN relays', () => {
    const peers = (env: Record<string, string>): { denied: readonly string[]; allowed: readonly string[] } => loadConfig(env).rtc!.peers;
    // a private node (every interface, or a private ICE address) takes private peers but not loopback ones
    assert.deepEqual(peers({ RTC_HOST: '0.0.0.0' }).denied, [...NON_UNICAST_RANGES, ...LOOPBACK_RANGES]);
    assert.deepEqual(peers({ RTC_HOST: '10.0.0.5', RTC_MEDIA_ICE_ADDRESSES: '10.0.0.5' }).denied, [...NON_UNICAST_RANGES, ...LOOPBACK_RANGES]);
    // a node announcing a private address behind its NAT is private; a public ICE address is public
    assert.deepEqual(peers({ RTC_HOST: '0.0.0.0', RTC_MEDIA_PUBLIC_IP: '192.168.1.9' }).denied, [...NON_UNICAST_RANGES, ...LOOPBACK_RANGES]);
    assert.deepEqual(peers({ RTC_MEDIA_ICE_ADDRESSES: '198.51.100.4' }).denied, [...NON_UNICAST_RANGES, ...LOOPBACK_RANGES, ...PRIVATE_RANGES, ...IPV4_EMBEDDING_RANGES]);
    assert.deepEqual(peers({ RTC_MEDIA_PUBLIC_IP: '203.0.113.7', RTC_MEDIA_DENIED_PEER_IPS: '198.51.100.0/24', RTC_MEDIA_ALLOWED_PEER_IPS: '10.1.0.0/16, 127.0.0.2' }),
      { denied: [...NON_UNICAST_RANGES, ...LOOPBACK_RANGES, ...PRIVATE_RANGES, ...IPV4_EMBEDDING_RANGES, '198.51.100.0/24'], allowed: ['10.1.0.0/16', '127.0.0.2'] });
    assert.deepEqual(problemsOf({ RTC_MEDIA_DENIED_PEER_IPS: '10.0.0.0/33', RTC_MEDIA_ALLOWED_PEER_IPS: 'localhost' }), [
      'RTC_MEDIA_DENIED_PEER_IPS: "10.0.0.0/33" is not an IPv4 or IPv6 CIDR', 'RTC_MEDIA_ALLOWED_PEER_IPS: "localhost" is not an IPv4 or IPv6 CIDR']);
    // TURN relays: the IP addresses of RTC_TURN_URIS (a name is not resolved), unless RTC_TURN_RELAY_IPS lists them
    const turn = { RTC_TURN_SECRET: 's', RTC_TURN_URIS: 'turn:127.0.0.1:3478?transport=udp,turns:turn.example.com:5349,turn:[2001:db8::7]:3478' };
    assert.deepEqual(loadConfig(turn).rtc!.turnRelays, ['127.0.0.1', '2001:db8::7']);
    assert.deepEqual(loadConfig({ ...turn, RTC_TURN_RELAY_IPS: '203.0.113.0/28' }).rtc!.turnRelays, ['203.0.113.0/28']);
    assert.deepEqual(problemsOf({ RTC_TURN_RELAY_IPS: 'turn.example.com' }), ['RTC_TURN_RELAY_IPS: "turn.example.com" is not an IPv4 or IPv6 CIDR']);
  });

  it('refuses WebRTC settings that cannot work', () => {
    assert.deepEqual(problemsOf({ RTC_MEDIA_UDP_PORT_MIN: '40000' }), ['RTC_MEDIA_UDP_PORT_MIN and RTC_MEDIA_UDP_PORT_MAX must be set together']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_UDP_PORT_MIN: '40000', RTC_MEDIA_UDP_PORT_MAX: '40000' }),
      ['RTC_MEDIA_UDP_PORT_MAX must be greater than RTC_MEDIA_UDP_PORT_MIN']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_ICE_ADDRESSES: '10.0.0.1,eth0' }), ['RTC_MEDIA_ICE_ADDRESSES: "eth0" is not an IP address']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_PUBLIC_IP: 'media.example.com' }), ['RTC_MEDIA_PUBLIC_IP must be an IP address']);
    // the sockets are bound to the listed addresses: one per address family
    assert.deepEqual(problemsOf({ RTC_MEDIA_ICE_ADDRESSES: '10.0.0.5,192.168.1.9' }), ['RTC_MEDIA_ICE_ADDRESSES takes at most one IPv4 and one IPv6 address']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_WEBRTC: 'yes', RTC_MEDIA_ICE_IPV6: '1' }),
      ['RTC_MEDIA_WEBRTC must be true or false', 'RTC_MEDIA_ICE_IPV6 must be true or false']);
  });

  it('reads the media workers and their capacity, and refuses what several media processes cannot run on', () => {
    assert.deepEqual(pick(loadConfig({}).media, ['maxSessions', 'workers', 'workerIndex']), { maxSessions: 100, workers: 1, workerIndex: undefined });
    assert.equal(loadConfig({ RTC_MEDIA_WORKERS: 'auto' }).media.workers, availableParallelism());
    assert.deepEqual(pick(loadConfig({ RTC_MEDIA_WORKERS: '4', RTC_MEDIA_MAX_SESSIONS: '20' }).media, ['maxSessions', 'workers']), { maxSessions: 20, workers: 4 });
    assert.deepEqual(problemsOf({ RTC_MEDIA_WORKERS: 'many', RTC_MEDIA_MAX_SESSIONS: '0' }),
      ['RTC_MEDIA_MAX_SESSIONS must be an integer from 1 to 1000000', 'RTC_MEDIA_WORKERS must be auto or an integer from 1 to 256']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_WORKERS: '2', RTC_ROLES: 'api,token' }), ['RTC_MEDIA_WORKERS needs the media role in RTC_ROLES']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_WORKERS: '2', DATABASE_URL: 'postgres://db/rtc' }),
      ['RTC_MEDIA_WORKERS above 1 with DATABASE_URL needs REDIS_URL (or REDIS_SENTINELS): the media nodes meet there']);
    assert.equal(loadConfig({ RTC_MEDIA_WORKERS: '2', DATABASE_URL: 'postgres://db/rtc', REDIS_URL: 'redis://r:6379' }).media.workers, 2);
    assert.deepEqual(problemsOf({ RTC_MEDIA_WORKERS: '3', RTC_MEDIA_PORT: '65534' }), ['RTC_MEDIA_PORT: 3 workers need ports 65534 to 65536']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_WORKERS: '3', RTC_MEDIA_UDP_PORT_MIN: '40000', RTC_MEDIA_UDP_PORT_MAX: '40004' }),
      ['RTC_MEDIA_UDP_PORT_MIN/MAX: 3 workers need at least 6 UDP ports (they share the range)']);
    // a worker is one media node: its own checks only
    assert.equal(loadConfig({ RTC_MEDIA_WORKERS: '2', RTC_ROLES: 'media', RTC_MEDIA_WORKER_INDEX: '1' }).media.workerIndex, 1);
  });

  it('reads the relay port and node credential, and refuses a short secret without quoting it', () => {
    assert.deepEqual(loadConfig({}).media.relay, { port: 0, secret: undefined });
    const secret = 'k'.repeat(20) + 'Q'.repeat(12);
    assert.deepEqual(loadConfig({ RTC_MEDIA_RELAY_PORT: '7990', RTC_MEDIA_RELAY_SECRET: secret }).media.relay, { port: 7990, secret: Buffer.from(secret) });
    const short = 'not-long-enough';
    const problems = problemsOf({ RTC_MEDIA_RELAY_PORT: '70000', RTC_MEDIA_RELAY_SECRET: short });
    assert.deepEqual(problems, [
      'RTC_MEDIA_RELAY_PORT must be an integer from 0 to 65535',
      'RTC_MEDIA_RELAY_SECRET must be 32 to 1024 characters (for example `openssl rand -base64 32`)',
    ]);
    assert.ok(!problems.join().includes(short));
    assert.deepEqual(problemsOf({ RTC_MEDIA_RELAY_SECRET: `${secret} ${secret}` }), ['RTC_MEDIA_RELAY_SECRET must not contain spaces or line breaks']);
    assert.deepEqual(problemsOf({ RTC_MEDIA_WORKERS: '3', RTC_MEDIA_RELAY_PORT: '65534' }), ['RTC_MEDIA_RELAY_PORT: 3 workers need UDP ports 65534 to 65536']);
  });

  it('treats an empty variable as unset', () => {
    const env: Record<string, string> = {};
    for (const name of [
      'RTC_ROLES', 'RTC_HOST', 'RTC_API_PORT', 'RTC_TOKEN_PORT', 'RTC_SIGNALING_PORT', 'RTC_MEDIA_PORT', 'RTC_DATA_DIR',
      'RTC_TLS_CERT_FILE', 'RTC_TLS_KEY_FILE', 'RTC_TRUST_PROXY', 'RTC_ISSUER', 'RTC_MEDIA_PUBLIC_HOST',
      'RTC_MEDIA_PUBLIC_PORT', 'RTC_SIGNALING_PUBLIC_URL', 'RTC_TURN_SECRET', 'RTC_TURN_URIS', 'RTC_LOG_LEVEL',
      'RTC_APP_RATE_LIMIT_PER_MINUTE', 'RTC_ADDRESS_RATE_LIMIT_PER_MINUTE', 'RTC_SHUTDOWN_GRACE_MS',
      'DATABASE_URL', 'RTC_DATABASE_POOL_SIZE', 'REDIS_URL', 'RTC_API_MAX_CONNECTIONS', 'RTC_TOKEN_MAX_CONNECTIONS',
      'RTC_SIGNALING_MAX_CONNECTIONS', 'RTC_MEDIA_MAX_CONNECTIONS', 'RTC_MAX_CONNECTIONS_PER_ADDRESS',
      'RTC_HEADERS_TIMEOUT_MS', 'RTC_REQUEST_TIMEOUT_MS', 'RTC_KEEP_ALIVE_TIMEOUT_MS',
      'RTC_ADMIN_PORT', 'RTC_ADMIN_HOST', 'REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD',
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

  it('names the address the media role listens on in tokens unless RTC_MEDIA_PUBLIC_HOST says otherwise', () => {
    assert.equal(loadConfig({ RTC_HOST: '10.0.0.5' }).media.publicHost, '10.0.0.5');
    // every address: loopback reaches it from this machine; other machines need RTC_MEDIA_PUBLIC_HOST
    assert.equal(loadConfig({ RTC_HOST: '0.0.0.0' }).media.publicHost, '127.0.0.1');
    assert.equal(loadConfig({ RTC_HOST: '::' }).media.publicHost, '::1');
    assert.equal(loadConfig({ RTC_HOST: '0.0.0.0', RTC_MEDIA_PUBLIC_HOST: 'media.example.com' }).media.publicHost, 'media.example.com');
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
    assert.deepEqual(pick(c.media, ['publicHost', 'publicPort']), { publicHost: 'media.example.com', publicPort: 443 });
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

  it('reads the connection cap of each role and the one per address', () => {
    const c = loadConfig({
      RTC_API_MAX_CONNECTIONS: '10', RTC_TOKEN_MAX_CONNECTIONS: '20', RTC_SIGNALING_MAX_CONNECTIONS: '30',
      RTC_MEDIA_MAX_CONNECTIONS: '40', RTC_MAX_CONNECTIONS_PER_ADDRESS: '5',
    });
    assert.deepEqual(ROLE_NAMES.map((r) => [c.listeners[r].maxConnections, c.listeners[r].maxConnectionsPerAddress]),
      [[10, 5], [20, 5], [30, 5], [40, 5]]);
    assert.equal(c.listeners.media.headersTimeoutMs, DEFAULT_LISTENER_LIMITS.media.headersTimeoutMs);
  });

  it('applies a timeout that is set to every role', () => {
    const c = loadConfig({ RTC_HEADERS_TIMEOUT_MS: '2000', RTC_REQUEST_TIMEOUT_MS: '3000', RTC_KEEP_ALIVE_TIMEOUT_MS: '100' });
    for (const role of ROLE_NAMES) {
      assert.deepEqual({ ...c.listeners[role] }, {
        maxConnections: DEFAULT_LISTENER_LIMITS[role].maxConnections,
        maxConnectionsPerAddress: DEFAULT_LISTENER_LIMITS[role].maxConnectionsPerAddress,
        headersTimeoutMs: 2000, requestTimeoutMs: 3000, keepAliveTimeoutMs: 100,
      });
    }
  });

  it('keeps the headers timeout within the request timeout when only one of them is set', () => {
    const longHeaders = loadConfig({ RTC_HEADERS_TIMEOUT_MS: '20000' });
    assert.deepEqual(ROLE_NAMES.map((r) => longHeaders.listeners[r].requestTimeoutMs), [30_000, 20_000, 20_000, 20_000]);
    const shortRequests = loadConfig({ RTC_REQUEST_TIMEOUT_MS: '300' });
    assert.deepEqual(ROLE_NAMES.map((r) => shortRequests.listeners[r].headersTimeoutMs), [300, 300, 300, 300]);
    const longRequests = loadConfig({ RTC_REQUEST_TIMEOUT_MS: '60000' });
    assert.deepEqual(ROLE_NAMES.map((r) => longRequests.listeners[r].headersTimeoutMs), [10_000, 5_000, 10_000, 5_000]);
  });

  it('turns the admin listener on with RTC_ADMIN_PORT, on loopback unless RTC_ADMIN_HOST names another address', () => {
    assert.deepEqual({ ...loadConfig({ RTC_ADMIN_PORT: '9090' }).admin }, { host: '127.0.0.1', port: 9090 });
    assert.deepEqual({ ...loadConfig({ RTC_ADMIN_PORT: '0', RTC_ADMIN_HOST: '0.0.0.0' }).admin }, { host: '0.0.0.0', port: 0 });
  });

  const invalid: [string, Record<string, string>, RegExp][] = [
    ['an admin port over 65535', { RTC_ADMIN_PORT: '70000' }, /^RTC_ADMIN_PORT must be an integer from 0 to 65535$/],
    ['an admin host without an admin port', { RTC_ADMIN_HOST: '0.0.0.0' }, /^RTC_ADMIN_HOST needs RTC_ADMIN_PORT$/],
    ['a port that is not a number', { RTC_API_PORT: 'abc' }, /^RTC_API_PORT must be an integer from 0 to 65535$/],
    ['a port over 65535', { RTC_TOKEN_PORT: '65536' }, /^RTC_TOKEN_PORT must be an integer/],
    ['a negative port', { RTC_SIGNALING_PORT: '-1' }, /^RTC_SIGNALING_PORT must be an integer/],
    ['a fractional port', { RTC_MEDIA_PORT: '80.5' }, /^RTC_MEDIA_PORT must be an integer/],
    ['a public media port of 0', { RTC_MEDIA_PUBLIC_PORT: '0' }, /^RTC_MEDIA_PUBLIC_PORT must be an integer from 1 to 65535$/],
    ['an unknown role', { RTC_ROLES: 'api,bogus' }, /^RTC_ROLES: unknown role "bogus"$/],
    ['a role list of commas only', { RTC_ROLES: ' , ' }, /^RTC_ROLES must name at least one role$/],
    ['only the TLS certificate', { RTC_TLS_CERT_FILE: '/nonexistent/cert.pem' }, /^RTC_TLS_CERT_FILE and RTC_TLS_KEY_FILE must be set together$/],
    ['only the TLS key', { RTC_TLS_KEY_FILE: '/nonexistent/key.pem' }, /^RTC_TLS_CERT_FILE and RTC_TLS_KEY_FILE must be set together$/],
    // the key file is readable (this file): the one problem names the certificate's variable and path
    ['a TLS file that cannot be read', { RTC_TLS_CERT_FILE: '/nonexistent/cert.pem', RTC_TLS_KEY_FILE: new URL(import.meta.url).pathname },
      /^RTC_TLS_CERT_FILE: \/nonexistent\/cert\.pem cannot be read: ENOENT$/],
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
    ['both REDIS_URL and sentinels', { REDIS_URL: 'redis://cache', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'rtc' },
      /^REDIS_URL and REDIS_SENTINELS\/REDIS_SENTINEL_MASTER are two ways to name Redis: set one$/],
    ['a Redis password beside REDIS_URL', { REDIS_URL: 'redis://cache', REDIS_PASSWORD: 'pw' },
      /^REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD apply with REDIS_SENTINELS; with REDIS_URL the password is in the URL$/],
    ['a sentinel password without sentinels', { REDIS_SENTINEL_PASSWORD: 'pw' },
      /^REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD need REDIS_SENTINELS and REDIS_SENTINEL_MASTER$/],
    ['sentinels without a master name', { REDIS_SENTINELS: 's1:26379' }, /^REDIS_SENTINELS needs REDIS_SENTINEL_MASTER/],
    ['a master name without sentinels', { REDIS_SENTINEL_MASTER: 'rtc' }, /^REDIS_SENTINEL_MASTER needs REDIS_SENTINELS/],
    ['a master name with a space', { REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'my master' },
      /^REDIS_SENTINEL_MASTER must be a name of letters, digits/],
    ['a sentinel without a port', { REDIS_SENTINELS: 's1:26379,s2', REDIS_SENTINEL_MASTER: 'rtc' },
      /^REDIS_SENTINELS: "s2" is not host:port/],
    ['a sentinel port out of range', { REDIS_SENTINELS: 's1:263790', REDIS_SENTINEL_MASTER: 'rtc' },
      /^REDIS_SENTINELS: "s1:263790" is not host:port/],
    ['a sentinel list of commas', { REDIS_SENTINELS: ' , ', REDIS_SENTINEL_MASTER: 'rtc' }, /^REDIS_SENTINELS names no sentinel/],
    ['a connection cap of 0', { RTC_MEDIA_MAX_CONNECTIONS: '0' }, /^RTC_MEDIA_MAX_CONNECTIONS must be an integer from 1 to 1000000$/],
    ['a connection cap that is not a number', { RTC_TOKEN_MAX_CONNECTIONS: 'many' }, /^RTC_TOKEN_MAX_CONNECTIONS must be an integer/],
    ['a per-address cap of 0', { RTC_MAX_CONNECTIONS_PER_ADDRESS: '0' }, /^RTC_MAX_CONNECTIONS_PER_ADDRESS must be an integer from 1 to 1000000$/],
    ['a headers timeout under 100 ms', { RTC_HEADERS_TIMEOUT_MS: '50' }, /^RTC_HEADERS_TIMEOUT_MS must be an integer from 100 to 600000$/],
    ['a request timeout in seconds', { RTC_REQUEST_TIMEOUT_MS: '10s' }, /^RTC_REQUEST_TIMEOUT_MS must be an integer/],
    ['a keep-alive timeout of 0 (never)', { RTC_KEEP_ALIVE_TIMEOUT_MS: '0' }, /^RTC_KEEP_ALIVE_TIMEOUT_MS must be an integer from 100/],
    ['a headers timeout over the request timeout', { RTC_HEADERS_TIMEOUT_MS: '5000', RTC_REQUEST_TIMEOUT_MS: '4000' },
      /^RTC_HEADERS_TIMEOUT_MS must not exceed RTC_REQUEST_TIMEOUT_MS$/],
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

  it('uses the master Redis Sentinel names when REDIS_SENTINELS and REDIS_SENTINEL_MASTER are set', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(loadConfig({
      REDIS_SENTINELS: 's1.internal:26379, 10.0.0.2:26380,[::1]:26381', REDIS_SENTINEL_MASTER: 'rtc-main',
      REDIS_PASSWORD: 'redis-pw', REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
    }).redis)), {
      sentinels: [{ host: 's1.internal', port: 26379 }, { host: '10.0.0.2', port: 26380 }, { host: '::1', port: 26381 }],
      masterName: 'rtc-main', password: 'redis-pw', sentinelPassword: 'sentinel-pw',
    });
    const { redis } = loadConfig({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'mymaster' });
    assert.ok(redis && 'sentinels' in redis);
    assert.equal(redis.password, undefined);
    assert.equal(redis.sentinelPassword, undefined);
  });

  it('never quotes a Redis or sentinel password in a refusal', () => {
    const problems = problemsOf({ REDIS_SENTINELS: 'bad', REDIS_SENTINEL_MASTER: 'a b', REDIS_PASSWORD: 'pa55-w0rd', REDIS_SENTINEL_PASSWORD: 'pa55-w0rd' });
    assert.equal(problems.length, 2, problems.join('\n'));
    for (const problem of problems) assert.ok(!problem.includes('pa55-w0rd'), problem);
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
    for (const part of [c, c.ports, c.store, c.media, c.signaling, c.limits, c.roles, c.trustProxy, c.turn, c.turn?.uris,
      c.listeners, c.listeners.media]) {
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
