import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MEDIA_PATH } from '@rtc/protocol';
import { createAddressSet } from '../../core/address.ts';
import { createRoleServer } from '../../http/connection-guard.ts';
import { MediaHub, type MediaHubOptions } from './hub.ts';
import { pollsStore, STORE_POLL_MS } from '../../grant-guard/guard.ts';
import type { RoleStarter } from '../../role.ts';
import { placementUserKey, type NodeLoad } from '../../core/media-placement.ts';
import { RelayEndpoint, relayCredentialsOf } from '../relay/index.ts';
import { RelayRouter } from '../relayed/relay-router.ts';

/**
 * The media role of `rtc serve` (docs/operations/configuration.md): a WebSocket SFU at `/v1/media`
 * (`ws`, or `wss` when TLS is configured). Protocol: docs/protocol/media.md.
 */
export const startMediaRole: RoleStarter<MediaHubOptions['store']> = async ({ config, deps, logger, metrics }) => {
  const hub = await MediaHub.create({
    // read at each check: the ring is replaced when keys are rotated (docs/operations/configuration.md, "Keys")
    keys: {
      get verifying() { return deps.keys.verifyingByKid; },
      get masters() { return deps.keys.mediaMasters; },
      issuer: config.issuer,
      reload: () => deps.keys.reloadForUnknownKey(),
    },
    store: deps.store,
    bus: deps.bus,
    clock: deps.clock,
    logger,
    events: deps.events,
    nodeInEvents: deps.mediaNodes !== undefined,
    storePollMs: pollsStore(config, deps) ? STORE_POLL_MS : undefined,
    onRevocationClose: metrics?.observeRevocationClose,
    rtc: config.rtc,
  });
  metrics?.watchMedia(hub);
  // capped at accept like every role; the headers timeout is the time to the upgrade request, the
  // media handshake's own timeout (limits.ts) starts after it
  const server = createRoleServer({
    role: 'media', limits: config.listeners.media, tls: config.tls, logger,
    exempt: config.trustProxy.length > 0 ? createAddressSet(config.trustProxy) : undefined,
  });
  server.on('request', answerPlainRequest);
  // the relay path of the other media nodes (docs/protocol/relay.md), once this node knows its id; the media path otherwise
  let relay: RelayRouter | undefined;
  server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
    if (relay?.server.handleUpgrade(req, socket, head)) return;
    hub.handleUpgrade(req, socket, head);
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  let withdraw: (() => Promise<void>) | undefined;
  const close = async (): Promise<void> => {
    // first of all, answered by Redis before any session is told to move: token nodes check a
    // node's liveness in Redis as they place a room, so the apps' fresh tokens name another node
    // (docs/operations/scale-out.md, "Drain and failure of a media node")
    await withdraw?.();
    await relay?.close();
    await hub.close();
    await relay?.endpoint.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.ports.media, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await hub.close();
    throw err;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // docs/operations/scale-out.md, "Media nodes": the address apps are sent to names this node
  const node = { host: config.media.publicHost, port: config.media.publicPort ?? address.port };
  try {
    await hub.startPresence(`${node.host}:${node.port}`);
    // the relay's UDP socket on the media host (RTC_MEDIA_RELAY_PORT; docs/operations/configuration.md)
    const endpoint = await RelayEndpoint.open({
      nodeId: `${node.host}:${node.port}`, credentials: relayCredentialsOf(config.media.relay, deps.keys), host: config.host,
      port: config.media.relay.port, onError: (err) => logger.debug({ err }, 'media: a relay datagram could not be sent'),
    }).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      throw new Error(`media role: UDP port ${config.media.relay.port} is in use; set RTC_MEDIA_RELAY_PORT`);
    });
    relay = new RelayRouter({
      endpoint, url: `${config.tls ? 'wss' : 'ws'}://${node.host}:${node.port}`, bus: deps.bus, logger,
      now: () => deps.clock.nowMs(), room: (projectId, roomId) => hub.openRoom(projectId, roomId),
    });
    hub.attachRelay(relay);
  } catch (err) {
    await close();
    throw err;
  }
  if (deps.mediaNodes) {
    // its joined sessions with each announcement: placement fills a node up to RTC_MEDIA_MAX_SESSIONS
    const load = (): NodeLoad => {
      const users = [...hub.joinedSessions()].map((s) => placementUserKey(s.projectId, s.roomId, s.userId));
      return { sessions: users.length, users };
    };
    withdraw = await deps.mediaNodes.announce({ id: `${node.host}:${node.port}`, ...node },
      (err) => logger.warn({ err }, 'media: announcing this node failed'), load);
  }
  logger.info({ path: MEDIA_PATH, port: address.port }, 'media server listening');
  return { url: `${config.tls ? 'wss' : 'ws'}://${host}:${address.port}`, close };
};

/** Plain HTTP on the media port: the media path wants a WebSocket upgrade, nothing else exists. */
function answerPlainRequest(req: IncomingMessage, res: ServerResponse): void {
  const onPath = (req.url ?? '').split('?')[0] === MEDIA_PATH;
  const status = onPath ? 426 : 404;
  const body = JSON.stringify(onPath
    ? { error: 'upgrade_required', message: 'the media endpoint speaks WebSocket only' }
    : { error: 'not_found', message: 'no such endpoint on the media server' });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(onPath && { upgrade: 'websocket' }) });
  res.end(body);
}
