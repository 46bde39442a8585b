/**
 * Media relay: one publisher of 1200-byte video frames, fanned out to 1, 10 and 50 subscribers in
 * one room. Measured in the same run against two servers on loopback:
 *
 * - the platform's media role (`rtc serve` from dist/): grant and proof-of-possession handshake,
 *   each frame authenticated once (AES-256-GCM under the stream key), replay window, stream id
 *   checks, per-subscriber bounded queues;
 * - the baseline: the same WebSocket fan-out with no cryptography — the same `ws` settings, the
 *   same header parsing, the same per-subscriber queue and socket writer (server/src/media/frames/
 *   send-queue.ts, socket-sink.ts); no handshake, no authentication, no replay window. This file
 *   is that server (`baseline` argument).
 *
 * The subject is the relay. Clients are a second, independent implementation of the protocol
 * (server/src/main/client/media/wire-client.ts, node:crypto) in this process. Two loads per server and subscriber count:
 *
 * - saturated: the publisher keeps 256 frames in flight (sent and not yet received by every
 *   subscriber) and sends a fixed batch; frames/s delivered = frames received by all subscribers
 *   together / elapsed time. Frames are sealed before the timed batch starts (like a media pipeline
 *   that encoded them ahead): the load generator's own cipher work stays out of the relay's figure.
 *   Subscribers count every frame and check its header; the paced load below opens every frame.
 *   Best of three alternating rounds per server (the machine is shared and noisy).
 * - paced: 1000 frames/s for 2 s; latency from the publisher's send to the frame's arrival at a
 *   subscriber, p50 and p99 over all deliveries (the relay's latency, server-side authentication
 *   included). The first subscriber then opens (authenticates and decrypts) every frame, each other
 *   one frame in ten, and the run fails if one does not open to the payload that was sent.
 *
 * Also: the relay server's CPU per delivered frame, and the app SDK's WebCrypto seal and open rates.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { importAesKey, open as sdkOpen, seal as sdkSeal } from '../sdk/app/src/crypto.ts';
import { encodeHeader as sdkHeader, MAX_CLIENT_MESSAGE_BYTES } from '@rtc/protocol';
import { readHeader } from '../server/src/media/frames/frame.ts';
import {
  MEDIA_QUEUE_MAX_BYTES, MEDIA_QUEUE_MAX_FRAMES, SOCKET_HIGH_WATER_BYTES, CONTROL_QUEUE_MAX_BYTES,
} from '../server/src/media/node/limits.ts';
import { SendQueue } from '../server/src/media/frames/send-queue.ts';
import { socketSink } from '../server/src/media/frames/socket-sink.ts';
import { postJson } from './lib/http.ts';
import { KINDS, WireClient, encodeHeader } from '../server/src/main/client/media/wire-client.ts';
import { basicAuthorization, startMediaAndBaseline, type BenchCredential } from './lib/platform.ts';
import { readCpuSeconds } from './lib/proc-stats.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress } from './lib/report.ts';

const BENCH = 'media-relay';
const SELF = fileURLToPath(import.meta.url);
const FRAME_BYTES = 1200;
const WINDOW = 256;
/** Subscriber counts; BENCH_MEDIA_SUBSCRIBERS (comma-separated, from 1, 10, 50) runs a subset. */
const SUBSCRIBERS = (process.env['BENCH_MEDIA_SUBSCRIBERS'] ?? '1,10,50').split(',').map(Number).filter((n) => n === 1 || n === 10 || n === 50);
const BATCH: Record<number, number> = { 1: 100_000, 10: 40_000, 50: 10_000 };
const ROUNDS = 3;
const WARMUP_FRAMES = 3_000;
const PACED_RATE = 1000;
const PACED_SECONDS = 2;
const TARGET_RATIO = 0.7;

/** One publisher and its subscribers, whichever server they talk to. */
interface Fanout {
  /** Sends frame `i` of the batch being run. */
  send(frame: Buffer): void;
  /** A frame of the current load, ready to send (sealed for the platform, as is for the baseline). */
  frame(payload: Buffer): Buffer;
  /** Each subscriber calls `onFrame(subscriber, message)` per received frame. */
  onFrame: (subscriber: number, message: Buffer) => void;
  /** Opens a received frame (authenticates and decrypts); the baseline returns the payload as is. */
  open(subscriber: number, message: Buffer): Buffer | undefined;
  close(): void;
}

interface Saturated {
  readonly framesPerSecond: number;
  readonly cpuMicrosPerFrame: number;
  /** Share of one core the server and this (client) process used during the batch. */
  readonly serverLoad: number;
  readonly clientLoad: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Sends `frames` keeping at most WINDOW in flight; resolves with the elapsed seconds once all arrived everywhere. */
function runWindowed(fanout: Fanout, frames: readonly Buffer[], subscribers: number): Promise<number> {
  const hits = new Uint16Array(frames.length);
  const received = new Uint32Array(subscribers);
  let sent = 0;
  let completed = 0;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay stalled: ${completed} of ${frames.length} frames delivered`)), 120_000);
    const pump = (): void => {
      while (sent < frames.length && sent - completed < WINDOW) fanout.send(frames[sent++]!);
    };
    fanout.onFrame = (subscriber) => {
      const index = received[subscriber]!;
      received[subscriber] = index + 1;
      const count = hits[index]! + 1;
      hits[index] = count;
      if (count !== subscribers) return;
      completed += 1;
      if (completed === frames.length) {
        clearTimeout(timer);
        resolve((performance.now() - started) / 1000);
        return;
      }
      pump();
    };
    pump();
  });
}

async function saturated(fanout: Fanout, subscribers: number, pid: number): Promise<Saturated> {
  const payload = randomBytes(FRAME_BYTES);
  const warmup = Array.from({ length: WARMUP_FRAMES }, () => fanout.frame(payload));
  await runWindowed(fanout, warmup, subscribers);
  const batch = Array.from({ length: BATCH[subscribers]! }, () => fanout.frame(payload));
  const cpuBefore = readCpuSeconds(pid);
  const clientBefore = process.cpuUsage();
  const seconds = await runWindowed(fanout, batch, subscribers);
  const cpu = readCpuSeconds(pid) - cpuBefore;
  const client = process.cpuUsage(clientBefore);
  const delivered = batch.length * subscribers;
  return {
    framesPerSecond: delivered / seconds, cpuMicrosPerFrame: (cpu * 1e6) / delivered,
    serverLoad: cpu / seconds, clientLoad: (client.user + client.system) / 1e6 / seconds,
  };
}

/** PACED_RATE frames/s; every subscriber opens every frame. Returns send-to-arrival latencies (ms), sorted. */
async function paced(fanout: Fanout, subscribers: number): Promise<Float64Array> {
  const total = PACED_RATE * PACED_SECONDS;
  const sentAt = new Float64Array(total);
  const latencies = new Float64Array(total * subscribers);
  const received = new Uint32Array(subscribers);
  let samples = 0;
  let failures = 0;
  fanout.onFrame = (subscriber, message) => {
    const index = received[subscriber]!;
    received[subscriber] = index + 1;
    latencies[samples++] = performance.now() - sentAt[index]!;
    // the first subscriber opens every frame, the others one in ten: the load generator's own
    // cipher work must not be what delays the next frame
    if (subscriber !== 0 && index % 10 !== subscriber % 10) return;
    const payload = fanout.open(subscriber, message);
    if (!payload || payload.readUInt32BE(0) !== index) failures += 1;
  };
  const payload = Buffer.alloc(FRAME_BYTES);
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * PACED_RATE) + 1);
    for (; sent < due; sent++) {
      payload.writeUInt32BE(sent, 0);
      const frame = fanout.frame(payload);
      sentAt[sent] = performance.now();
      fanout.send(frame);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const deadline = Date.now() + 10_000;
  while (samples < total * subscribers && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  if (samples < total * subscribers) throw new Error(`paced load: ${samples} of ${total * subscribers} deliveries`);
  if (failures > 0) throw new Error(`paced load: ${failures} frames did not open or carried the wrong payload`);
  return latencies.subarray(0, samples).sort();
}

async function issue(api: string, cred: BenchCredential, body: Record<string, unknown>): Promise<{ grant: string; key: string }> {
  const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify(body), { authorization: basicAuthorization(cred.appId, cred.appSecret) });
  if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { media: { grant: string; key: string } }).media;
}

async function platformFanout(mediaUrl: string, api: string, cred: BenchCredential, subscribers: number): Promise<Fanout> {
  const room = `relay-${subscribers}-${randomBytes(4).toString('hex')}`;
  const publisher = await WireClient.join(mediaUrl, await issue(api, cred, { room_id: room, user_id: 'publisher', role: 'speaker', publish_streams: [1] }));
  const subs: WireClient[] = [];
  for (let i = 0; i < subscribers; i++) {
    subs.push(await WireClient.join(mediaUrl, await issue(api, cred, { room_id: room, user_id: `sub-${i}`, role: 'audience', subscribe_room: true })));
  }
  const reply = await publisher.publish(1, 'video');
  if (reply.type !== 'published') throw new Error(`publish: ${JSON.stringify(reply)}`);
  while (!subs.every((s) => s.streamKeys.has(1))) await new Promise((resolve) => setTimeout(resolve, 10));
  const fanout: Fanout = {
    send: (frame) => publisher.ws.send(frame),
    frame: (payload) => publisher.sealFrame(1, payload),
    onFrame: () => undefined,
    open: (subscriber, message) => subs[subscriber]!.openFrame(message),
    close: () => {
      publisher.close();
      for (const s of subs) s.close();
    },
  };
  subs.forEach((s, i) => {
    s.onMedia = (data) => {
      // the same per-frame check the baseline's clients make
      if (data[0] === 1 && data[1] === KINDS.video) fanout.onFrame(i, data);
    };
  });
  return fanout;
}

async function baselineFanout(url: string, subscribers: number): Promise<Fanout> {
  const connect = (path: string): Promise<WebSocket> => new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}${path}`, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
  const subs: WebSocket[] = [];
  for (let i = 0; i < subscribers; i++) subs.push(await connect('/sub'));
  const publisher = await connect('/pub');
  let seq = 0;
  const fanout: Fanout = {
    send: (frame) => publisher.send(frame),
    frame: (payload) => {
      seq += 1;
      // the same size as a sealed frame: header, payload, 16 bytes where the tag would be
      return Buffer.concat([encodeHeader({ kind: KINDS.video, epoch: 1, streamId: 1, seq }), payload, Buffer.alloc(16)]);
    },
    onFrame: () => undefined,
    open: (_subscriber, message) => message.subarray(16, message.length - 16),
    close: () => {
      publisher.close();
      for (const s of subs) s.close();
    },
  };
  subs.forEach((s, i) => s.on('message', (data: Buffer) => {
    // the same per-frame check the platform's clients make
    if (data[0] === 1 && data[1] === KINDS.video) fanout.onFrame(i, data);
  }));
  return fanout;
}

/** The baseline relay: the platform's fan-out without its cryptography. */
async function serveBaseline(): Promise<void> {
  const server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES, perMessageDeflate: false, clientTracking: false });
  const subscribers = new Set<SendQueue>();
  const limits = {
    highWaterBytes: SOCKET_HIGH_WATER_BYTES, mediaMaxBytes: MEDIA_QUEUE_MAX_BYTES,
    mediaMaxFrames: MEDIA_QUEUE_MAX_FRAMES, controlMaxBytes: CONTROL_QUEUE_MAX_BYTES,
  };
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on('error', () => undefined);
    if (req.url === '/sub') {
      const queue = new SendQueue(socketSink(ws, socket), limits);
      socket.on('drain', () => queue.flush());
      subscribers.add(queue);
      ws.on('close', () => subscribers.delete(queue));
      return;
    }
    ws.on('message', (data: Buffer) => {
      const header = readHeader(data);
      if (!header) return ws.close(4004);
      for (const queue of subscribers) queue.pushMedia(header.kind, data);
    });
  }));
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ role: 'baseline', url: `ws://127.0.0.1:${port}` })}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}

async function sdkRates(): Promise<{ seal: number; open: number }> {
  const key = await importAesKey(randomBytes(32));
  const payload = randomBytes(FRAME_BYTES);
  const count = 20_000;
  const sealed: Uint8Array[] = [];
  let started = performance.now();
  // as LocalStream.send does: seals start at once, results are used in order
  for (let i = 0; i < count; i += 64) {
    const batch = Array.from({ length: 64 }, (_, j) => sdkSeal(key, 3, sdkHeader({ kind: 2, epoch: 1, streamId: 1, seq: i + j + 1 }), payload));
    sealed.push(...(await Promise.all(batch)));
  }
  const seal = count / ((performance.now() - started) / 1000);
  started = performance.now();
  // as a session receives: one frame after the other
  for (const message of sealed) if (!(await sdkOpen(key, 3, message))) throw new Error('the SDK could not open its own frame');
  const open = count / ((performance.now() - started) / 1000);
  return { seal, open };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-media-relay-'));
  const started: ServerProcess[] = [];
  try {
    progress('starting the platform (api, token, media) and the baseline relay...');
    const { platform, baseline, cred } = await startMediaAndBaseline(work, SELF, started);
    const api = platform.urls['api']!;

    for (const n of SUBSCRIBERS) {
      const best = { platform: undefined as Saturated | undefined, baseline: undefined as Saturated | undefined };
      const better = (a: Saturated | undefined, b: Saturated): Saturated => (a && a.framesPerSecond >= b.framesPerSecond ? a : b);
      let latency: { platform: Float64Array; baseline: Float64Array } = { platform: new Float64Array(), baseline: new Float64Array() };
      for (let round = 0; round < ROUNDS; round++) {
        const p = await platformFanout(platform.urls['media']!, api, cred, n);
        best.platform = better(best.platform, await saturated(p, n, platform.pid));
        if (round === 0) latency = { ...latency, platform: await paced(p, n) };
        p.close();
        const b = await baselineFanout(baseline.urls['baseline']!, n);
        best.baseline = better(best.baseline, await saturated(b, n, baseline.pid));
        if (round === 0) latency = { ...latency, baseline: await paced(b, n) };
        b.close();
      }
      const p = best.platform!;
      const b = best.baseline!;
      progress(`${n} subscriber(s): ${Math.round(p.framesPerSecond)} frames/s delivered (baseline ${Math.round(b.framesPerSecond)}), ` +
        `server CPU ${p.cpuMicrosPerFrame.toFixed(2)} us/frame (baseline ${b.cpuMicrosPerFrame.toFixed(2)}), ` +
        `cores busy: server ${p.serverLoad.toFixed(2)} client ${p.clientLoad.toFixed(2)} (baseline ${b.serverLoad.toFixed(2)} / ${b.clientLoad.toFixed(2)})`);
      printFigure({
        bench: BENCH, figure: `frames_per_s_${n}_subs`, value: p.framesPerSecond, unit: 'frames/s', baseline: b.framesPerSecond,
        ...(n <= 10 && { target_ratio: TARGET_RATIO }),
      });
      printFigure({ bench: BENCH, figure: `latency_p99_${n}_subs`, value: percentile(latency.platform, 99), unit: 'ms',
        baseline: percentile(latency.baseline, 99), load: `${PACED_RATE} frames/s` });
      printFigure({ bench: BENCH, figure: `latency_p50_${n}_subs`, value: percentile(latency.platform, 50), unit: 'ms',
        baseline: percentile(latency.baseline, 50), load: `${PACED_RATE} frames/s` });
      printFigure({ bench: BENCH, figure: `server_cpu_per_frame_${n}_subs`, value: p.cpuMicrosPerFrame, unit: 'us', baseline: b.cpuMicrosPerFrame });
    }

    progress('app SDK (WebCrypto) seal and open rates...');
    const rates = await sdkRates();
    printFigure({ bench: BENCH, figure: 'sdk_seal_frames_per_s', value: rates.seal, unit: 'frames/s' });
    printFigure({ bench: BENCH, figure: 'sdk_open_frames_per_s', value: rates.open, unit: 'frames/s' });
  } finally {
    for (const server of started) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'baseline') await serveBaseline();
else await main();
