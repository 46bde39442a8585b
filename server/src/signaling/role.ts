import type { AddressInfo } from 'node:net';
import { createAddressSet } from '../core/address.ts';
import { createSignalingApp } from './app.ts';
import { createSignalingService } from './service.ts';
import { defaultSignalingSettings } from './settings.ts';
import type { ProjectStore } from '../customers/store.ts';
import type { RoomCutoffStore } from '../rooms/store.ts';
import type { RevocationStore } from '../tokens/store.ts';
import { pollsStore, STORE_POLL_MS } from '../grant-guard/guard.ts';
import type { RoleStarter } from '../role.ts';

/**
 * The signaling role of `rtc serve` (docs/protocol/signaling.md): rooms in this process, or in
 * Redis when the config names one, so that any node serves any room (docs/operations/scale-out.md).
 */
export const startSignaling: RoleStarter<RevocationStore & ProjectStore & RoomCutoffStore> = async ({ config, deps, logger, metrics, readiness }) => {
  const settings = defaultSignalingSettings(config.issuer);
  // ioredis is loaded only where a Redis is named (docs/operations/benchmarks.md, token issuance)
  const rooms = config.redis ? (await import('./redis-rooms.ts')).createRedisRoomState({
    target: config.redis, settings, clock: deps.clock,
    onError: (err) => logger.warn({ err }, 'signaling rooms: Redis failed'),
  }) : undefined;
  if (rooms) {
    try {
      await rooms.ready();
    } catch (err) {
      rooms.close();
      throw err;
    }
  }
  const service = createSignalingService(deps, settings, {
    revocationPollMs: pollsStore(config, deps) ? STORE_POLL_MS : undefined,
    onPollError: (err) => logger.warn({ err }, 'reading revocations failed'),
    rooms,
  });
  const signaling = createSignalingApp(service, {
    logger, tls: config.tls, listener: config.listeners.signaling, readiness,
    trustProxy: config.trustProxy.length > 0 ? createAddressSet(config.trustProxy) : undefined,
  });
  const { app, endStreams } = signaling;
  metrics?.watchSignaling(signaling);
  const close = async (): Promise<void> => {
    // open event streams would hold the server open: end them first, readers resume elsewhere
    service.close();
    endStreams();
    await app.close();
  };
  try {
    await app.listen({ host: config.host, port: config.ports.signaling });
  } catch (err) {
    await close();
    throw err;
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `${config.tls ? 'https' : 'http'}://${host}:${address.port}`, close };
};
