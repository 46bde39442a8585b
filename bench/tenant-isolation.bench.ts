/**
 * One tenant against another (docs/operations/security.md): the latency of project B's token
 * requests while an app user of project A sends hostile RTCP to the media node (transport-cc
 * feedback claiming 65,535 packets each, 30 to a datagram) and project A's server creates rooms
 * ahead as fast as it is answered while twelve listings of its rooms run in parallel. Each phase is
 * measured against project B's latency with nothing else running, in the same run, on one embedded
 * process (api, token and media roles). Target: project B's p99 under 500 ms in every phase.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RtcClient } from '../server/src/main/client/media/rtc-client.ts';
import { hostileDatagram } from '../test/helpers/hostile-rtcp.ts';
import { getJson, postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer, type BenchCredential } from './lib/platform.ts';
import { readCpuSeconds, readPeakRssBytes } from './lib/proc-stats.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'tenant-isolation';
const TARGET_P99_MS = 500;

const phaseSeconds = intSetting('BENCH_PHASE_SECONDS', 8, 2, 60);
const hostileDatagramsPerSecond = intSetting('BENCH_HOSTILE_DATAGRAMS_PER_SECOND', 8, 1, 200);
const listings = intSetting('BENCH_PARALLEL_LISTINGS', 12, 1, 64);
const roomsAhead = intSetting('BENCH_ROOMS_AHEAD', 3000, 0, 100_000);

/** 1,200 bytes: 30 transport-cc feedbacks, each claiming 65,535 packets in 40 bytes. */
const HOSTILE_DATAGRAM = hostileDatagram();

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Latencies {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly count: number;
  readonly failed: number;
  /** The platform process's CPU over the phase, in cores. */
  readonly serverCores: number;
}

/** Project B's token requests, two at a time, for `seconds`. */
async function victimLatencies(serverPid: number, tokenUrl: string, cred: BenchCredential, seconds: number): Promise<Latencies> {
  const cpuBefore = readCpuSeconds(serverPid);
  const startedAt = performance.now();
  const authorization = basicAuthorization(cred.appId, cred.appSecret);
  const deadline = performance.now() + seconds * 1000;
  const times: number[] = [];
  let failed = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const started = performance.now();
      const res = await postJson(`${tokenUrl}/v1/rtc/tokens`, JSON.stringify({ room_id: 'victim', user_id: `u-${times.length}`, role: 'audience', subscribe_room: true }), { authorization });
      times.push(performance.now() - started);
      if (res.status !== 200) failed += 1;
    }
  };
  await Promise.all([worker(), worker()]);
  times.sort((a, b) => a - b);
  const serverCores = (readCpuSeconds(serverPid) - cpuBefore) / ((performance.now() - startedAt) / 1000);
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1) ?? Number.NaN, count: times.length, failed, serverCores };
}

/** An app user of project A that joins the media node over WebRTC and sends hostile RTCP at a steady rate. */
async function startRtcpAttack(mediaUrl: string, tokenUrl: string, cred: BenchCredential): Promise<{ stop(): Promise<number> }> {
  const res = await postJson(`${tokenUrl}/v1/rtc/tokens`, JSON.stringify({ room_id: 'attack', user_id: 'attacker', role: 'speaker', publish_streams: [1] }),
    { authorization: basicAuthorization(cred.appId, cred.appSecret) });
  if (res.status !== 200) throw new Error(`attacker token: ${res.status} ${res.text}`);
  const client = await RtcClient.join(mediaUrl, JSON.parse(res.text) as Parameters<typeof RtcClient.join>[1], { keepPayloads: false });
  const reply = await client.publish(1, 'audio');
  if (reply.type !== 'published') throw new Error(`attacker publish: ${JSON.stringify(reply)}`);
  await client.negotiate([{ streamId: 1, kind: 'audio', direction: 'send' }]);
  await client.waitConnected();
  const transport = client.pc.dtlsTransports[0];
  if (!transport) throw new Error('the attacker has no DTLS transport');
  let sent = 0;
  const timer = setInterval(() => {
    sent += 1;
    void transport.sendRtcp([{ serialize: () => HOSTILE_DATAGRAM } as unknown as Parameters<typeof transport.sendRtcp>[0][number]]);
  }, 1000 / hostileDatagramsPerSecond);
  return {
    async stop() {
      clearInterval(timer);
      await client.close();
      return sent;
    },
  };
}

const ROOM_METADATA = 'x'.repeat(16 * 1024 - 16);

/** One room created ahead with 16 KB of metadata and a 7-day empty timeout; whether it was created. */
async function createRoomAhead(apiUrl: string, authorization: string): Promise<boolean> {
  const body = JSON.stringify({ room_id: `ahead-${randomBytes(8).toString('hex')}`, metadata: ROOM_METADATA, empty_timeout: 604_800 });
  const res = await postJson(`${apiUrl}/v1/rtc/rooms`, body, { authorization });
  return res.status === 200 || res.status === 201;
}

/** Project A creates up to `count` rooms ahead, eight at a time, until the platform refuses one. */
async function fillRoomsAhead(apiUrl: string, cred: BenchCredential, count: number): Promise<number> {
  const authorization = basicAuthorization(cred.appId, cred.appSecret);
  let created = 0;
  let refused = false;
  const worker = async (): Promise<void> => {
    while (!refused && created < count) {
      if (await createRoomAhead(apiUrl, authorization)) created += 1;
      else refused = true;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return created;
}

/** Project A's server: rooms created ahead as fast as answered, and parallel listings. */
function startRoomAttack(apiUrl: string, cred: BenchCredential): { stop(): Promise<{ created: number; refused: number; listed: number }> } {
  const authorization = basicAuthorization(cred.appId, cred.appSecret);
  let running = true;
  let created = 0;
  let refused = 0;
  let listed = 0;
  const creator = async (): Promise<void> => {
    while (running) {
      if (await createRoomAhead(apiUrl, authorization)) created += 1;
      else refused += 1;
    }
  };
  const lister = async (): Promise<void> => {
    while (running) {
      await getJson(`${apiUrl}/v1/rtc/rooms?limit=1`, { authorization });
      listed += 1;
    }
  };
  const all = [creator(), creator(), ...Array.from({ length: listings }, lister)];
  return {
    async stop() {
      running = false;
      await Promise.all(all);
      return { created, refused, listed };
    },
  };
}

function report(phase: string, latencies: Latencies, quiet: Latencies): void {
  progress(`${phase}: p50 ${latencies.p50.toFixed(1)} ms, p99 ${latencies.p99.toFixed(1)} ms, max ${latencies.max.toFixed(1)} ms, ${latencies.count} requests, ${latencies.failed} failed; server ${latencies.serverCores.toFixed(2)} cores`);
  printFigure({ bench: BENCH, figure: `other_project_token_p99_${phase}`, value: latencies.p99, unit: 'ms', samples: latencies.count, target: TARGET_P99_MS, met: latencies.p99 < TARGET_P99_MS && latencies.failed === 0 });
  printFigure({ bench: BENCH, figure: `other_project_token_p99_${phase}_vs_quiet`, value: latencies.p99 / quiet.p99, unit: 'ratio' });
  printFigure({ bench: BENCH, figure: `server_cpu_${phase}`, value: latencies.serverCores, unit: 'cores' });
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-tenant-isolation-'));
  const platform = await startPlatformServer({
    dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
    env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  try {
    const api = platform.urls['api']!;
    const tokenUrl = platform.urls['token'] ?? api;
    const mediaUrl = platform.urls['media']!;
    const attacker = await createCredential(api);
    const victim = await createCredential(api);

    await victimLatencies(platform.pid, tokenUrl, victim, 1);
    const quiet = await victimLatencies(platform.pid, tokenUrl, victim, phaseSeconds);
    report('quiet', quiet, quiet);

    const rtcp = await startRtcpAttack(mediaUrl, tokenUrl, attacker);
    const underRtcp = await victimLatencies(platform.pid, tokenUrl, victim, phaseSeconds);
    const datagrams = await rtcp.stop();
    progress(`hostile RTCP: ${datagrams} datagrams of ${HOSTILE_DATAGRAM.length} bytes (${hostileDatagramsPerSecond}/s)`);
    report('hostile_rtcp', underRtcp, quiet);

    const filled = await fillRoomsAhead(api, attacker, roomsAhead);
    progress(`project A created ${filled} rooms ahead before the measurement`);
    const rooms = startRoomAttack(api, attacker);
    const underRooms = await victimLatencies(platform.pid, tokenUrl, victim, phaseSeconds);
    const roomCounts = await rooms.stop();
    progress(`rooms ahead: ${roomCounts.created} created, ${roomCounts.refused} refused, ${roomCounts.listed} listings`);
    report('rooms_ahead', underRooms, quiet);
    printFigure({ bench: BENCH, figure: 'rooms_created_ahead_by_one_project', value: filled + roomCounts.created, unit: 'rooms' });
    printFigure({ bench: BENCH, figure: 'peak_rss', value: readPeakRssBytes(platform.pid) / 1048576, unit: 'MB' });
  } finally {
    await platform.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
