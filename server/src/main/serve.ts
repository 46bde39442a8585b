import type { Store } from '../store/port.ts';
import { REVOCATION_PURGE_INTERVAL_MS } from '../grant-guard/guard.ts';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config, RoleName } from '../config.ts';
import { createHttpApp, type HttpRole } from './http-app.ts';
import { openFileLimit, warnOverFileLimit } from '../http/connection-guard.ts';
import { createMetrics, type WebhookOutcome } from '../metrics/metrics.ts';
import type { DeliveryResult } from '../webhooks/delivery.ts';
import { createReadiness } from '../http/readiness.ts';
import { nowSec } from '../core/deps.ts';
import { startAdminListener } from './admin.ts';
import { startWebhookWorker } from '../webhooks/worker.ts';
import { startSignaling } from '../signaling/role.ts';
import { SESSION_RETENTION_DAYS } from '../sessions/store.ts';
import { composeServices, httpContext, systemClock } from './compose.ts';
import type { RoleContext, RoleServer, RoleStarter } from '../role.ts';

export interface RunningPlatform {
  readonly urls: ReadonlyMap<RoleName, string>;
  /** Stops accepting connections, lets in-flight requests finish, closes the store. */
  close(): Promise<void>;
}

/** A delivery attempt's result as the metrics name it: a failed attempt is retried, a last one abandoned. */
const WEBHOOK_OUTCOME: Record<DeliveryResult['outcome'], WebhookOutcome> = { delivered: 'delivered', retry: 'failed', failed: 'abandoned' };

/** Delivered and failed webhook deliveries stay in the delivery log this long (docs/reference/webhooks.md). */
const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Roles that are not plain HTTP apps of this module; each starts before the api and token roles. */
const ROLE_STARTERS: Partial<Record<RoleName, RoleStarter<Store>>> = {
  // loaded only by a process that runs it: the WebRTC stack weighs some 25 MB that api and token processes do without
  media: async (ctx) => (await import('../media/node/role.ts')).startMediaRole(ctx),
  signaling: startSignaling,
};

/** The composition root: chooses adapters from the config and starts every configured role. */
export async function startPlatform(config: Config, logger: Logger, announce: (line: string) => void): Promise<RunningPlatform> {
  warnOverFileLimit(config, logger, openFileLimit());
  await checkPortsFree(config);
  const deps = await composeServices(config, {
    onBusError: (err) => logger.error({ err }, 'event handler failed'),
    onStoreError: (err) => logger.warn({ err }, 'database connection lost'),
    onRedisError: (err) => logger.warn({ err }, 'Redis connection lost'),
    onKeysReloaded: (ring, version) => logger.info({ signingKid: ring.signing.kid, version }, 'key ring reloaded'),
    onKeysError: (err) => logger.warn({ err }, 'key ring reload failed'),
  });
  const { store, keys } = deps;
  // one registry per process (docs/operations/metrics.md)
  const metrics = createMetrics();
  const readiness = createReadiness(deps, { redisLive: deps.redisLive });
  if (deps.mediaNodes && config.roles.includes('token')) metrics.watchMediaNodes(deps.mediaNodes);
  const roleContext: RoleContext<Store> = { config, deps, logger, metrics, readiness };

  const running: RoleServer[] = [];
  const urls = new Map<RoleName, string>();
  let admin: RoleServer | undefined;
  // announced once every role listens, a failed start prints no role line; with the admin
  // listener on, every role line names it too
  const lines: string[] = [];
  const roleLine = (role: RoleName, url: string): string => JSON.stringify(admin ? { role, url, admin: admin.url } : { role, url });
  const started = (role: RoleName, server: RoleServer): void => {
    running.push(server);
    urls.set(role, server.url);
    lines.push(roleLine(role, server.url));
  };

  try {
    // first: /ready answers 503 (starting) until every role listens
    if (config.admin) {
      const options = { ...config.admin, registry: metrics.registry, readiness, store, logger };
      admin = await listening('admin', config.admin.port, () => startAdminListener(options));
    }
    // media and signaling first: token responses point at their bound ports
    for (const role of config.roles) {
      const starter = ROLE_STARTERS[role];
      if (role === 'media' && forksMediaWorkers(config)) {
        // docs/operations/scale-out.md, "Every core of one machine": each worker prints its own media line
        // loaded only where workers are forked: a one-process node never starts a child
        const { startMediaWorkers } = await import('./media-workers.ts');
        const workers = await startMediaWorkers(config, logger, announce);
        running.push({ url: '', close: workers.close });
        urls.set('media', workers.urls[0]!);
        lines.push(...workers.lines);
      } else if (starter) started(role, await listening(role, config.ports[role], () => starter(roleContext)));
    }
    const ctx = { ...httpContext(config, deps, urls), metrics: metrics.tokens, readiness };
    for (const role of config.roles) {
      if (role !== 'api' && role !== 'token') continue;
      const app = createHttpApp(ctx, { role: role as HttpRole, logger, tls: config.tls, listener: config.listeners[role] });
      // registered before listen, so a failed listen still closes it
      running.push({ url: '', close: closeOnDrain(app) });
      await listening(role, config.ports[role], () => app.listen({ host: config.host, port: config.ports[role] }));
      const url = urlOf(app.server.address() as AddressInfo, config.tls !== undefined ? 'https' : 'http');
      urls.set(role, url);
      lines.push(roleLine(role, url));
    }
  } catch (err) {
    await Promise.allSettled(running.map((r) => r.close()));
    await admin?.close();
    await deps.close();
    throw err;
  }

  // after the store is open and the roles listen; stopped before the store closes
  const webhooks = config.roles.includes('api')
    ? startWebhookWorker(config, deps, logger, { onDelivery: (result) => metrics.recordWebhookDelivery(WEBHOOK_OUTCOME[result.outcome]) })
    : undefined;

  const purge = setInterval(() => {
    store.purgeRevocations(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'revocation purge failed'));
    store.purgeProjectCutoffs(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'cut-off purge failed'));
    store.purgeRoomCutoffs(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'room cut-off purge failed'));
    store.purgeRedeemedInvitations(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'redeemed invitation purge failed'));
    // rooms whose empty_timeout ran out, those created ahead that nobody joined included, also where no media role runs
    store.purgeRoomRecords(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'room settings purge failed'));
    store.purgeGrantPermissions(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'grant permissions purge failed'));
    store.purgeDeliveries(systemClock.nowMs() - DELIVERY_LOG_RETENTION_MS)
      .catch((err: unknown) => logger.warn({ err }, 'webhook delivery log purge failed'));
    store.purgeMediaSessions(nowSec(systemClock) - SESSION_RETENTION_DAYS * 86_400)
      .catch((err: unknown) => logger.warn({ err }, 'session history purge failed'));
  }, REVOCATION_PURGE_INTERVAL_MS);
  purge.unref();

  readiness.started();
  for (const line of lines) announce(line);
  logger.info({ roles: config.roles, dataDir: config.dataDir, signingKid: keys.signing.kid, admin: admin?.url }, 'platform started');
  return {
    urls,
    async close() {
      // first of all: load balancers probing /ready stop sending while the roles drain
      readiness.shuttingDown();
      clearInterval(purge);
      await Promise.allSettled(running.map((r) => r.close()));
      await webhooks?.stop();
      await admin?.close();
      await deps.close();
    },
  };
}

/** Whether this `rtc serve` runs its media role as several processes (RTC_MEDIA_WORKERS) rather than in itself. */
const forksMediaWorkers = (config: Config): boolean =>
  config.roles.includes('media') && config.media.workers > 1 && config.media.workerIndex === undefined;

/** A listener `rtc serve` opens: a role's, or the admin listener (RTC_ADMIN_PORT). */
type Listener = RoleName | 'admin';

const PORT_VARIABLES: Readonly<Record<Listener, string>> = {
  api: 'RTC_API_PORT', token: 'RTC_TOKEN_PORT', signaling: 'RTC_SIGNALING_PORT', media: 'RTC_MEDIA_PORT', admin: 'RTC_ADMIN_PORT',
};

/**
 * Ports other processes hold, told in the operator's terms: which listener, which variable to
 * change; one line each, every taken port at once.
 */
export class PortInUseError extends Error {
  constructor(taken: readonly (readonly [Listener, number])[]) {
    super(taken.map(([listener, port]) =>
      `${listener === 'admin' ? 'admin listener' : `${listener} role`}: port ${port} is in use; set ${PORT_VARIABLES[listener]}`).join('\n'));
    this.name = 'PortInUseError';
  }
}

/** Runs a listener's listen; a port taken since it was checked becomes a PortInUseError. */
async function listening<T>(listener: Listener, port: number, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError([[listener, port]]);
    throw err;
  }
}

/**
 * Before anything starts: every fixed port of the configured roles and of the admin listener that
 * another process holds, reported together.
 */
async function checkPortsFree(config: Config): Promise<void> {
  const listeners: [Listener, string, number][] = config.roles.map((role) => [role, config.host, config.ports[role]]);
  // the workers' ports follow RTC_MEDIA_PORT (media-workers.ts)
  if (forksMediaWorkers(config) && config.ports.media !== 0) {
    for (let i = 1; i < config.media.workers; i++) listeners.push(['media', config.host, config.ports.media + i]);
  }
  if (config.admin) listeners.push(['admin', config.admin.host, config.admin.port]);
  const fixed = listeners.filter(([, , port]) => port !== 0);
  const taken = await Promise.all(fixed.map(([, host, port]) => portTaken(host, port)));
  const inUse = fixed.filter((_, i) => taken[i]).map(([listener, , port]) => [listener, port] as const);
  if (inUse.length > 0) throw new PortInUseError(inUse);
}

/** Whether binding `host:port` fails because the address is in use (any other failure is left to the role's own listen). */
function portTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/**
 * A close that lets requests in flight finish and answers them with `Connection: close`, so that
 * keep-alive clients do not hold the process open until their connection times out.
 */
function closeOnDrain(app: FastifyInstance): () => Promise<void> {
  let closing = false;
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  return () => {
    closing = true;
    return app.close();
  };
}

/** `scheme://host:port` of a bound listener (IPv6 in brackets). */
export function urlOf(address: AddressInfo, scheme: string): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}
