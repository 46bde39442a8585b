/**
 * The cluster (docs/operations/scale-out.md) beside the embedded default, in the same run:
 * - issuance: `POST /v1/rtc/tokens` on two token processes on PostgreSQL and Redis (wrk on each at
 *   once, half the connections each) against one embedded process on SQLite (all the connections);
 * - revocation across nodes: revoke answered by a token process, 4003 seen by the app on a media
 *   process, against the same in one embedded process (api, token and media together).
 * Prints one JSON line per figure; see docs/operations/benchmarks.md.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { connect, type MediaToken } from '../sdk/app/src/index.ts';
import { startPostgres, type Postgres } from '../test/helpers/postgres.ts';
import { startRedis, type RedisServer } from '../test/helpers/redis.ts';
import { postJson } from './lib/http.ts';
import { measureLoad, type LoadMeasurement } from './lib/measure.ts';
import { basicAuthorization, createCredential, startPlatformServer, type PlatformOptions } from './lib/platform.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress, removeWork, reportProblems, runBench } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'cluster';
const BODY = JSON.stringify({ room_id: 'r1', user_id: 'u1', role: 'speaker', publish_streams: [1] });
const WARMUP_REVOCATIONS = 20;
const TARGET_CROSS_NODE_P99_MS = 50;

const durationSeconds = intSetting('BENCH_DURATION_SECONDS', 10, 1, 30);
const warmupSeconds = intSetting('BENCH_WARMUP_SECONDS', 3, 0, 30);
const connections = intSetting('BENCH_CONNECTIONS', 50, 2, 1000);
const revocations = intSetting('BENCH_REVOCATIONS', 200, 50, 5000);

// the limits must not be what is measured
const UNLIMITED = { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000000', RTC_MEDIA_PUBLIC_HOST: '127.0.0.1' };

type Token = MediaToken & { readonly media: MediaToken['media'] & { readonly revocation_handle: string } };

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function load(server: ServerProcess, authorization: string, conns: number): Promise<LoadMeasurement> {
  return measureLoad({
    pid: server.pid, url: `${server.urls['token']!}/v1/rtc/tokens`, script: 'post.lua', connections: conns, threads: 1,
    warmupSeconds, durationSeconds, env: { BENCH_BODY: BODY, BENCH_AUTHORIZATION: authorization },
  });
}

function failures(what: string, m: LoadMeasurement): string[] {
  const { errors, requests, statuses } = m.wrk;
  const problems: string[] = [];
  if (requests === 0) problems.push(`${what}: no request completed`);
  if (errors.connect + errors.read + errors.write + errors.timeout > 0) problems.push(`${what}: socket errors ${JSON.stringify(errors)}`);
  const others = Object.entries(statuses).filter(([status]) => status !== '200');
  if (others.length > 0 || errors.status > 0) problems.push(`${what}: statuses other than 200: ${JSON.stringify(Object.fromEntries(others))}`);
  return problems;
}

/** Revoke-to-close latencies: tokens issued and revoked on `tokenNode`, sessions held wherever their room was placed. */
async function revocationLatencies(tokenNode: ServerProcess, authorization: string, count: number): Promise<number[]> {
  const url = tokenNode.urls['token']!;
  const latencies: number[] = [];
  for (let i = 0; i < WARMUP_REVOCATIONS + count; i++) {
    const res = await postJson(`${url}/v1/rtc/tokens`, JSON.stringify({ room_id: `revoke-${i % 8}`, user_id: `user-${i}`, role: 'audience', subscribe_room: true }), { authorization });
    if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
    const token = JSON.parse(res.text) as Token;
    const session = await connect({ token, WebSocket, secure: false, reconnect: false });
    const closed = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`revocation ${i}: the session was not closed within 5 s`)), 5000);
      session.on('revoked', () => {
        clearTimeout(timer);
        resolve(performance.now());
      });
    });
    const revoked = await postJson(`${url}/v1/rtc/tokens/revoke`, JSON.stringify({ revocation_handle: token.media.revocation_handle }), { authorization });
    const answeredAt = performance.now();
    if (revoked.status !== 200) throw new Error(`revocation: ${revoked.status} ${revoked.text}`);
    const closedAt = await closed;
    if (i >= WARMUP_REVOCATIONS) latencies.push(Math.max(0, closedAt - answeredAt));
  }
  return latencies.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rtc-bench-cluster-'));
  const started: ServerProcess[] = [];
  let postgres: Postgres | undefined;
  let redis: RedisServer | undefined;
  const problems: string[] = [];
  const start = async (name: string, options: Omit<PlatformOptions, 'stderrFile'>): Promise<ServerProcess> => {
    const server = await startPlatformServer({ ...options, stderrFile: join(work, `${name}.log`) });
    started.push(server);
    return server;
  };
  try {
    progress(`${BENCH}: ${connections} connections, ${warmupSeconds} s warm-up + ${durationSeconds} s per run, ${revocations} revocations`);
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    const clusterEnv = { ...UNLIMITED, DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url };

    const embedded = await start('embedded', { dataDir: join(work, 'embedded'), roles: ['api', 'token', 'media'], env: UNLIMITED });
    const [a, b, media] = await Promise.all([
      start('token-a', { dataDir: join(work, 'a'), roles: ['api', 'token'], env: clusterEnv }),
      start('token-b', { dataDir: join(work, 'b'), roles: ['api', 'token'], env: clusterEnv }),
      start('media', { dataDir: join(work, 'media'), roles: ['media'], env: clusterEnv }),
    ]);

    const embeddedCred = await createCredential(embedded.urls['api']!);
    const clusterCred = await createCredential(a.urls['api']!);
    const embeddedAuth = basicAuthorization(embeddedCred.appId, embeddedCred.appSecret);
    const clusterAuth = basicAuthorization(clusterCred.appId, clusterCred.appSecret);

    progress('embedded, one process...');
    const single = await load(embedded, embeddedAuth, connections);
    progress('cluster, two token processes at once...');
    const [onA, onB] = await Promise.all([load(a, clusterAuth, connections / 2), load(b, clusterAuth, connections / 2)]);
    problems.push(...failures('embedded', single), ...failures('cluster A', onA), ...failures('cluster B', onB));

    const clusterRate = onA.wrk.requestsPerSecond + onB.wrk.requestsPerSecond;
    const clusterCpu = ((onA.cpuSeconds + onB.cpuSeconds) * 1e6) / (onA.wrk.requests + onB.wrk.requests);
    const clusterP99 = Math.max(onA.wrk.latencyMs.p99, onB.wrk.latencyMs.p99);
    progress(`embedded ${Math.round(single.wrk.requestsPerSecond)} tokens/s, p99 ${single.wrk.latencyMs.p99} ms, ${single.cpuMicrosPerRequest.toFixed(0)} us CPU/token`);
    progress(`cluster ${Math.round(clusterRate)} tokens/s, p99 ${clusterP99} ms, ${clusterCpu.toFixed(0)} us CPU/token (token processes only)`);
    printFigure({ bench: BENCH, figure: 'issuance_throughput', value: clusterRate, unit: 'tokens/s', baseline: single.wrk.requestsPerSecond, nodes: 2 });
    printFigure({ bench: BENCH, figure: 'issuance_latency_p99', value: clusterP99, unit: 'ms', baseline: single.wrk.latencyMs.p99 });
    printFigure({ bench: BENCH, figure: 'issuance_cpu_per_token', value: clusterCpu, unit: 'us', baseline: single.cpuMicrosPerRequest });

    progress(`${revocations} revocations in one process, then across processes...`);
    const local = await revocationLatencies(embedded, embeddedAuth, revocations);
    const crossNode = await revocationLatencies(b, clusterAuth, revocations);
    if (new URL(media.urls['media']!).port === new URL(embedded.urls['media']!).port) throw new Error('the media nodes are not distinct');
    const p99 = percentile(crossNode, 99);
    progress(`cross-node p50 ${percentile(crossNode, 50).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms; in-process p99 ${percentile(local, 99).toFixed(2)} ms`);
    printFigure({ bench: BENCH, figure: 'cross_node_revoke_to_close_p50', value: percentile(crossNode, 50), unit: 'ms', baseline: percentile(local, 50), samples: revocations });
    printFigure({
      bench: BENCH, figure: 'cross_node_revoke_to_close_p99', value: p99, unit: 'ms', baseline: percentile(local, 99), samples: revocations,
      target_max: TARGET_CROSS_NODE_P99_MS, meets_target: p99 < TARGET_CROSS_NODE_P99_MS,
    });
  } finally {
    await Promise.allSettled(started.map((s) => s.stop()));
    await redis?.dispose();
    await postgres?.stop();
    removeWork(work);
  }
  reportProblems(problems);
}

runBench(BENCH, main);
