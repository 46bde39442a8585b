import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Store } from '../store/port.ts';
import type { Readiness } from '../http/readiness.ts';
import type { RoleServer } from '../role.ts';

export interface AdminOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly readiness: Readiness;
  readonly store: Pick<Store, 'ping'>;
  readonly logger: Logger;
}

/**
 * The admin listener (docs/operations/metrics.md): `GET /metrics` in the Prometheus text format,
 * `GET /ready` and `GET /health`, plain HTTP apart from the public ports. It closes last, so a
 * probe sees `/ready` turn 503 while the roles drain.
 */
export async function startAdminListener(options: AdminOptions): Promise<RoleServer> {
  const server = createServer((req, res) => {
    answer(req, res, options).catch((err: unknown) => {
      options.logger.error({ err }, 'admin: request failed');
      if (!res.headersSent) send(res, 500, 'application/json', JSON.stringify({ error: 'internal_error' }));
      else res.destroy();
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, options: AdminOptions): Promise<void> {
  const path = (req.url ?? '').split('?', 1)[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, 405, 'application/json', JSON.stringify({ error: 'method_not_allowed' }));
    return;
  }
  if (path === '/metrics') {
    send(res, 200, options.registry.contentType, await options.registry.metrics());
  } else if (path === '/ready') {
    const report = await options.readiness.check();
    send(res, report.status === 'ready' ? 200 : 503, 'application/json', JSON.stringify(report));
  } else if (path === '/health') {
    const ok = await options.store.ping().then(() => true, () => false);
    send(res, ok ? 200 : 503, 'application/json', JSON.stringify(ok ? { status: 'ok' } : { status: 'unavailable', store: 'unavailable' }));
  } else {
    send(res, 404, 'application/json', JSON.stringify({ error: 'not_found' }));
  }
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
