import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const HOST = '127.0.0.1';

/** A coturn relay on loopback with TURN REST API authentication, and a UDP echo peer behind it. */
export interface Coturn {
  readonly host: string;
  /** The loopback address coturn relays from (`relay-ip`). */
  readonly relayIp: string;
  /** UDP and TCP listening port. */
  readonly port: number;
  /** TLS listening port, when started with `tls: true`. */
  readonly tlsPort: number | undefined;
  /** The `turnutils_peer` echo server that allocations send to. */
  readonly peerPort: number;
  /** Relay ports coturn allocates from. */
  readonly relayPorts: { readonly min: number; readonly max: number };
  /** Everything coturn logged so far. */
  output(): string;
  stop(): Promise<void>;
}

export interface AllocationResult {
  readonly ok: boolean;
  /** `127.0.0.1:port` of the relayed transport address coturn allocated. */
  readonly relay: string | undefined;
  readonly exitCode: number | null;
  readonly output: string;
}

/** A port free for both TCP and UDP on loopback right now. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, HOST, () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const socket = createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, HOST, () => socket.close(() => resolve(true)));
    });
    if (udpFree && port > 0) return port;
  }
}

function spawnLogged(command: string, args: readonly string[]): { child: ChildProcess; output: () => string; exited: Promise<void> } {
  const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: string[] = [];
  child.stdout!.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, output: () => chunks.join(''), exited };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(kill);
}

async function waitForTcp(port: number, deadline: number, what: () => string): Promise<void> {
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: HOST, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await delay(50);
  }
  throw new Error(`coturn did not listen on ${port}:\n${what()}`);
}

/** Waits until the UDP echo peer answers a datagram. */
async function waitForEcho(port: number, deadline: number): Promise<void> {
  const socket = createSocket('udp4');
  try {
    while (Date.now() < deadline) {
      const echoed = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 100);
        socket.once('message', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      socket.send('ping', port, HOST);
      if (await echoed) return;
    }
    throw new Error(`turnutils_peer did not echo on ${port}`);
  } finally {
    socket.close();
  }
}

/**
 * Starts `turnserver` on free loopback ports with `use-auth-secret` and the given shared secret
 * (and a TLS listener on a self-signed certificate with `tls: true`), plus a `turnutils_peer`.
 */
/**
 * Starts coturn on 127.0.0.1; it relays from `relayIp` (127.0.0.1 unless given), another loopback
 * address when a test tells relayed sessions from direct ones by address, as the media node does.
 */
export async function startCoturn(options: { readonly secret: string; readonly tls?: boolean; readonly relayIp?: string }): Promise<Coturn> {
  const relayIp = options.relayIp ?? HOST;
  const dir = mkdtempSync(join(tmpdir(), 'rtc-coturn-'));
  const port = await freePort();
  const tlsPort = options.tls ? await freePort() : undefined;
  const peerPort = await freePort();
  // a relay range picked at random in the dynamic ports, away from what the kernel hands out first
  const min = 50_000 + Math.floor(Math.random() * 14_000);
  const relayPorts = { min, max: min + 60 };
  const args = [
    '-n', '--use-auth-secret', `--static-auth-secret=${options.secret}`, '--realm=rtc.test',
    `--listening-ip=${HOST}`, `--relay-ip=${relayIp}`, `--listening-port=${port}`,
    `--min-port=${relayPorts.min}`, `--max-port=${relayPorts.max}`,
    '--allow-loopback-peers', '--no-multicast-peers', '--no-cli', '--no-dtls', '--fingerprint',
    `--userdb=${join(dir, 'turndb')}`, `--pidfile=${join(dir, 'turn.pid')}`, '--log-file=stdout', '--simple-log',
  ];
  if (tlsPort !== undefined) {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
    args.push(`--tls-listening-port=${tlsPort}`, `--cert=${cert}`, `--pkey=${key}`);
  } else {
    args.push('--no-tls');
  }
  const turn = spawnLogged('turnserver', args);
  const peer = spawnLogged('turnutils_peer', ['-L', HOST, '-p', String(peerPort)]);
  const stop = async (): Promise<void> => {
    await Promise.all([stopChild(turn.child, turn.exited), stopChild(peer.child, peer.exited)]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 10_000;
    await waitForTcp(port, deadline, turn.output);
    if (tlsPort !== undefined) await waitForTcp(tlsPort, deadline, turn.output);
    await waitForEcho(peerPort, deadline);
  } catch (err) {
    await stop();
    throw err;
  }
  return { host: HOST, relayIp, port, tlsPort, peerPort, relayPorts, output: turn.output, stop };
}

/**
 * Asks coturn for a relay with `turnutils_uclient` (UDP, TCP or TLS to the server) and sends a
 * few packets through it to the echo peer. `ok` when the allocation and the echo succeeded.
 */
export async function allocateRelay(
  coturn: Coturn, credentials: { readonly username: string; readonly credential: string }, transport: 'udp' | 'tcp' | 'tls',
): Promise<AllocationResult> {
  const port = transport === 'tls' ? coturn.tlsPort : coturn.port;
  if (port === undefined) throw new Error('coturn was started without TLS');
  const args = [
    '-v', ...(transport === 'udp' ? [] : ['-t']), ...(transport === 'tls' ? ['-S'] : []),
    '-p', String(port), '-e', coturn.host, '-r', String(coturn.peerPort), '-n', '1', '-m', '1', '-l', '100',
    '-u', credentials.username, '-w', credentials.credential, coturn.host,
  ];
  const run = spawnLogged('turnutils_uclient', args);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 30_000);
  await run.exited;
  clearTimeout(timer);
  const output = run.output();
  const relay = /Received relay addr: (\d+\.\d+\.\d+\.\d+:\d+)/.exec(output)?.[1];
  return { ok: run.child.exitCode === 0 && relay !== undefined, relay, exitCode: run.child.exitCode, output };
}
