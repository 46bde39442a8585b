/**
 * The process of one impaired link (started by impaired-link.ts): a UDP proxy on loopback that
 * forwards each client's packets to the target from an upstream socket of that client's own, and
 * the target's answers back, through an ImpairedDirection each way. It runs apart from the test
 * process, whose event loop a browser driver keeps busy: late timers would add delay of their own.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { DeliveryQueue, ImpairedDirection, seededRandom } from './direction.ts';
import { applyPatch, type LinkSettings } from './link-settings.ts';
import type { DirectionStats, LinkReply, LinkRequest, LinkStart, LinkStats } from './protocol.ts';

interface Outgoing {
  readonly direction: ImpairedDirection;
  readonly socket: Socket;
  readonly data: Buffer;
  readonly host: string;
  readonly port: number;
}

const BUFFER_BYTES = 1 << 20;

function reply(message: LinkReply): void {
  if (process.connected) process.send?.(message);
}

const start = JSON.parse(process.argv[2] ?? '') as LinkStart;
let settings: LinkSettings = start.settings;
const up = new ImpairedDirection(settings.up, seededRandom(start.seed));
const down = new ImpairedDirection(settings.down, seededRandom(start.seed ^ 0x5bd1e995));
const pending = new DeliveryQueue<Outgoing>();
const upstreams = new Map<string, Socket>();
let timer: ReturnType<typeof setTimeout> | undefined;
let timerAt = Number.POSITIVE_INFINITY;
let closed = false;

const listener = createSocket({ type: 'udp4', recvBufferSize: BUFFER_BYTES, sendBufferSize: BUFFER_BYTES });

function send(out: Outgoing): void {
  if (closed) return;
  out.direction.delivered(out.data.length);
  // a failed send is a lost packet, as on a real link
  out.socket.send(out.data, out.port, out.host, () => undefined);
}

function flush(): void {
  timer = undefined;
  timerAt = Number.POSITIVE_INFINITY;
  if (closed) return;
  for (const out of pending.popDue(performance.now())) send(out);
  arm();
}

function arm(): void {
  const next = pending.nextAt();
  if (next === undefined || closed || next >= timerAt) return;
  clearTimeout(timer);
  timerAt = next;
  timer = setTimeout(flush, Math.max(0, next - performance.now()));
}

function forward(out: Outgoing): void {
  const now = performance.now();
  const verdict = out.direction.admit(out.data.length, now);
  if (verdict.kind === 'drop') return;
  // nothing queued ahead of it and nothing to wait for: out now, without a timer
  if (verdict.at <= now && pending.size === 0) {
    send(out);
    return;
  }
  pending.push(verdict.at, out);
  arm();
}

function upstreamFor(client: RemoteInfo): Socket {
  const key = `${client.address}:${client.port}`;
  let socket = upstreams.get(key);
  if (socket) return socket;
  socket = createSocket({ type: 'udp4', recvBufferSize: BUFFER_BYTES, sendBufferSize: BUFFER_BYTES });
  socket.on('error', (err) => process.stderr.write(`impaired link: upstream ${key}: ${err.message}\n`));
  socket.on('message', (data, from) => {
    if (from.port !== start.target.port || from.address !== start.target.host) return;
    forward({ direction: down, socket: listener, data, host: client.address, port: client.port });
  });
  socket.bind(0, start.target.host === '127.0.0.1' ? '127.0.0.1' : undefined);
  upstreams.set(key, socket);
  return socket;
}

listener.on('error', (err) => process.stderr.write(`impaired link: ${err.message}\n`));
listener.on('message', (data, client) => {
  forward({ direction: up, socket: upstreamFor(client), data, host: start.target.host, port: start.target.port });
});

function directionStats(direction: ImpairedDirection, now: number): DirectionStats {
  let inFlight = 0;
  // the queue is small (a few hundred packets at most): counting it is cheap
  for (const out of pending.items()) if (out.direction === direction) inFlight++;
  return { ...direction.counters(), backlogMs: direction.backlogMs(now), inFlight };
}

function stats(): LinkStats {
  const now = performance.now();
  return { up: directionStats(up, now), down: directionStats(down, now), clients: upstreams.size, settings };
}

function shutdown(): void {
  if (closed) return;
  closed = true;
  clearTimeout(timer);
  pending.clear();
  for (const socket of upstreams.values()) socket.close();
  upstreams.clear();
  listener.close();
}

process.on('message', (request: LinkRequest) => {
  switch (request.op) {
    case 'set':
      try {
        settings = applyPatch(settings, request.patch);
      } catch (err) {
        reply({ op: 'reply', id: request.id, ok: false, error: err instanceof Error ? err.message : String(err) });
        return;
      }
      up.update(settings.up);
      down.update(settings.down);
      reply({ op: 'reply', id: request.id, ok: true, result: settings });
      return;
    case 'stats':
      reply({ op: 'reply', id: request.id, ok: true, result: stats() });
      return;
    case 'close':
      shutdown();
      reply({ op: 'reply', id: request.id, ok: true });
      process.disconnect();
      return;
  }
});
// the test process went away: nothing is left to forward for
process.on('disconnect', shutdown);

listener.bind(start.listen.port, start.listen.host, () => reply({ op: 'ready', port: listener.address().port }));
