import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createMemoryBus } from '../adapters/bus/memory.ts';
import { loadKeyRing } from '../adapters/keys/file-keyring.ts';
import { createMemoryLimiter } from '../adapters/limiter/memory.ts';
import { createSqliteStore } from '../adapters/store/sqlite.ts';
import type { Config, RoleName } from '../config.ts';
import { createAddressSet } from '../core/address.ts';
import { createHttpApp, type HttpRole } from '../http/app.ts';
import type { HttpContext } from '../http/context.ts';
import type { Clock } from '../ports.ts';
import { nowSec, type ServiceDeps } from '../services/deps.ts';

export interface RunningPlatform {
  readonly urls: ReadonlyMap<RoleName, string>;
  /** Stops accepting connections, lets in-flight requests finish, closes the store. */
  close(): Promise<void>;
}

const systemClock: Clock = { nowMs: () => Date.now() };
const REVOCATION_PURGE_INTERVAL_MS = 60_000;

/** The composition root: chooses adapters from the config and starts every configured role. */
export async function startPlatform(config: Config, logger: Logger, announce: (line: string) => void): Promise<RunningPlatform> {
  const keys = loadKeyRing(config.dataDir, nowSec(systemClock));
  const store = createSqliteStore(config.store.path);
  const bus = createMemoryBus((err) => logger.error({ err }, 'event handler failed'));
  const deps: ServiceDeps = { store, limiter: createMemoryLimiter(), bus, clock: systemClock, keys };
  const ctx: HttpContext = {
    deps,
    issuer: { issuer: config.issuer, sfuHost: config.media.publicHost, sfuPort: config.media.publicPort ?? config.ports.media },
    limits: config.limits,
    trustProxy: config.trustProxy.length > 0 ? createAddressSet(config.trustProxy) : undefined,
  };

  const apps: FastifyInstance[] = [];
  const urls = new Map<RoleName, string>();
  try {
    for (const role of config.roles) {
      const app = createHttpApp(ctx, { role: role as HttpRole, logger, tls: config.tls });
      apps.push(app);
      await app.listen({ host: config.host, port: config.ports[role] });
      const url = urlOf(app.server.address() as AddressInfo, config.tls !== undefined);
      urls.set(role, url);
      announce(JSON.stringify({ role, url }));
    }
  } catch (err) {
    await Promise.allSettled(apps.map((a) => a.close()));
    await store.close();
    throw err;
  }

  const purge = setInterval(() => {
    store.purgeRevocations(nowSec(systemClock)).catch((err: unknown) => logger.warn({ err }, 'revocation purge failed'));
  }, REVOCATION_PURGE_INTERVAL_MS);
  purge.unref();

  logger.info({ roles: config.roles, dataDir: config.dataDir, signingKid: keys.signing.kid }, 'platform started');
  return {
    urls,
    async close() {
      clearInterval(purge);
      await Promise.allSettled(apps.map((a) => a.close()));
      await bus.close();
      await store.close();
    },
  };
}

function urlOf(address: AddressInfo, tls: boolean): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${tls ? 'https' : 'http'}://${host}:${address.port}`;
}
