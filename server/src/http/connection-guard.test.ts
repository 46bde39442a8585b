import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import pino from 'pino';
import { makeCertificate } from '../../../test/helpers/tls.ts';
import { DEFAULT_LISTENER_LIMITS, loadConfig } from '../config.ts';
import { createAddressSet } from '../core/address.ts';
import {
  createRoleServer, FILE_RESERVE, guardConnections, openFileLimit, parseOpenFileLimit, refusalLog, timeoutOptions, warnOverFileLimit, type Refusal,
} from './connection-guard.ts';

/** A TCP server that greets every connection its own listener sees, guarded as asked. */
async function greeter(guard: (server: Server) => void): Promise<{ server: Server; port: number; greeted: string[]; sockets: Socket[] }> {
  const greeted: string[] = [];
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    greeted.push(socket.remoteAddress ?? '');
    sockets.push(socket);
    socket.write('hi');
  });
  guard(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, greeted, sockets };
}

interface Client {
  readonly socket: Socket;
  /** `admitted` when the server's listener greets it, `refused` when the server closes it first. */
  readonly outcome: Promise<'admitted' | 'refused'>;
}

function connectFrom(port: number, localAddress: string): Client {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  const outcome = new Promise<'admitted' | 'refused'>((resolve, reject) => {
    socket.once('data', () => resolve('admitted'));
    socket.once('close', () => resolve('refused'));
    socket.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve('refused') : reject(err)));
  });
  return { socket, outcome };
}

describe('guardConnections', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });
  const track = (server: Server, clients: Client[]): void => {
    cleanups.push(() => {
      for (const c of clients) c.socket.destroy();
      server.close();
    });
  };

  it('closes the connection over the per-address cap before the server\'s own listener sees it', async () => {
    const refusals: Refusal[] = [];
    const { server, port, greeted } = await greeter((s) => guardConnections(s, {
      maxConnections: 100, maxConnectionsPerAddress: 2, onRefused: (r) => refusals.push(r),
    }));
    const clients: Client[] = [];
    track(server, clients);
    for (let i = 0; i < 2; i++) {
      clients.push(connectFrom(port, '127.0.0.2'));
      assert.equal(await clients.at(-1)!.outcome, 'admitted');
    }
    clients.push(connectFrom(port, '127.0.0.2'));
    assert.equal(await clients.at(-1)!.outcome, 'refused');
    clients.push(connectFrom(port, '127.0.0.3'));
    assert.equal(await clients.at(-1)!.outcome, 'admitted', 'another address is not held to the first one\'s count');
    assert.deepEqual(greeted, ['127.0.0.2', '127.0.0.2', '127.0.0.3']);
    assert.deepEqual(refusals, ['address']);
  });

  it('counts a closed connection out, so its address may connect again', async () => {
    let guard: ReturnType<typeof guardConnections> | undefined;
    const { server, port, sockets } = await greeter((s) => { guard = guardConnections(s, { maxConnections: 100, maxConnectionsPerAddress: 1 }); });
    const clients: Client[] = [];
    track(server, clients);
    clients.push(connectFrom(port, '127.0.0.2'));
    assert.equal(await clients[0]!.outcome, 'admitted');
    assert.equal(guard!.openFrom('127.0.0.2'), 1);
    clients[0]!.socket.destroy();
    // the guard counts the connection out on the server side's 'close', before this listener hears it
    await once(sockets[0]!, 'close');
    assert.equal(guard!.openFrom('127.0.0.2'), 0);
    clients.push(connectFrom(port, '127.0.0.2'));
    assert.equal(await clients[1]!.outcome, 'admitted');
  });

  it('closes the connection over the listener cap, whatever its address', async () => {
    const refusals: Refusal[] = [];
    const { server, port, greeted } = await greeter((s) => guardConnections(s, {
      maxConnections: 2, maxConnectionsPerAddress: 100, onRefused: (r) => refusals.push(r),
    }));
    const clients: Client[] = [];
    track(server, clients);
    for (const address of ['127.0.0.2', '127.0.0.3']) {
      clients.push(connectFrom(port, address));
      assert.equal(await clients.at(-1)!.outcome, 'admitted');
    }
    clients.push(connectFrom(port, '127.0.0.4'));
    assert.equal(await clients.at(-1)!.outcome, 'refused');
    assert.equal(greeted.length, 2);
    assert.deepEqual(refusals, ['listener']);
  });

  it('holds a trusted proxy to the listener cap only', async () => {
    const { server, port, greeted } = await greeter((s) => guardConnections(s, {
      maxConnections: 100, maxConnectionsPerAddress: 1, exempt: createAddressSet(['127.0.0.2/32']),
    }));
    const clients: Client[] = [];
    track(server, clients);
    for (let i = 0; i < 3; i++) clients.push(connectFrom(port, '127.0.0.2'));
    assert.deepEqual(await Promise.all(clients.map((c) => c.outcome)), ['admitted', 'admitted', 'admitted']);
    assert.equal(greeted.length, 3);
  });
});

describe('timeoutOptions', () => {
  it('passes the role\'s timeouts and checks them often enough to keep them', () => {
    assert.deepEqual(timeoutOptions({
      maxConnections: 1, maxConnectionsPerAddress: 1, headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 4_000,
    }), { headersTimeout: 5_000, requestTimeout: 10_000, keepAliveTimeout: 4_000, connectionsCheckingInterval: 1_000 });
    const short = timeoutOptions({
      maxConnections: 1, maxConnectionsPerAddress: 1, headersTimeoutMs: 300, requestTimeoutMs: 500, keepAliveTimeoutMs: 300,
    });
    assert.equal(short.connectionsCheckingInterval, 60);
  });
});

describe('refusalLog', () => {
  it('logs the first refusal at once and the rest at most once an interval, with their counts', () => {
    const lines: unknown[] = [];
    let now = 0;
    const report = refusalLog({ warn: (obj: unknown) => { lines.push(obj); } } as never, { maxConnections: 5, maxConnectionsPerAddress: 2 },
      () => now, 1_000);
    report('address');
    for (let i = 0; i < 50; i++) report('listener');
    now = 999;
    report('address');
    assert.equal(lines.length, 1);
    now = 1_000;
    report('listener');
    assert.deepEqual(lines, [
      { refused: { listener: 0, address: 1 }, maxConnections: 5, maxConnectionsPerAddress: 2 },
      { refused: { listener: 51, address: 1 }, maxConnections: 5, maxConnectionsPerAddress: 2 },
    ]);
  });
});

describe('openFileLimit', () => {
  it('reads the soft limit of open files from /proc/self/limits', () => {
    const text = [
      'Limit                     Soft Limit           Hard Limit           Units',
      'Max processes             63432                63432                processes',
      'Max open files            1024                 524288               files',
    ].join('\n');
    assert.equal(parseOpenFileLimit(text), 1024);
    assert.equal(parseOpenFileLimit('Max open files            unlimited            unlimited            files'), undefined);
    if (process.platform === 'linux') assert.ok((openFileLimit() ?? 0) > 0, 'this process\'s own limit');
  });
});

describe('warnOverFileLimit', () => {
  it('warns when the caps of the roles served add up to more than the open-file limit allows', () => {
    const lines: unknown[] = [];
    const logger = { warn: (obj: unknown) => { lines.push(obj); } } as never;
    const config = loadConfig({
      RTC_ROLES: 'token,media', RTC_TOKEN_MAX_CONNECTIONS: '100', RTC_MEDIA_MAX_CONNECTIONS: '200', RTC_API_MAX_CONNECTIONS: '5000',
    });
    // the api role is not served: its cap does not count
    assert.equal(warnOverFileLimit(config, logger, 300 + FILE_RESERVE), false);
    assert.equal(warnOverFileLimit(config, logger, undefined), false);
    assert.equal(warnOverFileLimit(config, logger, 300 + FILE_RESERVE - 1), true);
    assert.deepEqual(lines, [{ openFileLimit: 300 + FILE_RESERVE - 1, connectionCaps: 300, needed: 300 + FILE_RESERVE }]);
  });
});

describe('createRoleServer', () => {
  it('gives the TLS handshake the headers timeout, and sets the role\'s HTTP timeouts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtc-guard-'));
    const { certFile, keyFile } = makeCertificate(dir);
    const limits = { ...DEFAULT_LISTENER_LIMITS.token, headersTimeoutMs: 200, requestTimeoutMs: 400 };
    const server = createRoleServer({
      role: 'token', limits, tls: { cert: readFileSync(certFile), key: readFileSync(keyFile) }, logger: pino({ level: 'silent' }),
    }, (_req, res) => res.end());
    try {
      assert.deepEqual([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout, server.maxConnections],
        [200, 400, limits.keepAliveTimeoutMs, limits.maxConnections]);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      // a TCP client that never starts the handshake: Node's own default would wait 120 s
      const startedAt = Date.now();
      const idle = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
      idle.on('error', () => undefined);
      await once(idle, 'close');
      const openMs = Date.now() - startedAt;
      assert.ok(openMs >= 150 && openMs < 5_000, `closed after ${openMs} ms`);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
