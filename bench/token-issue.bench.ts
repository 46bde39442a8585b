/**
 * `POST /v1/rtc/tokens` under load: the embedded process (every role, as `npm start` runs it)
 * against a bare node:http server doing the same cryptography (bench/baseline/token-server.ts)
 * and against a LiveKit customer's token endpoint (bench/baseline/livekit-server.ts), all measured
 * in the same run on loopback, and the token role alone in a process of its own.
 * Prints one JSON line per figure; see docs/operations/benchmarks.md.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transpileStandalone } from './lib/compile.ts';
import { postJson } from './lib/http.ts';
import { measureLoad, type LoadMeasurement } from './lib/measure.ts';
import {
  EMBEDDED_ROLES, basicAuthorization, createCredential, npmStartEnvironment, startPlatformServer, type BenchCredential,
} from './lib/platform.ts';
import { startServerProcess, type ServerProcess } from './lib/process.ts';
import { printFigure, progress, removeWork, reportProblems, runBench } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'token-issue';
const BODY = JSON.stringify({ room_id: 'r1', user_id: 'u1', role: 'speaker', publish_streams: [1] });
const PATH = '/v1/rtc/tokens';

// targets of the token API (docs/operations/benchmarks.md)
const TARGET_THROUGHPUT_RATIO = 0.75;
const TARGET_LIVEKIT_RATIO = 1.5;
const TARGET_P99_MS = 10;
const TARGET_CPU_MICROS = 100;
const TARGET_PEAK_RSS_MB = 120;

const durationSeconds = intSetting('BENCH_DURATION_SECONDS', 10, 1, 30);
const warmupSeconds = intSetting('BENCH_WARMUP_SECONDS', 3, 0, 30);
const connections = intSetting('BENCH_CONNECTIONS', 50, 1, 1000);
const threads = intSetting('BENCH_WRK_THREADS', 1, 1, 8);

interface Sample {
  readonly status: number;
  readonly bytes: number;
  readonly json: Record<string, unknown>;
}

async function post(url: string, authorization: string): Promise<Sample> {
  const res = await postJson(url, BODY, { authorization });
  return { status: res.status, bytes: Buffer.byteLength(res.text), json: JSON.parse(res.text) as Record<string, unknown> };
}

function jwsPart(token: string, index: number): Record<string, unknown> {
  const part = token.split('.')[index];
  if (part === undefined) throw new Error('the grant is not a compact JWS');
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Checks the server's answers before loading it, and reads what the baseline must imitate. */
async function probe(url: string, good: string, bad: string): Promise<Sample> {
  const ok = await post(url, good);
  if (ok.status !== 200) throw new Error(`${url}: a valid token request got ${ok.status}: ${JSON.stringify(ok.json)}`);
  const denied = await post(url, bad);
  if (denied.status !== 401) throw new Error(`${url}: a wrong secret got ${denied.status}, not 401`);
  return ok;
}

function baselineSettings(sample: Sample, cred: BenchCredential): Record<string, string> {
  const media = sample.json['media'] as Record<string, unknown>;
  const grant = String(media['grant']);
  const header = jwsPart(grant, 0);
  const claims = jwsPart(grant, 1);
  return {
    BASELINE_APP_ID: cred.appId,
    BASELINE_APP_SECRET: cred.appSecret,
    BASELINE_PROJECT_ID: cred.projectId,
    BASELINE_ISSUER: String(claims['iss']),
    BASELINE_SIGNING_KID: String(header['kid']),
    BASELINE_MEDIA_KID: String((claims['cnf'] as Record<string, unknown>)['kid']),
    BASELINE_SFU_HOST: String(media['sfu_host']),
    BASELINE_SFU_PORT: String(media['sfu_port']),
  };
}

/**
 * The LiveKit customer's endpoint (bench/baseline/livekit-server.ts) on bare `node`, taking the
 * platform credential's App ID and secret, so that the same wrk script loads it.
 */
function startLiveKitEndpoint(work: string, cred: BenchCredential, mediaUrl: string): Promise<ServerProcess> {
  const source = fileURLToPath(new URL('./baseline/livekit-server.ts', import.meta.url));
  return startServerProcess({
    command: process.execPath,
    args: [transpileStandalone(source, work, ['express', 'livekit-server-sdk'])],
    cwd: work,
    roles: ['livekit'],
    stderrFile: join(work, 'livekit.log'),
    env: {
      PATH: process.env['PATH'] ?? '',
      // express's production mode, as a deployed endpoint runs
      NODE_ENV: 'production',
      LIVEKIT_BASELINE_CLIENT_KEY: cred.appId,
      LIVEKIT_BASELINE_CLIENT_SECRET: cred.appSecret,
      LIVEKIT_BASELINE_SERVER_URL: mediaUrl,
    },
  });
}

/** A different X-Forwarded-For block for the warm-up and the measured run (post-forwarded.lua). */
const FORWARDED_WARMUP = { BENCH_ADDRESS_OFFSET: '0' };
const FORWARDED_MEASURED = { BENCH_ADDRESS_OFFSET: String(8 * 1048576) };

async function load(server: ServerProcess, url: string, authorization: string, forwarded: boolean): Promise<LoadMeasurement> {
  const env = { BENCH_BODY: BODY, BENCH_AUTHORIZATION: authorization };
  return measureLoad({
    pid: server.pid,
    url,
    script: forwarded ? 'post-forwarded.lua' : 'post.lua',
    connections,
    threads,
    warmupSeconds,
    durationSeconds,
    env: forwarded ? { ...env, ...FORWARDED_MEASURED } : env,
    warmupEnv: forwarded ? { ...env, ...FORWARDED_WARMUP } : env,
  });
}

function describe(what: string, m: LoadMeasurement): string {
  return `${what}: ${Math.round(m.wrk.requestsPerSecond)} req/s, p50 ${m.wrk.latencyMs.p50} ms, p99 ${m.wrk.latencyMs.p99} ms, `
    + `${m.cpuMicrosPerRequest.toFixed(1)} us CPU/req, peak RSS ${(m.peakRssBytes / 2 ** 20).toFixed(1)} MB `
    + `(${(m.peakRssSinceStartBytes / 2 ** 20).toFixed(1)} MB since start)`;
}

/** Problems that make a measurement meaningless (errors, unexpected statuses). */
function check(what: string, m: LoadMeasurement, expectStatus: number, problems: string[]): void {
  const { errors, requests, statuses } = m.wrk;
  if (requests === 0) problems.push(`${what}: no request completed`);
  if (errors.connect + errors.read + errors.write + errors.timeout > 0) {
    problems.push(`${what}: socket errors ${JSON.stringify(errors)}`);
  }
  const failures = expectStatus < 400 ? errors.status : requests - errors.status;
  if (failures > 0) problems.push(`${what}: ${failures} of ${requests} responses had another status than ${expectStatus}`);
  const others = Object.entries(statuses).filter(([status]) => Number(status) !== expectStatus);
  if (others.length > 0) problems.push(`${what}: unexpected statuses ${JSON.stringify(Object.fromEntries(others))}`);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rtc-bench-token-'));
  const started: ServerProcess[] = [];
  const problems: string[] = [];
  try {
    progress(`${BENCH}: ${connections} connections, ${threads} wrk thread(s), ${warmupSeconds} s warm-up + ${durationSeconds} s per run`);
    const env = {
      // the limits must not be what is measured; failed authentications come from many addresses
      RTC_APP_RATE_LIMIT_PER_MINUTE: '100000000',
      RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000000',
      RTC_TRUST_PROXY: '127.0.0.1/32',
      ...await npmStartEnvironment(),
    };
    const platform = await startPlatformServer({
      dataDir: join(work, 'data'), stderrFile: join(work, 'server.log'), roles: EMBEDDED_ROLES, env,
    });
    started.push(platform);
    const cred = await createCredential(platform.urls['api']!);
    const good = basicAuthorization(cred.appId, cred.appSecret);
    // a wrong secret of the right form: the App ID exists, so the whole check runs
    const bad = basicAuthorization(cred.appId, `sk_${'A'.repeat(43)}`);
    const serverUrl = `${platform.urls['token']!}${PATH}`;
    const sample = await probe(serverUrl, good, bad);

    const script = transpileStandalone(fileURLToPath(new URL('./baseline/token-server.ts', import.meta.url)), work);
    const baseline = await startServerProcess({
      command: process.execPath,
      args: [script],
      cwd: work,
      roles: ['baseline'],
      stderrFile: join(work, 'baseline.log'),
      env: { PATH: process.env['PATH'] ?? '', ...baselineSettings(sample, cred) },
    });
    started.push(baseline);
    const baselineUrl = `${baseline.urls['baseline']!}${PATH}`;
    const baselineSample = await probe(baselineUrl, good, bad);
    const livekit = await startLiveKitEndpoint(work, cred, platform.urls['media']!);
    started.push(livekit);
    const livekitUrl = `${livekit.urls['livekit']!}${PATH}`;
    const livekitSample = await probe(livekitUrl, good, bad);

    progress('baseline, valid requests...');
    const base = await load(baseline, baselineUrl, good, false);
    progress(describe('baseline', base));
    progress('LiveKit endpoint, valid requests...');
    const lk = await load(livekit, livekitUrl, good, false);
    progress(describe('LiveKit endpoint', lk));
    await livekit.stop();
    progress('server, valid requests...');
    const ok = await load(platform, serverUrl, good, false);
    progress(describe('server', ok));
    // the token role alone, on the same data directory: what a token node of a split deployment holds
    const tokenOnly = await startPlatformServer({
      dataDir: join(work, 'data'), stderrFile: join(work, 'token-role.log'), roles: ['token'], env,
    });
    started.push(tokenOnly);
    const tokenOnlyUrl = `${tokenOnly.urls['token']!}${PATH}`;
    await probe(tokenOnlyUrl, good, bad);
    progress('token role alone, valid requests...');
    const alone = await load(tokenOnly, tokenOnlyUrl, good, false);
    progress(describe('token role alone', alone));
    await tokenOnly.stop();
    progress('server, wrong secret from a new address each request...');
    const failed = await load(platform, serverUrl, bad, true);
    progress(describe('server, failed auth', failed));
    progress('baseline, wrong secret...');
    const baseFailed = await load(baseline, baselineUrl, bad, true);
    progress(describe('baseline, failed auth', baseFailed));

    check('baseline', base, 200, problems);
    check('LiveKit endpoint', lk, 200, problems);
    check('server', ok, 200, problems);
    check('token role alone', alone, 200, problems);
    check('server, failed auth', failed, 401, problems);
    check('baseline, failed auth', baseFailed, 401, problems);

    const mb = (bytes: number): number => bytes / 2 ** 20;
    printFigure({
      bench: BENCH, figure: 'throughput', value: ok.wrk.requestsPerSecond, unit: 'tokens/s',
      baseline: base.wrk.requestsPerSecond, target_ratio: TARGET_THROUGHPUT_RATIO,
      meets_target: ok.wrk.requestsPerSecond >= TARGET_THROUGHPUT_RATIO * base.wrk.requestsPerSecond,
    });
    printFigure({
      bench: BENCH, figure: 'token_issue_vs_livekit', value: ok.wrk.requestsPerSecond, unit: 'tokens/s',
      baseline: lk.wrk.requestsPerSecond, target_ratio: TARGET_LIVEKIT_RATIO,
      meets_target: ok.wrk.requestsPerSecond >= TARGET_LIVEKIT_RATIO * lk.wrk.requestsPerSecond,
      floor_ratio: Number((ok.wrk.requestsPerSecond / base.wrk.requestsPerSecond).toFixed(3)),
      cpu_per_request: ok.cpuMicrosPerRequest, baseline_cpu_per_request: lk.cpuMicrosPerRequest,
      cpu_ratio: Number((ok.cpuMicrosPerRequest / lk.cpuMicrosPerRequest).toFixed(3)),
      latency_p99: ok.wrk.latencyMs.p99, baseline_latency_p99: lk.wrk.latencyMs.p99,
      baseline_peak_rss: mb(lk.peakRssBytes), baseline_response_bytes: livekitSample.bytes,
    });
    printFigure({ bench: BENCH, figure: 'latency_p50', value: ok.wrk.latencyMs.p50, unit: 'ms', baseline: base.wrk.latencyMs.p50 });
    printFigure({
      bench: BENCH, figure: 'latency_p99', value: ok.wrk.latencyMs.p99, unit: 'ms', baseline: base.wrk.latencyMs.p99,
      target_max: TARGET_P99_MS, meets_target: ok.wrk.latencyMs.p99 < TARGET_P99_MS,
    });
    printFigure({
      bench: BENCH, figure: 'cpu_per_request', value: ok.cpuMicrosPerRequest, unit: 'us', baseline: base.cpuMicrosPerRequest,
      target_max: TARGET_CPU_MICROS, meets_target: ok.cpuMicrosPerRequest < TARGET_CPU_MICROS,
    });
    printFigure({
      bench: BENCH, figure: 'peak_rss', value: mb(ok.peakRssBytes), unit: 'MB', baseline: mb(base.peakRssBytes),
      target_max: TARGET_PEAK_RSS_MB, meets_target: mb(ok.peakRssBytes) < TARGET_PEAK_RSS_MB,
      // the peak since the process started adds start-up transients (scrypt hashes: 8 MiB each)
      since_start: mb(ok.peakRssSinceStartBytes), baseline_since_start: mb(base.peakRssSinceStartBytes),
      token_role_value: mb(alone.peakRssBytes), token_role_since_start: mb(alone.peakRssSinceStartBytes),
    });
    printFigure({
      bench: BENCH, figure: 'token_role_peak_rss', value: mb(alone.peakRssBytes), unit: 'MB', baseline: mb(base.peakRssBytes),
      since_start: mb(alone.peakRssSinceStartBytes), embedded_value: mb(ok.peakRssBytes),
      throughput: alone.wrk.requestsPerSecond, cpu_per_request: alone.cpuMicrosPerRequest,
    });
    printFigure({
      bench: BENCH, figure: 'failed_auth_throughput', value: failed.wrk.requestsPerSecond, unit: 'requests/s',
      baseline: baseFailed.wrk.requestsPerSecond,
    });
    printFigure({
      bench: BENCH, figure: 'failed_auth_latency_p99', value: failed.wrk.latencyMs.p99, unit: 'ms',
      baseline: baseFailed.wrk.latencyMs.p99,
    });
    printFigure({
      bench: BENCH, figure: 'failed_auth_cpu_per_request', value: failed.cpuMicrosPerRequest, unit: 'us',
      baseline: baseFailed.cpuMicrosPerRequest, success_value: ok.cpuMicrosPerRequest,
      ratio_to_success: Number((failed.cpuMicrosPerRequest / ok.cpuMicrosPerRequest).toFixed(3)),
      target_max_ratio_to_success: 1, meets_target: failed.cpuMicrosPerRequest <= ok.cpuMicrosPerRequest,
    });
    printFigure({
      bench: BENCH, figure: 'failed_auth_peak_rss', value: mb(failed.peakRssBytes), unit: 'MB',
      baseline: mb(baseFailed.peakRssBytes), target_max: TARGET_PEAK_RSS_MB,
      meets_target: mb(failed.peakRssBytes) < TARGET_PEAK_RSS_MB,
    });
    printFigure({ bench: BENCH, figure: 'response_bytes', value: sample.bytes, unit: 'bytes', baseline: baselineSample.bytes });
  } finally {
    await Promise.allSettled(started.map((s) => s.stop()));
    removeWork(work);
  }
  reportProblems(problems);
}

runBench(BENCH, main);
