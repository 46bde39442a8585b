import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { parseCidr } from './core/address.ts';
import { rtcOptions, type RtcOptions } from './config-rtc.ts';
import { mediaWorkerOptions, type MediaWorkerOptions } from './config-workers.ts';
import { relayOptions, type RelayOptions } from './config-relay.ts';
import { deepFreeze } from './core/freeze.ts';
import type { RedisTarget } from './redis/client.ts';
import { redisTarget } from './redis/config.ts';
import { ADDRESS_REQUESTS_PER_MINUTE, APP_REQUESTS_PER_MINUTE } from '@rtc/protocol';

export const ROLE_NAMES = ['api', 'token', 'signaling', 'media'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/** How the media role's WebRTC endpoint gathers its candidates (docs/operations/configuration.md, "WebRTC"). */
export type { RtcOptions };

/**
 * Every variable `loadConfig` reads (docs/operations/configuration.md): what `rtc serve --help` lists.
 * `loadConfig` can look up no other name (`KnownEnv`), so a variable it reads is listed here or the
 * build fails.
 */
export const SERVE_VARIABLES = [
  'DATABASE_URL', 'REDIS_URL', 'RTC_ROLES', 'RTC_HOST', 'RTC_API_PORT', 'RTC_TOKEN_PORT', 'RTC_SIGNALING_PORT',
  'RTC_MEDIA_PORT', 'RTC_DATA_DIR', 'RTC_ISSUER', 'RTC_LOG_LEVEL', 'RTC_TLS_CERT_FILE', 'RTC_TLS_KEY_FILE',
  'RTC_TRUST_PROXY', 'RTC_ADMIN_HOST', 'RTC_ADMIN_PORT', 'RTC_DATABASE_POOL_SIZE', 'RTC_APP_RATE_LIMIT_PER_MINUTE',
  'RTC_ADDRESS_RATE_LIMIT_PER_MINUTE', 'RTC_MAX_CONNECTIONS_PER_ADDRESS', 'RTC_API_MAX_CONNECTIONS',
  'RTC_TOKEN_MAX_CONNECTIONS', 'RTC_SIGNALING_MAX_CONNECTIONS', 'RTC_MEDIA_MAX_CONNECTIONS',
  'RTC_HEADERS_TIMEOUT_MS', 'RTC_REQUEST_TIMEOUT_MS', 'RTC_KEEP_ALIVE_TIMEOUT_MS', 'RTC_SHUTDOWN_GRACE_MS',
  'RTC_SIGNALING_PUBLIC_URL', 'RTC_MEDIA_PUBLIC_HOST', 'RTC_MEDIA_PUBLIC_PORT', 'RTC_MEDIA_WEBRTC',
  'RTC_MEDIA_ICE_ADDRESSES', 'RTC_MEDIA_ICE_IPV6', 'RTC_MEDIA_PUBLIC_IP', 'RTC_MEDIA_UDP_PORT_MIN', 'RTC_MEDIA_UDP_PORT_MAX',
  'RTC_MEDIA_DENIED_PEER_IPS', 'RTC_MEDIA_ALLOWED_PEER_IPS', 'RTC_TURN_SECRET', 'RTC_TURN_URIS', 'RTC_TURN_RELAY_IPS', 'RTC_WEBHOOK_TIMEOUT_MS', 'RTC_WEBHOOK_RETRY_BASE_MS',
  'RTC_WEBHOOK_ALLOW_PRIVATE', 'RTC_WEBHOOK_CA_FILE', 'REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER', 'REDIS_PASSWORD',
  'REDIS_SENTINEL_PASSWORD', 'RTC_MEDIA_MAX_SESSIONS', 'RTC_MEDIA_WORKERS', 'RTC_MEDIA_WORKER_INDEX',
  'RTC_MEDIA_RELAY_PORT', 'RTC_MEDIA_RELAY_SECRET',
] as const;
export type ServeVariable = (typeof SERVE_VARIABLES)[number];
/** The environment as `loadConfig` sees it: only the variables it lists. */
export type KnownEnv = Readonly<Partial<Record<ServeVariable, string>>>;
export type ReadInt = (name: ServeVariable, fallback: number, min: number, max: number) => number;

export interface Config {
  /** Roles this process serves. */
  readonly roles: readonly RoleName[];
  /** Bind address of every role. */
  readonly host: string;
  readonly ports: Readonly<Record<RoleName, number>>;
  /**
   * The admin listener of `/metrics`, `/ready` and `/health` (docs/operations/metrics.md), plain HTTP
   * on loopback unless `RTC_ADMIN_HOST` says otherwise; undefined while `RTC_ADMIN_PORT` is unset.
   */
  readonly admin: { readonly host: string; readonly port: number } | undefined;
  readonly dataDir: string;
  /** SQLite in the data directory, or PostgreSQL when `DATABASE_URL` is set (docs/operations/configuration.md). */
  readonly store:
    | { readonly kind: 'sqlite'; readonly path: string }
    | { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number };
  /**
   * Redis of a cluster (`REDIS_URL`, or the master Redis Sentinel names: `REDIS_SENTINELS`): rate
   * limits, the failed-authentication block and the event bus count and reach across every process
   * (docs/operations/scale-out.md). Undefined: in-process.
   */
  readonly redis: RedisTarget | undefined;
  readonly tls: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** CIDRs of reverse proxies whose X-Forwarded-For is believed. */
  readonly trustProxy: readonly string[];
  /** `iss` of every grant. */
  readonly issuer: string;
  /** Where apps reach the media role (`media.sfu_host`/`sfu_port`); the port defaults to the bound one. */
  readonly media: {
    readonly publicHost: string;
    readonly publicPort: number | undefined;
    /** Relay links to other media nodes (docs/operations/configuration.md, "Relay between media nodes"). */
    readonly relay: RelayOptions;
  } & MediaWorkerOptions;
  /**
   * WebRTC media of the media role (docs/operations/configuration.md, "WebRTC"): where it gathers
   * ICE candidates and which address it announces; undefined with `RTC_MEDIA_WEBRTC=false`.
   */
  readonly rtc: RtcOptions | undefined;
  /** `signaling.url` of token responses; defaults to the bound signaling role of this process. */
  readonly signaling: { readonly publicUrl: string | undefined };
  /** TURN REST API credentials (coturn use-auth-secret); undefined: `turn: true` gets 502. */
  readonly turn: { readonly secret: string; readonly uris: readonly string[] } | undefined;
  readonly limits: { readonly appPerMinute: number; readonly addressPerMinute: number };
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly shutdownGraceMs: number;
  /** Connection caps and HTTP timeouts of each role's listener (docs/operations/configuration.md, "Connections and timeouts"). */
  readonly listeners: Readonly<Record<RoleName, ListenerLimits>>;
  /** Webhook delivery (docs/reference/webhooks.md, docs/operations/configuration.md "Webhooks"). */
  readonly webhooks: {
    /** Endpoints on loopback, private and link-local addresses are accepted (development and tests only). */
    readonly allowPrivate: boolean;
    /** A PEM CA trusted for receivers besides the system's. */
    readonly ca: Buffer | undefined;
    /** The first retry's wait; each next one doubles (capped at an hour). */
    readonly retryBaseMs: number;
    /** One attempt's limit. */
    readonly timeoutMs: number;
  };
}

/** What one role's listener admits, and how long it waits for a client. */
export interface ListenerLimits {
  /** Connections open at once on the listener; one more is closed at accept. */
  readonly maxConnections: number;
  /** Connections open at once from one TCP peer address (a trusted proxy excepted); one more is closed at accept. */
  readonly maxConnectionsPerAddress: number;
  /**
   * Time a connection has to send the complete headers of a request (on the media port: the
   * WebSocket upgrade request), from when it opens or its previous response ended; with TLS the
   * handshake has the same time before it.
   */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body; a response that streams afterwards (SSE) is not limited. */
  readonly requestTimeoutMs: number;
  /** How long a keep-alive connection may stay idle between requests. */
  readonly keepAliveTimeoutMs: number;
}

/**
 * Per role, sized for what its clients do (docs/operations/configuration.md): the token API answers
 * server-side callers that send a small request at once, a busy backend over many connections from
 * one address (so half the listener per address); the api serves the console and the token API;
 * signaling holds one event stream and a keep-alive connection per participant, browsers with a
 * few connections each; on the media port only the WebSocket upgrade is HTTP, and the media
 * handshake (5 s) follows it.
 */
export const DEFAULT_LISTENER_LIMITS: Readonly<Record<RoleName, ListenerLimits>> = deepFreeze({
  api: { maxConnections: 256, maxConnectionsPerAddress: 128, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 },
  token: { maxConnections: 1024, maxConnectionsPerAddress: 512, headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 },
  signaling: { maxConnections: 2048, maxConnectionsPerAddress: 128, headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 10_000 },
  media: { maxConnections: 1024, maxConnectionsPerAddress: 128, headersTimeoutMs: 5_000, requestTimeoutMs: 5_000, keepAliveTimeoutMs: 1_000 },
});

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_PORTS: Record<RoleName, number> = { api: 8080, token: 8081, signaling: 8082, media: 7880 };
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
// roles that exist in this build; the others are refused with a clear message
const AVAILABLE_ROLES: readonly RoleName[] = ['api', 'token', 'signaling', 'media'];
export const DEFAULT_ROLES: readonly RoleName[] = AVAILABLE_ROLES;
const DEFAULT_DATABASE_POOL_SIZE = 10;

/** Reads and validates every `RTC_*` variable once, reports every problem, and freezes the result. */
export function loadConfig(environment: Env): Config {
  const env: KnownEnv = environment;
  const problems: string[] = [];

  const int: ReadInt = (name, fallback, min, max) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return Number(raw);
  };

  // an empty variable means "unset", like every other one; a role named twice is served once
  const roles = [...new Set((env['RTC_ROLES'] || DEFAULT_ROLES.join(',')).split(',').map((r) => r.trim()).filter(Boolean))];
  for (const role of roles) {
    if (!(ROLE_NAMES as readonly string[]).includes(role)) problems.push(`RTC_ROLES: unknown role ${JSON.stringify(role)}`);
    else if (!AVAILABLE_ROLES.includes(role as RoleName)) problems.push(`RTC_ROLES: role ${role} is not available in this build`);
  }
  if (roles.length === 0) problems.push('RTC_ROLES must name at least one role');

  const ports = {
    api: int('RTC_API_PORT', DEFAULT_PORTS.api, 0, 65535),
    token: int('RTC_TOKEN_PORT', DEFAULT_PORTS.token, 0, 65535),
    signaling: int('RTC_SIGNALING_PORT', DEFAULT_PORTS.signaling, 0, 65535),
    media: int('RTC_MEDIA_PORT', DEFAULT_PORTS.media, 0, 65535),
  };

  const adminHost = env['RTC_ADMIN_HOST'] || undefined;
  const adminPort = env['RTC_ADMIN_PORT'] ? int('RTC_ADMIN_PORT', 0, 0, 65535) : undefined;
  if (adminHost !== undefined && adminPort === undefined) problems.push('RTC_ADMIN_HOST needs RTC_ADMIN_PORT');

  const dataDir = resolve(env['RTC_DATA_DIR'] || './data');
  const databaseUrl = env['DATABASE_URL'] || undefined;
  if (databaseUrl !== undefined) {
    const problem = databaseUrlProblem(databaseUrl);
    if (problem) problems.push(problem);
  }
  const poolSize = int('RTC_DATABASE_POOL_SIZE', DEFAULT_DATABASE_POOL_SIZE, 1, 1000);
  const redis = redisTarget(env, problems);

  let tls: Config['tls'];
  const certFile = env['RTC_TLS_CERT_FILE'];
  const keyFile = env['RTC_TLS_KEY_FILE'];
  if (Boolean(certFile) !== Boolean(keyFile)) {
    problems.push('RTC_TLS_CERT_FILE and RTC_TLS_KEY_FILE must be set together');
  } else if (certFile && keyFile) {
    const read = (variable: string, path: string): Buffer | undefined => {
      try {
        return readFileSync(path);
      } catch (err) {
        problems.push(`${variable}: ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
        return undefined;
      }
    };
    const cert = read('RTC_TLS_CERT_FILE', certFile);
    const key = read('RTC_TLS_KEY_FILE', keyFile);
    if (cert && key) tls = { cert, key };
    // checked here, so a bad pair is a listed problem rather than a failure to listen
    if (tls && !isKeyPair(tls.cert, tls.key)) {
      problems.push('RTC_TLS_CERT_FILE/RTC_TLS_KEY_FILE must hold a PEM certificate and its private key');
    }
  }

  const trustProxy = (env['RTC_TRUST_PROXY'] ?? '').split(',').map((c) => c.trim()).filter(Boolean);
  for (const cidr of trustProxy) {
    if (!parseCidr(cidr)) problems.push(`RTC_TRUST_PROXY: ${JSON.stringify(cidr)} is not an IPv4 or IPv6 CIDR`);
  }

  const logLevel = env['RTC_LOG_LEVEL'] || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) problems.push(`RTC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const publicPort = env['RTC_MEDIA_PUBLIC_PORT'] ? int('RTC_MEDIA_PUBLIC_PORT', 0, 1, 65535) : undefined;

  const signalingUrl = env['RTC_SIGNALING_PUBLIC_URL'] || undefined;
  if (signalingUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(signalingUrl)) {
    problems.push('RTC_SIGNALING_PUBLIC_URL must be an http(s) URL');
  }

  let turn: Config['turn'];
  const turnSecret = env['RTC_TURN_SECRET'];
  const turnUris = (env['RTC_TURN_URIS'] ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  if (turnSecret && turnUris.length > 0) {
    for (const uri of turnUris) {
      if (!/^turns?:[^\s]+$/.test(uri)) problems.push(`RTC_TURN_URIS: ${JSON.stringify(uri)} is not a turn: or turns: URI`);
    }
    turn = { secret: turnSecret, uris: turnUris };
  } else if (turnSecret || turnUris.length > 0) {
    problems.push('RTC_TURN_SECRET and RTC_TURN_URIS must be set together');
  }

  const host = env['RTC_HOST'] || '127.0.0.1';
  const rtc = rtcOptions(env, host, turnUris, int, problems);
  const workers = mediaWorkerOptions(env, int, problems, {
    servesMedia: roles.includes('media'), postgresWithoutRedis: databaseUrl !== undefined && redis === undefined,
    mediaPort: ports.media, udpPorts: rtc?.portRange && rtc.portRange[1] - rtc.portRange[0] + 1,
  });
  const relay = relayOptions(env, int, problems, workers.workerIndex === undefined ? workers.workers : 1);
  const listeners = listenerLimits(int, problems);
  const allowPrivate = env['RTC_WEBHOOK_ALLOW_PRIVATE'] || 'false';
  if (allowPrivate !== 'true' && allowPrivate !== 'false') problems.push('RTC_WEBHOOK_ALLOW_PRIVATE must be true or false');
  let webhookCa: Buffer | undefined;
  const caFile = env['RTC_WEBHOOK_CA_FILE'];
  if (caFile) {
    try {
      webhookCa = readFileSync(caFile);
    } catch (err) {
      problems.push(`RTC_WEBHOOK_CA_FILE cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    if (webhookCa && !isCertificate(webhookCa)) {
      webhookCa = undefined;
      problems.push('RTC_WEBHOOK_CA_FILE must hold a PEM certificate');
    }
  }

  const config: Config = {
    roles: roles as RoleName[],
    host,
    ports,
    admin: adminPort !== undefined ? { host: adminHost ?? '127.0.0.1', port: adminPort } : undefined,
    dataDir,
    store: databaseUrl !== undefined
      ? { kind: 'postgres', url: databaseUrl, poolSize }
      : { kind: 'sqlite', path: resolve(dataDir, 'rtc.sqlite') },
    redis,
    tls,
    trustProxy,
    issuer: env['RTC_ISSUER'] || 'rtc-platform',
    media: { publicHost: env['RTC_MEDIA_PUBLIC_HOST'] || reachableHost(host), publicPort, relay, ...workers },
    rtc,
    signaling: { publicUrl: signalingUrl },
    turn,
    limits: {
      appPerMinute: int('RTC_APP_RATE_LIMIT_PER_MINUTE', APP_REQUESTS_PER_MINUTE, 1, 100_000_000),
      addressPerMinute: int('RTC_ADDRESS_RATE_LIMIT_PER_MINUTE', ADDRESS_REQUESTS_PER_MINUTE, 1, 100_000_000),
    },
    logLevel: logLevel as Config['logLevel'],
    shutdownGraceMs: int('RTC_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    listeners,
    webhooks: {
      allowPrivate: allowPrivate === 'true',
      ca: webhookCa,
      retryBaseMs: int('RTC_WEBHOOK_RETRY_BASE_MS', 5000, 1, 3_600_000),
      timeoutMs: int('RTC_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

const MAX_CONNECTIONS_VARIABLES: Readonly<Record<RoleName, ServeVariable>> = {
  api: 'RTC_API_MAX_CONNECTIONS',
  token: 'RTC_TOKEN_MAX_CONNECTIONS',
  signaling: 'RTC_SIGNALING_MAX_CONNECTIONS',
  media: 'RTC_MEDIA_MAX_CONNECTIONS',
};
const MAX_CONNECTIONS = 1_000_000;
const MIN_TIMEOUT_MS = 100;
const MAX_TIMEOUT_MS = 600_000;

/**
 * Each role's listener limits: the caps per role, and a per-address cap and timeouts that, when
 * set, apply to every role (unset, each role keeps its default). A headers timeout set alone lifts
 * a smaller default request timeout to it, a request timeout set alone lowers a larger default
 * headers timeout (Node refuses a headers timeout over the request timeout).
 */
function listenerLimits(int: ReadInt, problems: string[]): Record<RoleName, ListenerLimits> {
  // unset (or invalid, then reported): undefined, and each role keeps its default
  const optional = (name: ServeVariable, min: number, max: number): number | undefined => {
    const value = int(name, -1, min, max);
    return value === -1 ? undefined : value;
  };
  const perAddress = optional('RTC_MAX_CONNECTIONS_PER_ADDRESS', 1, MAX_CONNECTIONS);
  const headers = optional('RTC_HEADERS_TIMEOUT_MS', MIN_TIMEOUT_MS, MAX_TIMEOUT_MS);
  const request = optional('RTC_REQUEST_TIMEOUT_MS', MIN_TIMEOUT_MS, MAX_TIMEOUT_MS);
  const keepAlive = optional('RTC_KEEP_ALIVE_TIMEOUT_MS', MIN_TIMEOUT_MS, MAX_TIMEOUT_MS);
  if (headers !== undefined && request !== undefined && headers > request) {
    problems.push('RTC_HEADERS_TIMEOUT_MS must not exceed RTC_REQUEST_TIMEOUT_MS');
  }
  const limits = {} as Record<RoleName, ListenerLimits>;
  for (const role of ROLE_NAMES) {
    const d = DEFAULT_LISTENER_LIMITS[role];
    limits[role] = {
      maxConnections: int(MAX_CONNECTIONS_VARIABLES[role], d.maxConnections, 1, MAX_CONNECTIONS),
      maxConnectionsPerAddress: perAddress ?? d.maxConnectionsPerAddress,
      headersTimeoutMs: headers ?? Math.min(d.headersTimeoutMs, request ?? Infinity),
      requestTimeoutMs: request ?? Math.max(d.requestTimeoutMs, headers ?? 0),
      keepAliveTimeoutMs: keepAlive ?? d.keepAliveTimeoutMs,
    };
  }
  return limits;
}

/**
 * Why `DATABASE_URL` cannot be used, or undefined. The URL may carry a password: a problem never
 * quotes it, only the URL with its password replaced.
 */
function databaseUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'DATABASE_URL is not a URL (expected postgres://user:password@host:port/database)';
  }
  if (url.password) url.password = '***';
  const shown = JSON.stringify(url.href);
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return `DATABASE_URL: ${shown} is not a postgres:// or postgresql:// URL`;
  }
  if (!url.hostname && !url.searchParams.get('host')) return `DATABASE_URL: ${shown} names no host`;
  if (url.pathname.length <= 1) return `DATABASE_URL: ${shown} names no database`;
  return undefined;
}

function isKeyPair(cert: Buffer, key: Buffer): boolean {
  try {
    createSecureContext({ cert, key });
    return true;
  } catch {
    // the reason is not shown: it could quote the key material
    return false;
  }
}

function isCertificate(pem: Buffer): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

/**
 * The address a client dials for a role bound to `host` (docs/operations/configuration.md,
 * RTC_MEDIA_PUBLIC_HOST): the bind address itself, or loopback for a bind to every address.
 */
function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}
