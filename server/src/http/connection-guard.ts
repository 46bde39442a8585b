/**
 * What every role's listener admits (docs/operations/configuration.md, "Connections and timeouts"):
 * a cap on its open connections and on those of one peer address, enforced when a connection is
 * accepted, before any TLS or HTTP work, and the HTTP timeouts of the role. One process shares
 * one table of file descriptors among its roles: a flood of idle connections to one port must not
 * leave another port unable to accept.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as NetServer, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Config, ListenerLimits } from '../config.ts';
import type { AddressSet } from '../core/address.ts';

export type Refusal = 'listener' | 'address';

export interface GuardOptions {
  /** Node's `server.maxConnections`: over it the connection is closed before it becomes a socket. */
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  /** Peers counted against `maxConnections` only: trusted reverse proxies, which carry many clients. */
  readonly exempt?: AddressSet | undefined;
  /** Told of every connection closed at accept. */
  readonly onRefused?: ((reason: Refusal) => void) | undefined;
}

export interface ConnectionGuard {
  /** Connections open now from `address`, as the per-address cap counts them (0 for an exempt peer). */
  openFrom(address: string): number;
}

/**
 * Caps the connections of `server`: the listener cap is Node's `maxConnections`; the per-address
 * cap is a counter kept on accept and close, checked before the listeners `server` already has
 * for 'connection' (the HTTP parser, or the TLS handshake) see the socket: they are moved behind
 * the check. Call it once, right after the server is created; a 'connection' listener added later
 * is not behind it and would see refused sockets too (already destroyed). Nothing here runs per
 * request.
 */
export function guardConnections(server: NetServer, options: GuardOptions): ConnectionGuard {
  server.maxConnections = options.maxConnections;
  const open = new Map<string, number>();
  const { maxConnectionsPerAddress: perAddress, exempt, onRefused } = options;
  const admitted = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');

  server.on('connection', function admit(this: NetServer, socket: Socket) {
    const address = socket.remoteAddress;
    // undefined: the peer is already gone (reset before the accept was handled)
    if (address === undefined) {
      socket.destroy();
      return;
    }
    if (exempt === undefined || !exempt.has(address)) {
      const count = open.get(address) ?? 0;
      if (count >= perAddress) {
        socket.destroy();
        onRefused?.('address');
        return;
      }
      open.set(address, count + 1);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left === 0) open.delete(address);
        else open.set(address, left);
      });
    }
    for (const listener of admitted) listener.call(this, socket);
  });
  // Node emits 'drop' for each connection it closed at maxConnections
  if (onRefused) server.on('drop', () => onRefused('listener'));

  return { openFrom: (address) => open.get(address) ?? 0 };
}

/**
 * The options of `http.createServer`/`https.createServer` for a role's timeouts. Node checks
 * headers and request timeouts every `connectionsCheckingInterval` (30 s by default, which would
 * stretch a 5 s timeout to 35): here a fifth of the shorter timeout, at most a second.
 */
export function timeoutOptions(limits: ListenerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(20, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 5))),
  };
}

export interface RoleServerOptions {
  /** The role named in the log line of refused connections. */
  readonly role: string;
  readonly limits: ListenerLimits;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** Trusted reverse proxies (`RTC_TRUST_PROXY`): not held to the per-address cap. */
  readonly exempt?: AddressSet | undefined;
  readonly logger: Logger;
}

/**
 * The HTTP or HTTPS server of one role with its caps and timeouts; with TLS the handshake has the
 * headers timeout too (Node's default is 120 s), since the HTTP timeouts start only after it.
 */
export function createRoleServer(options: RoleServerOptions, handler?: RequestListener): Server {
  const { limits, tls } = options;
  const server = tls
    ? createHttpsServer({
      cert: tls.cert, key: tls.key, handshakeTimeout: limits.headersTimeoutMs, ...timeoutOptions(limits),
    }, handler) as unknown as Server
    : createHttpServer(timeoutOptions(limits), handler);
  guardConnections(server, {
    maxConnections: limits.maxConnections,
    maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
    exempt: options.exempt,
    onRefused: refusalLog(options.logger.child({ role: options.role }), {
      maxConnections: limits.maxConnections, maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
    }),
  });
  return server;
}

/** At most one warning per this interval, however many connections are refused. */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * Reports refused connections without letting a flood of them flood the log: the first refusal
 * after a quiet interval is logged at once, the next ones are counted into the following line.
 */
export function refusalLog(
  logger: Pick<Logger, 'warn'>, caps: { readonly maxConnections: number; readonly maxConnectionsPerAddress: number },
  nowMs: () => number = Date.now, intervalMs = REFUSAL_LOG_INTERVAL_MS,
): (reason: Refusal) => void {
  let last = -Infinity;
  const counts: Record<Refusal, number> = { listener: 0, address: 0 };
  return (reason) => {
    counts[reason]++;
    const now = nowMs();
    if (now - last < intervalMs) return;
    last = now;
    logger.warn({ refused: { ...counts }, ...caps }, 'connections refused at a connection cap');
    counts.listener = 0;
    counts.address = 0;
  };
}

/** Files a process holds besides its connections: listeners, store, logs, key file, event bus, DNS. */
export const FILE_RESERVE = 64;

/**
 * The caps keep the roles of one process from starving each other only while they add up to less
 * than the files the process may open: past that, a flood on one port can still take the
 * descriptors another port needs. Warns at start when they do not; true if it warned.
 */
export function warnOverFileLimit(config: Config, logger: Pick<Logger, 'warn'>, limit: number | undefined): boolean {
  if (limit === undefined) return false;
  const connectionCaps = config.roles.reduce((sum, role) => sum + config.listeners[role].maxConnections, 0);
  const needed = connectionCaps + FILE_RESERVE + (config.store.kind === 'postgres' ? config.store.poolSize : 0);
  if (needed <= limit) return false;
  logger.warn({ openFileLimit: limit, connectionCaps, needed },
    'the connection caps of this process exceed its open-file limit: raise the limit (ulimit -n) or lower RTC_*_MAX_CONNECTIONS');
  return true;
}

/**
 * The soft limit of open files of this process (Node raises it to the hard limit at start), from
 * /proc/self/limits; undefined where that file does not exist or says "unlimited".
 */
export function openFileLimit(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
  return parseOpenFileLimit(text);
}

/** The soft "Max open files" of a /proc/<pid>/limits text. */
export function parseOpenFileLimit(limits: string): number | undefined {
  const match = /^Max open files\s+(\d+)\s/m.exec(limits);
  return match ? Number(match[1]) : undefined;
}
