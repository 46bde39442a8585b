import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config, RoleName } from '../config.ts';
import { createHttpApp, type HttpRole } from '../http/app.ts';
import { nowSec } from '../services/deps.ts';
import { startMediaRole } from './media-role.ts';
import { startWebhookWorker } from './webhook-worker.ts';
import { startSignaling } from './signaling-role.ts';
import { composeServices, httpContext, systemClock } from './compose.ts';
import type { RoleContext, RoleServer, RoleStarter } from './roles.ts';

export interface RunningPlatform {
  readonly urls: ReadonlyMap<RoleName, string>;
  /** Stops accepting connections, lets in-flight requests finish, closes the store. */
  close(): Promise<void>;
}

const REVOCATION_PURGE_INTERVAL_MS = 60_000;
/** Delivered and failed webhook deliveries stay in the delivery log this long (docs/reference/webhooks.md). */
const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Roles that are not plain HTTP apps of this module; each starts before the api and token roles. */
const ROLE_STARTERS: Partial<Record<RoleName, RoleStarter>> = { media: startMediaRole, signaling: startSignaling };

/** The composition root: chooses adapters from the config and starts every configured role. */
export async function startPlatform(config: Config, logger: Logger, announce: (line: string) => void): Promise<RunningPlatform> {
  const deps = await composeServices(config, {
    onBusError: (err) => logger.error({ err }, 'event handler failed'),
    onStoreError: (err) => logger.warn({ err }, 'database connection lost'),
    onRedisError: (err) => logger.warn({ err }, 'Redis connection lost'),
    onKeysReloaded: (ring, version) => logger.info({ signingKid: ring.signing.kid, version }, 'key ring reloaded'),
    onKeysError: (err) => logger.warn({ err }, 'key ring reload failed'),
  });
  const { store, keys } = deps;
  const roleContext: RoleContext = { config, deps, logger };

  const running: RoleServer[] = [];
  const urls = new Map<RoleName, string>();
  const started = (role: RoleName, server: RoleServer): void => {
    running.push(server);
    urls.set(role, server.url);
    announce(JSON.stringify({ role, url: server.url }));
  };

  try {
    // media and signaling first: token responses point at their bound ports
    for (const role of config.roles) {
      const starter = ROLE_STARTERS[role];
      if (starter) started(role, await starter(roleContext));
    }
    const ctx = httpContext(config, deps, urls);
    for (const role of config.roles) {
      if (role !== 'api' && role !== 'token') continue;
      const app = createHttpApp(ctx, { role: role as HttpRole, logger, tls: config.tls });
      // registered before listen, so a failed listen still closes it
      running.push({ url: '', close: closeOnDrain(app) });
      await app.listen({ host: config.host, port: config.ports[role] });
      const url = urlOf(app.server.address() as AddressInfo, config.tls !== undefined ? 'https' : 'http');
      urls.set(role, url);
      announce(JSON.stringify({ role, url }));
    }
  } catch (err) {
    await Promise.allSettled(running.map((r) => r.close()));
    await deps.close();
    throw err;
  }

  // after the store is open and the roles listen; stopped before the store closes
  const webhooks = config.roles.includes('api') ? startWebhookWorker(config, deps, logger) : undefined;

  const purge = setInterval(() => {
    store.purgeRevocations(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'revocation purge failed'));
    store.purgeProjectCutoffs(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'cut-off purge failed'));
    store.purgeDeliveries(systemClock.nowMs() - DELIVERY_LOG_RETENTION_MS)
      .catch((err: unknown) => logger.warn({ err }, 'webhook delivery log purge failed'));
  }, REVOCATION_PURGE_INTERVAL_MS);
  purge.unref();

  logger.info({ roles: config.roles, dataDir: config.dataDir, signingKid: keys.signing.kid }, 'platform started');
  return {
    urls,
    async close() {
      clearInterval(purge);
      await Promise.allSettled(running.map((r) => r.close()));
      await webhooks?.stop();
      await deps.close();
    },
  };
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
