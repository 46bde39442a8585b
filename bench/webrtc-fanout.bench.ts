/**
 * WebRTC fan-out: one publisher of a camera-like load (VP8-looking video, ~1100-byte RTP packets at
 * 170 packets/s, about 1.5 Mbit/s, plus Opus-sized audio, 160 bytes at 50 packets/s) forwarded to
 * 1, 10 and 50 subscribers by one media process. Measured in the same run against two forwarders on
 * loopback:
 *
 * - the platform's media role (`rtc serve` from dist/): each client is a joined media session
 *   (grant, proof of possession, sealed control) with a werift peer connection negotiated over
 *   `rtc_offer` (test/helpers/webrtc-client.ts); the server receives SRTP, checks each packet's
 *   m-line against the session's publications and each subscriber's grant, and sends it again over
 *   every subscriber's own DTLS-SRTP connection (docs/protocol/media.md, "WebRTC media");
 * - the baseline: the same RTP packets fanned out with no WebRTC session logic at all: a plain
 *   UDP forwarder (node:dgram) that sends every packet it gets from the publisher to N subscriber
 *   sockets; no ICE, no DTLS, no SRTP, no grant. This file is that forwarder (`baseline` argument).
 *
 * Both loads are paced the same way; after a warm-up (every subscriber received both streams) the
 * load runs MEASURE_SECONDS. Figures: RTP packets received by all subscribers together per second
 * (the offered load is 220 × N), and the forwarder's CPU per forwarded packet (/proc, user + system).
 * The load generator (publisher and subscribers, werift SRTP in JavaScript) runs in this process.
 */
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RtpHeader, RtpPacket } from 'werift';
import {
  OPUS_PAYLOAD_TYPE, RtcTestClient, VP8_PAYLOAD_TYPE, vp8Payload, waitFor,
} from '../test/helpers/webrtc-client.ts';
import { postJson } from './lib/http.ts';
import type { WireCredentials } from '../test/helpers/media-wire.ts';
import { basicAuthorization, startMediaAndBaseline, type BenchCredential } from './lib/platform.ts';
import { readCpuSeconds } from './lib/proc-stats.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'webrtc-fanout';
const SELF = fileURLToPath(import.meta.url);
const VIDEO = { streamId: 1, bytes: 1100, perSecond: 170 } as const;
const AUDIO = { streamId: 2, bytes: 160, perSecond: 50 } as const;
const OFFERED_PER_SUBSCRIBER = VIDEO.perSecond + AUDIO.perSecond;
/** Subscriber counts; BENCH_WEBRTC_SUBSCRIBERS (comma-separated, from 1, 10, 50) runs a subset. */
const SUBSCRIBERS = (process.env['BENCH_WEBRTC_SUBSCRIBERS'] ?? '1,10,50').split(',').map(Number).filter((n) => n === 1 || n === 10 || n === 50);
const MEASURE_SECONDS = intSetting('BENCH_WEBRTC_SECONDS', 3, 1, 60);
/** Baseline datagrams: one byte 0 registers the sender as a subscriber, one byte 1 forgets them all. */
const REGISTER = Buffer.from([0]);
const RESET = Buffer.from([1]);

/** A publisher and N subscribers, whichever forwarder they use. */
interface Fanout {
  sendVideo(payload: Buffer): void;
  sendAudio(payload: Buffer): void;
  /** Packets received so far by all subscribers together. */
  received(): number;
  /** Every subscriber received both streams. */
  flowing(): boolean;
  close(): Promise<void>;
}

interface Measured {
  readonly packetsPerSecond: number;
  readonly cpuMicrosPerPacket: number;
  readonly serverLoad: number;
  readonly clientLoad: number;
}

/** Sends the camera-like load until stopped, paced against the clock. */
function startLoad(fanout: Fanout): () => Promise<void> {
  const video = vp8Payload(VIDEO.bytes);
  const audio = randomBytes(AUDIO.bytes);
  const started = performance.now();
  let sentVideo = 0;
  let sentAudio = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const elapsed = (performance.now() - started) / 1000;
      for (; sentVideo < Math.floor(elapsed * VIDEO.perSecond); sentVideo++) fanout.sendVideo(video);
      for (; sentAudio < Math.floor(elapsed * AUDIO.perSecond); sentAudio++) fanout.sendAudio(audio);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return async () => {
    running = false;
    await done;
  };
}

async function measure(fanout: Fanout, pid: number): Promise<Measured> {
  const stop = startLoad(fanout);
  try {
    await waitFor(() => fanout.flowing(), 'both streams at every subscriber', 30_000);
    const before = { received: fanout.received(), cpu: readCpuSeconds(pid), client: process.cpuUsage(), at: performance.now() };
    await new Promise((resolve) => setTimeout(resolve, MEASURE_SECONDS * 1000));
    const packets = fanout.received() - before.received;
    const cpu = readCpuSeconds(pid) - before.cpu;
    const client = process.cpuUsage(before.client);
    const seconds = (performance.now() - before.at) / 1000;
    return {
      packetsPerSecond: packets / seconds, cpuMicrosPerPacket: packets === 0 ? Number.NaN : (cpu * 1e6) / packets,
      serverLoad: cpu / seconds, clientLoad: (client.user + client.system) / 1e6 / seconds,
    };
  } finally {
    await stop();
  }
}

async function issue(api: string, cred: BenchCredential, body: Record<string, unknown>): Promise<{ media: WireCredentials }> {
  const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify(body), { authorization: basicAuthorization(cred.appId, cred.appSecret) });
  if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
  return JSON.parse(res.text) as { media: WireCredentials };
}

async function platformFanout(mediaUrl: string, api: string, cred: BenchCredential, subscribers: number): Promise<Fanout> {
  const room = `webrtc-${subscribers}-${randomBytes(4).toString('hex')}`;
  const clients: RtcTestClient[] = [];
  try {
    const publisher = await RtcTestClient.join(mediaUrl, await issue(api, cred, {
      room_id: room, user_id: 'publisher', role: 'speaker', publish_streams: [VIDEO.streamId, AUDIO.streamId],
    }), { keepPayloads: false });
    clients.push(publisher);
    for (const [id, kind] of [[VIDEO.streamId, 'video'], [AUDIO.streamId, 'audio']] as const) {
      const reply = await publisher.publish(id, kind);
      if (reply.type !== 'published') throw new Error(`publish: ${JSON.stringify(reply)}`);
    }
    const sent = await publisher.negotiate([
      { streamId: VIDEO.streamId, kind: 'video', direction: 'send' }, { streamId: AUDIO.streamId, kind: 'audio', direction: 'send' },
    ]);
    if (sent.refused.length > 0) throw new Error(`the publisher's m-lines were refused: ${sent.refused.join(', ')}`);
    await publisher.waitConnected();
    const subs: RtcTestClient[] = [];
    for (let i = 0; i < subscribers; i++) {
      const sub = await RtcTestClient.join(mediaUrl, await issue(api, cred, {
        room_id: room, user_id: `sub-${i}`, role: 'audience', subscribe_room: true,
      }), { keepPayloads: false });
      clients.push(sub);
      subs.push(sub);
      const got = await sub.negotiate([
        { streamId: VIDEO.streamId, kind: 'video', direction: 'recv' }, { streamId: AUDIO.streamId, kind: 'audio', direction: 'recv' },
      ]);
      if (got.refused.length > 0) throw new Error(`subscriber ${i}: m-lines refused: ${got.refused.join(', ')}`);
    }
    for (const sub of subs) await sub.waitConnected(30_000);
    const count = (sub: RtcTestClient): number => sub.receivedCount(VIDEO.streamId) + sub.receivedCount(AUDIO.streamId);
    return {
      sendVideo: (payload) => publisher.sendRtp(VIDEO.streamId, payload),
      sendAudio: (payload) => publisher.sendRtp(AUDIO.streamId, payload),
      received: () => subs.reduce((sum, sub) => sum + count(sub), 0),
      flowing: () => subs.every((sub) => sub.receivedCount(VIDEO.streamId) > 0 && sub.receivedCount(AUDIO.streamId) > 0),
      close: async () => {
        for (const c of clients) await c.close();
      },
    };
  } catch (err) {
    for (const c of clients) await c.close();
    throw err;
  }
}

function bindUdp(): Promise<Socket> {
  const socket = createSocket('udp4');
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve(socket));
  });
}

/** RTP packets as a publisher's sender would put them on the wire (no SRTP). */
function rtpSource(payloadType: number): (payload: Buffer) => Buffer {
  const ssrc = randomBytes(4).readUInt32BE(0);
  let sequenceNumber = randomBytes(2).readUInt16BE(0);
  let timestamp = randomBytes(4).readUInt32BE(0);
  return (payload) => {
    sequenceNumber = (sequenceNumber + 1) & 0xffff;
    timestamp = (timestamp + 3000) >>> 0;
    return new RtpPacket(new RtpHeader({ payloadType, sequenceNumber, timestamp, ssrc, marker: true }), payload).serialize();
  };
}

async function baselineFanout(url: string, subscribers: number): Promise<Fanout> {
  const { hostname, port: text } = new URL(url);
  const port = Number(text);
  const publisher = await bindUdp();
  publisher.send(RESET, port, hostname);
  const subs: Socket[] = [];
  const received = new Uint32Array(subscribers);
  const byType = new Set<string>();
  for (let i = 0; i < subscribers; i++) {
    const socket = await bindUdp();
    socket.on('message', (msg: Buffer) => {
      if (msg.length === 1) return;
      received[i] = received[i]! + 1;
      // the same per-packet look the werift receiver takes: version and payload type
      if (msg.length > 12 && msg[0]! >> 6 === 2) byType.add(`${i}:${msg[1]! & 0x7f}`);
    });
    subs.push(socket);
  }
  // registration datagrams may be lost like any datagram: repeat until the forwarder echoes each
  const registered = new Set<number>();
  const acks = subs.map((s, i) => {
    const onAck = (msg: Buffer): void => {
      if (msg.length === 1 && msg[0] === 0) registered.add(i);
    };
    s.on('message', onAck);
    return onAck;
  });
  await waitFor(() => {
    subs.forEach((s, i) => {
      if (!registered.has(i)) s.send(REGISTER, port, hostname);
    });
    return registered.size === subscribers;
  }, 'the baseline forwarder to register every subscriber');
  subs.forEach((s, i) => s.off('message', acks[i]!));
  const video = rtpSource(VP8_PAYLOAD_TYPE);
  const audio = rtpSource(OPUS_PAYLOAD_TYPE);
  return {
    sendVideo: (payload) => publisher.send(video(payload), port, hostname),
    sendAudio: (payload) => publisher.send(audio(payload), port, hostname),
    received: () => received.reduce((sum, n) => sum + n, 0),
    flowing: () => byType.size === subscribers * 2,
    close: async () => {
      publisher.send(RESET, port, hostname);
      for (const s of [publisher, ...subs]) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}

/** The baseline forwarder: every datagram from a non-subscriber goes to every registered subscriber. */
async function serveBaseline(): Promise<void> {
  const socket = await bindUdp();
  let subscribers: { port: number; address: string }[] = [];
  const known = new Set<string>();
  socket.on('message', (msg: Buffer, from) => {
    if (msg.length === 1) {
      if (msg[0] === 0) {
        const key = `${from.address}:${from.port}`;
        if (!known.has(key)) {
          known.add(key);
          subscribers.push({ port: from.port, address: from.address });
        }
        socket.send(REGISTER, from.port, from.address);
      } else {
        subscribers = [];
        known.clear();
      }
      return;
    }
    for (const s of subscribers) socket.send(msg, s.port, s.address);
  });
  const { port } = socket.address();
  process.stdout.write(`${JSON.stringify({ role: 'baseline', url: `udp://127.0.0.1:${port}` })}\n`);
  process.on('SIGTERM', () => process.exit(0));
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-webrtc-fanout-'));
  const started: ServerProcess[] = [];
  try {
    progress('starting the platform (api, token, media) and the baseline UDP forwarder...');
    const { platform, baseline, cred } = await startMediaAndBaseline(work, SELF, started);
    const api = platform.urls['api']!;

    for (const n of SUBSCRIBERS) {
      progress(`${n} subscriber(s): joining and negotiating...`);
      const p = await platformFanout(platform.urls['media']!, api, cred, n);
      let platformResult: Measured;
      try {
        platformResult = await measure(p, platform.pid);
      } finally {
        await p.close();
      }
      const b = await baselineFanout(baseline.urls['baseline']!, n);
      let baselineResult: Measured;
      try {
        baselineResult = await measure(b, baseline.pid);
      } finally {
        await b.close();
      }
      const offered = OFFERED_PER_SUBSCRIBER * n;
      progress(`${n} subscriber(s): ${Math.round(platformResult.packetsPerSecond)} RTP packets/s forwarded of ${offered} offered ` +
        `(baseline ${Math.round(baselineResult.packetsPerSecond)}), server CPU ${platformResult.cpuMicrosPerPacket.toFixed(2)} us/packet ` +
        `(baseline ${baselineResult.cpuMicrosPerPacket.toFixed(2)}), cores busy: server ${platformResult.serverLoad.toFixed(2)} ` +
        `client ${platformResult.clientLoad.toFixed(2)} (baseline ${baselineResult.serverLoad.toFixed(2)} / ${baselineResult.clientLoad.toFixed(2)})`);
      printFigure({
        bench: BENCH, figure: `rtp_packets_per_s_${n}_subs`, value: platformResult.packetsPerSecond, unit: 'packets/s',
        baseline: baselineResult.packetsPerSecond, offered, load: `${VIDEO.perSecond} video + ${AUDIO.perSecond} audio packets/s`,
      });
      printFigure({
        bench: BENCH, figure: `server_cpu_per_packet_${n}_subs`, value: platformResult.cpuMicrosPerPacket, unit: 'us',
        baseline: baselineResult.cpuMicrosPerPacket,
      });
    }
  } finally {
    for (const server of started) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'baseline') await serveBaseline();
else await main();
