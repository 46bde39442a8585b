/**
 * Media relay hop: what one relay between media nodes (docs/protocol/relay.md) costs a room, against
 * the same room without it, in one run with the same load generator. Two media processes from dist/
 * (`rtc serve`) on one data directory: A with the api, token and media roles, B with the media role
 * alone; the store's file carries the bus between them, as on the embedded default.
 *
 * - (a) one-way delay added by one relay hop: a publisher on A sends a camera-like load (VP8-looking
 *   video, 1100-byte packets at 170/s, and Opus-sized audio, 160 bytes at 50/s) whose video payload
 *   ends with its send time; BENCH_RELAY_HOP_SUBSCRIBERS [8] subscribers on A (the baseline) and as
 *   many on B, in the same room at the same time, read it from each video packet they receive.
 *   Figures: p50 and p99 of the delay at B's subscribers, beside A's; the hop adds the difference.
 * - (b) CPU per delivered packet: the media processes' CPU (A and B together, /proc, user + system)
 *   per RTP packet delivered to the subscribers, for that room spread over the two processes, against
 *   the same room (same publisher load, twice as many subscribers) all on A (the baseline, B idle).
 *
 * Each room runs after its warm-up (every subscriber receives both streams, then two seconds in a row
 * deliver 97 % of the offered load) for BENCH_RELAY_HOP_SECONDS [5], in BENCH_RELAY_HOP_ROUNDS [3]
 * alternating rounds (one node, two nodes, one node, ...); the CPU figures are each room's best
 * round, the delays those of every round of the room across two nodes. Publisher and subscribers are
 * werift peers in this process (server/src/main/client/media/rtc-client.ts), which answer the
 * server's key-frame requests and send transport-wide feedback as browsers do; the delay includes
 * this process's own event-loop delay, the same for both groups of subscribers.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RtpPacket } from 'werift';
import { vp8Payload, waitFor } from '../server/src/main/client/media/loopback-peer.ts';
import { RtcClient } from '../server/src/main/client/media/rtc-client.ts';
import { feedbackPeerConfig, sendTransportFeedback } from '../server/src/main/client/media/transport-feedback.ts';
import type { WireCredentials } from '../server/src/main/client/media/wire-client.ts';
import { postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer, type BenchCredential } from './lib/platform.ts';
import { readCpuSeconds } from './lib/proc-stats.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress, removeWork, runBench } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';
import { AUDIO, SETTLE_SECONDS, VIDEO, joinCameraPublisher, settle, startCameraLoad, type CameraLoad } from './lib/camera-load.ts';

const BENCH = 'media-relay-hop';
const OFFERED_PER_SUBSCRIBER = VIDEO.perSecond + AUDIO.perSecond;
const PER_NODE = intSetting('BENCH_RELAY_HOP_SUBSCRIBERS', 8, 1, 50);
const MEASURE_SECONDS = intSetting('BENCH_RELAY_HOP_SECONDS', 5, 2, 60);
/** Rounds of each room, alternating (one node, two nodes, ...): the machine is shared, and the best of each is kept. */
const ROUNDS = intSetting('BENCH_RELAY_HOP_ROUNDS', 3, 1, 10);
/** Aims (docs/operations/benchmarks.md): on loopback, a hop adds at most this to p50 and p99 (ms), and the spread room's CPU per packet is at most this many times the one-node room's. */
const AIM_P50_MS = 5;
const AIM_P99_MS = 15;
const AIM_CPU_RATIO = 1.1;
const STAMP_BYTES = 8;

interface Subscriber {
  readonly client: RtcClient;
  /** One-way delays of its video packets while recording (ms). */
  readonly delays: number[];
}

interface Room extends CameraLoad {
  readonly local: Subscriber[];
  readonly remote: Subscriber[];
  close(): Promise<void>;
}

interface Measured {
  readonly packetsPerSecond: number;
  readonly cpuMicrosPerPacket: number;
  /** Cores busy: A, B and this process. */
  readonly loads: readonly [number, number, number];
}

let recording = false;

async function issue(api: string, cred: BenchCredential, body: Record<string, unknown>): Promise<{ media: WireCredentials }> {
  const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify(body), { authorization: basicAuthorization(cred.appId, cred.appSecret) });
  if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
  return JSON.parse(res.text) as { media: WireCredentials };
}

/** A subscriber on the media node at `url`, receiving both streams once the node shows them. */
async function subscribe(url: string, token: { media: WireCredentials }): Promise<Subscriber> {
  const delays: number[] = [];
  const onRtp = (streamId: number, packet: RtpPacket): void => {
    if (!recording || streamId !== VIDEO.streamId || packet.payload.length < VIDEO.bytes) return;
    delays.push(performance.now() - packet.payload.readDoubleLE(packet.payload.length - STAMP_BYTES));
  };
  const client = await RtcClient.join(url, token, { keepPayloads: false, peer: feedbackPeerConfig(), onRtp });
  // a node that relays the streams shows them once it learned them and holds their keys
  const shown = (id: number): boolean => client.wire.controls.some((c) => (c.type === 'joined' ? (c['streams'] as { stream_id: number }[]) : c.type === 'stream_added' ? [c['stream'] as { stream_id: number }] : [])
    .some((s) => s.stream_id === id));
  await waitFor(() => shown(VIDEO.streamId) && shown(AUDIO.streamId), 'both streams shown to the subscriber', 30_000);
  const got = await client.negotiate([
    { streamId: VIDEO.streamId, kind: 'video', direction: 'recv' }, { streamId: AUDIO.streamId, kind: 'audio', direction: 'recv' },
  ]);
  if (got.refused.length > 0) throw new Error(`a subscriber's m-lines were refused: ${got.refused.join(', ')}`);
  return { client, delays };
}

/** A room: its publisher on A, `onA` subscribers on A and `onB` on B. */
async function openRoom(a: string, b: string, api: string, cred: BenchCredential, onA: number, onB: number): Promise<Room> {
  const room = `hop-${onA}-${onB}-${randomBytes(4).toString('hex')}`;
  const clients: RtcClient[] = [];
  const stops: (() => void)[] = [];
  const close = async (): Promise<void> => {
    for (const stop of stops) stop();
    for (const c of clients) await c.close();
  };
  try {
    const publisher = await joinCameraPublisher(a, await issue(api, cred, {
      room_id: room, user_id: 'publisher', role: 'speaker', publish_streams: [VIDEO.streamId, AUDIO.streamId],
    }));
    clients.push(publisher);
    const join = async (url: string, count: number, node: string): Promise<Subscriber[]> => {
      const subs: Subscriber[] = [];
      for (let i = 0; i < count; i++) {
        const sub = await subscribe(url, await issue(api, cred, { room_id: room, user_id: `sub-${node}-${i}`, role: 'audience', subscribe_room: true }));
        clients.push(sub.client);
        subs.push(sub);
      }
      return subs;
    };
    const local = await join(a, onA, 'a');
    const remote = await join(b, onB, 'b');
    for (const sub of [...local, ...remote]) {
      await sub.client.waitConnected(30_000);
      stops.push(sendTransportFeedback(sub.client));
    }
    // the server starts a subscriber's video on a key frame and asks the publisher for one: the next video packet answers it
    const inter = vp8Payload(VIDEO.bytes);
    const key = vp8Payload(VIDEO.bytes, true);
    const audio = randomBytes(AUDIO.bytes);
    let answeredPlis = 0;
    const all = [...local, ...remote];
    return {
      local, remote, close,
      sendVideo: () => {
        const plis = publisher.pliReceived(VIDEO.streamId);
        const payload = Buffer.from(plis > answeredPlis ? key : inter);
        answeredPlis = plis;
        payload.writeDoubleLE(performance.now(), payload.length - STAMP_BYTES);
        publisher.sendRtp(VIDEO.streamId, payload);
      },
      sendAudio: () => publisher.sendRtp(AUDIO.streamId, audio),
      received: () => all.reduce((sum, s) => sum + s.client.receivedCount(VIDEO.streamId) + s.client.receivedCount(AUDIO.streamId), 0),
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function measure(room: Room, nodes: readonly [ServerProcess, ServerProcess], what: string): Promise<Measured> {
  const subscribers = room.local.length + room.remote.length;
  const offered = OFFERED_PER_SUBSCRIBER * subscribers;
  const stop = startCameraLoad(room);
  try {
    await waitFor(() => [...room.local, ...room.remote].every((s) => s.client.receivedCount(VIDEO.streamId) > 0 && s.client.receivedCount(AUDIO.streamId) > 0),
      `${what}: both streams at every subscriber`, 30_000);
    if (!await settle(room, offered)) progress(`${what}: less than the offered load gets through after ${SETTLE_SECONDS} s; measuring what does`);
    const cpu = (): number => readCpuSeconds(nodes[0].pid) + readCpuSeconds(nodes[1].pid);
    const before = {
      received: room.received(), cpu: cpu(), a: readCpuSeconds(nodes[0].pid), b: readCpuSeconds(nodes[1].pid), client: process.cpuUsage(), at: performance.now(),
    };
    recording = true;
    await new Promise((resolve) => setTimeout(resolve, MEASURE_SECONDS * 1000));
    recording = false;
    const seconds = (performance.now() - before.at) / 1000;
    const packets = room.received() - before.received;
    const client = process.cpuUsage(before.client);
    progress(`${what}: ${Math.round(packets / seconds)} of ${offered} packets/s delivered`);
    return {
      packetsPerSecond: packets / seconds,
      cpuMicrosPerPacket: packets === 0 ? Number.NaN : ((cpu() - before.cpu) * 1e6) / packets,
      loads: [(readCpuSeconds(nodes[0].pid) - before.a) / seconds, (readCpuSeconds(nodes[1].pid) - before.b) / seconds, (client.user + client.system) / 1e6 / seconds],
    };
  } finally {
    recording = false;
    await stop();
  }
}

const cores = (load: number): number => Number(load.toFixed(2));

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

runBench(BENCH, async () => {
  const work = mkdtempSync(join(tmpdir(), 'bench-relay-hop-'));
  const started: ServerProcess[] = [];
  try {
    progress('starting node A (api, token, media) and node B (media) on one data directory...');
    const env = { RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000' };
    const a = await startPlatformServer({ dataDir: join(work, 'data'), stderrFile: join(work, 'node-a.log'), roles: ['api', 'token', 'media'], env });
    started.push(a);
    const b = await startPlatformServer({ dataDir: join(work, 'data'), stderrFile: join(work, 'node-b.log'), roles: ['media'], env });
    started.push(b);
    const api = a.urls['api']!;
    const cred = await createCredential(api);
    const nodes = [a, b] as const;

    const local: number[] = [];
    const remote: number[] = [];
    const alone: Measured[] = [];
    const spread: Measured[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      progress(`round ${round} of ${ROUNDS}: the room on one node, a publisher and ${PER_NODE * 2} subscribers on A...`);
      const one = await openRoom(a.urls['media']!, b.urls['media']!, api, cred, PER_NODE * 2, 0);
      try {
        alone.push(await measure(one, nodes, `round ${round}, one node`));
      } finally {
        await one.close();
      }
      progress(`round ${round} of ${ROUNDS}: the room across two nodes, a publisher and ${PER_NODE} subscribers on A, ${PER_NODE} on B...`);
      const two = await openRoom(a.urls['media']!, b.urls['media']!, api, cred, PER_NODE, PER_NODE);
      try {
        spread.push(await measure(two, nodes, `round ${round}, two nodes`));
        for (const s of two.local) local.push(...s.delays);
        for (const s of two.remote) remote.push(...s.delays);
      } finally {
        await two.close();
      }
    }
    const best = (rounds: readonly Measured[]): Measured => rounds.reduce((x, y) => (y.cpuMicrosPerPacket < x.cpuMicrosPerPacket ? y : x));
    const bestAlone = best(alone);
    const bestSpread = best(spread);
    const perRound = (rounds: readonly Measured[]): number[] => rounds.map((m) => Number(m.cpuMicrosPerPacket.toFixed(1)));

    const load = `${VIDEO.perSecond} video + ${AUDIO.perSecond} audio packets/s from one publisher`;
    // the machine's load average over the last minute: on a shared machine, the tail of a delay that needs two processes scheduled follows it
    const machineLoad = cores(loadavg()[0]!);
    for (const [p, aim] of [[50, AIM_P50_MS], [99, AIM_P99_MS]] as const) {
      const value = percentile(remote, p);
      const baseline = percentile(local, p);
      printFigure({
        bench: BENCH, figure: `one_way_delay_p${p}_relayed`, value, unit: 'ms', baseline,
        added_ms: value - baseline, target_max_added_ms: aim, meets_target: value - baseline <= aim,
        packets: { relayed: remote.length, local: local.length }, subscribers_per_node: PER_NODE, load, machine_load_1min: machineLoad,
      });
    }
    const ratio = bestSpread.cpuMicrosPerPacket / bestAlone.cpuMicrosPerPacket;
    printFigure({
      bench: BENCH, figure: 'media_cpu_per_delivered_packet_two_nodes', value: bestSpread.cpuMicrosPerPacket, unit: 'us', baseline: bestAlone.cpuMicrosPerPacket,
      target_ratio_max: AIM_CPU_RATIO, meets_target: ratio <= AIM_CPU_RATIO, subscribers: PER_NODE * 2,
      rounds_us: { two_nodes: perRound(spread), one_node: perRound(alone) },
      delivered_per_s: { two_nodes: bestSpread.packetsPerSecond, one_node: bestAlone.packetsPerSecond, offered: OFFERED_PER_SUBSCRIBER * PER_NODE * 2 },
      cores_busy_a_b_generator: { two_nodes: bestSpread.loads.map(cores), one_node: bestAlone.loads.map(cores) }, load, machine_load_1min: machineLoad,
    });
  } finally {
    for (const server of started.reverse()) await server.stop();
    removeWork(work);
  }
});
