/**
 * Signaling fan-out: one sender, 100 listeners in one room, every message delivered to every
 * listener over its Server-Sent Events stream. Measured twice on loopback in the same run: the
 * platform's signaling service (tokens, rate limiter, room log, request logs at `info`), and a
 * bare node:http server that only copies each message to every open stream (the floor).
 *
 * Two loads per server: paced at 50 messages/s (the per-token limit a real sender lives with),
 * then saturated (8 requests in flight; the per-token limit is lifted so that the fan-out, not
 * the limiter, is what is measured). Figures: messages/s delivered (to all listeners together),
 * p99 delivery latency (send start to receipt by a listener), server CPU per delivered message.
 *
 * The same file is the server process: `serve` composes the signaling role from the platform's
 * modules, `baseline` runs the floor.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { postJson } from './lib/http.ts';
import { readCpuSeconds } from './lib/proc-stats.ts';
import { startServerProcess, type ServerProcess } from './lib/process.ts';
import { openBenchStream } from './lib/sse.ts';
import { serveBenchSignaling } from './lib/signaling-node.ts';
import { printFigure, progress, removeWork, reportProblems, runBench } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'signaling-fanout';
const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Node flags of the server under test, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (as for the token bench). */
function serverNodeArgs(): string[] {
  return (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
}

const listeners = intSetting('BENCH_LISTENERS', 100, 1, 500);
const seconds = intSetting('BENCH_DURATION_SECONDS', 5, 1, 30);
const warmupSeconds = intSetting('BENCH_WARMUP_SECONDS', 2, 0, 30);
const inflight = intSetting('BENCH_INFLIGHT', 8, 1, 64);
// the documented per-token limit of the signaling service
const PACED_PER_SECOND = 50;
const PAD = 'x'.repeat(160);

// ---------------------------------------------------------------- server processes

interface Tokens {
  readonly sender: string;
  readonly listeners: readonly string[];
}

/** The platform's signaling role, composed as `rtc serve` composes it, with the per-token limit lifted. */
async function serveSignaling(): Promise<void> {
  await serveBenchSignaling({
    tokens: async (issue): Promise<Tokens> => ({
      sender: await issue('sender'),
      listeners: await Promise.all(Array.from({ length: listeners }, (_, i) => issue(`listener-${i}`))),
    }),
  });
}

/** The floor: node:http copying each posted message to every open stream; no token, log or limit. */
async function serveBaseline(): Promise<void> {
  const streams = new Set<ServerResponse>();
  let seq = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      res.write('event: ready\ndata: {}\n\n');
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: unknown };
      seq += 1;
      const frame = `id: b.${seq}\nevent: message\ndata: {"from":"sender","data":${JSON.stringify(body.data)},"at_ms":${Date.now()}}\n\n`;
      for (const stream of streams) stream.write(frame);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"id":"b.${seq}"}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ role: 'baseline', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
  process.on('SIGTERM', () => process.exit(0));
}

// ---------------------------------------------------------------- load

const now = (): number => performance.timeOrigin + performance.now();

interface Recorder {
  phase: string;
  received: number;
  lastReceiveMs: number;
  latencies: number[];
}


/** Opens one listener's stream; counts each message of the current phase and its latency. */
function openListener(url: string, token: string | undefined, lastEventId: string | undefined, recorder: Recorder): Promise<() => void> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  if (lastEventId) headers['last-event-id'] = lastEventId;
  return openBenchStream(url, headers, () => recorder.phase, (sentAt) => {
    const received = now();
    recorder.received += 1;
    recorder.lastReceiveMs = received;
    recorder.latencies.push(received - sentAt);
  });
}

interface Target {
  readonly name: 'server' | 'baseline';
  readonly process: ServerProcess;
  readonly sendUrl: string;
  readonly senderToken: string | undefined;
}

interface PhaseResult {
  readonly sent: number;
  readonly received: number;
  readonly expected: number;
  readonly deliveredPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuMicrosPerDelivery: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function runPhase(target: Target, recorder: Recorder, phase: string, mode: 'paced' | 'saturated', durationSeconds: number): Promise<PhaseResult> {
  recorder.phase = phase;
  recorder.received = 0;
  recorder.latencies = [];
  const agent = new Agent({ keepAlive: true, maxSockets: inflight });
  const body = (seq: number): string => JSON.stringify({
    ...(target.senderToken && { token: target.senderToken }), data: { p: phase, t: now(), seq, pad: PAD },
  });
  const cpuBefore = readCpuSeconds(target.process.pid);
  const started = now();
  const until = started + durationSeconds * 1000;
  let sent = 0;
  let failed = 0;
  const sendOne = async (): Promise<void> => {
    const seq = sent;
    sent += 1;
    const res = await postJson(target.sendUrl, body(seq), {}, agent);
    if (res.status !== 200) failed += 1;
  };
  if (mode === 'paced') {
    const pending: Promise<void>[] = [];
    const interval = 1000 / PACED_PER_SECOND;
    for (let next = started; next < until; next += interval) {
      const wait = next - now();
      if (wait > 0) await delay(wait);
      pending.push(sendOne());
    }
    await Promise.all(pending);
  } else {
    await Promise.all(Array.from({ length: inflight }, async () => {
      while (now() < until) await sendOne();
    }));
  }
  const expected = (sent - failed) * listeners;
  const drainUntil = now() + 15_000;
  while (recorder.received < expected && now() < drainUntil) await delay(20);
  const cpuSeconds = readCpuSeconds(target.process.pid) - cpuBefore;
  agent.destroy();
  if (failed > 0) throw new Error(`${target.name} ${phase}: ${failed} of ${sent} sends failed`);
  const sorted = recorder.latencies.sort((a, b) => a - b);
  return {
    sent,
    received: recorder.received,
    expected,
    deliveredPerSecond: recorder.received / ((recorder.lastReceiveMs - started) / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    cpuMicrosPerDelivery: recorder.received > 0 ? (cpuSeconds * 1e6) / recorder.received : Number.NaN,
  };
}

async function measure(target: Target, listenerTokens: readonly (string | undefined)[], url: string): Promise<{ paced: PhaseResult; saturated: PhaseResult }> {
  const recorder: Recorder = { phase: '', received: 0, lastReceiveMs: 0, latencies: [] };
  const closers: (() => void)[] = [];
  try {
    for (const token of listenerTokens) {
      let lastEventId: string | undefined;
      if (token) {
        const joined = await postJson(`${url}/v1/signaling/join`, JSON.stringify({ token }), {}, new Agent());
        if (joined.status !== 200) throw new Error(`join: ${joined.status} ${joined.text}`);
        lastEventId = (JSON.parse(joined.text) as { last_event_id: string }).last_event_id;
      }
      closers.push(await openListener(url, token, lastEventId, recorder));
    }
    if (target.senderToken) {
      const joined = await postJson(`${url}/v1/signaling/join`, JSON.stringify({ token: target.senderToken }), {}, new Agent());
      if (joined.status !== 200) throw new Error(`join: ${joined.status} ${joined.text}`);
    }
    if (warmupSeconds > 0) await runPhase(target, recorder, 'warmup', 'saturated', warmupSeconds);
    const paced = await runPhase(target, recorder, 'paced', 'paced', seconds);
    progress(`${target.name}, paced ${PACED_PER_SECOND}/s: ${Math.round(paced.deliveredPerSecond)} delivered/s, p50 ${paced.p50.toFixed(2)} ms, p99 ${paced.p99.toFixed(2)} ms`);
    const saturated = await runPhase(target, recorder, 'saturated', 'saturated', seconds);
    progress(`${target.name}, saturated: ${Math.round(saturated.sent / seconds)} sent/s, ${Math.round(saturated.deliveredPerSecond)} delivered/s, `
      + `p50 ${saturated.p50.toFixed(1)} ms, p99 ${saturated.p99.toFixed(1)} ms, ${saturated.cpuMicrosPerDelivery.toFixed(2)} us CPU/delivery`);
    return { paced, saturated };
  } finally {
    for (const close of closers) close();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rtc-bench-signaling-'));
  const started: ServerProcess[] = [];
  const problems: string[] = [];
  try {
    progress(`${BENCH}: 1 sender, ${listeners} listeners, ${warmupSeconds} s warm-up + ${seconds} s paced + ${seconds} s saturated per server`);
    const tokensFile = join(work, 'tokens.json');
    const server = await startServerProcess({
      command: process.execPath, args: [...serverNodeArgs(), '--import', 'tsx', SELF, 'serve'], cwd: ROOT, roles: ['signaling'],
      stderrFile: join(work, 'server.log'),
      env: { PATH: process.env['PATH'] ?? '', BENCH_DATA_DIR: work, BENCH_TOKENS_FILE: tokensFile, BENCH_LISTENERS: String(listeners) },
    });
    started.push(server);
    const tokens = JSON.parse(readFileSync(tokensFile, 'utf8')) as Tokens;
    const serverUrl = server.urls['signaling']!;
    const result = await measure({ name: 'server', process: server, sendUrl: `${serverUrl}/v1/signaling/messages`, senderToken: tokens.sender },
      tokens.listeners, serverUrl);
    await server.stop();

    const baseline = await startServerProcess({
      command: process.execPath, args: ['--import', 'tsx', SELF, 'baseline'], cwd: ROOT, roles: ['baseline'],
      stderrFile: join(work, 'baseline.log'), env: { PATH: process.env['PATH'] ?? '' },
    });
    started.push(baseline);
    const baselineUrl = baseline.urls['baseline']!;
    const base = await measure({ name: 'baseline', process: baseline, sendUrl: `${baselineUrl}/send`, senderToken: undefined },
      Array.from({ length: listeners }, () => undefined), baselineUrl);

    for (const [what, r] of [['server paced', result.paced], ['server saturated', result.saturated], ['baseline saturated', base.saturated]] as const) {
      if (r.received !== r.expected) problems.push(`${what}: ${r.expected - r.received} of ${r.expected} deliveries missing`);
    }
    printFigure({
      bench: BENCH, figure: 'delivered_per_sec', value: result.saturated.deliveredPerSecond, unit: 'messages/s',
      baseline: base.saturated.deliveredPerSecond, listeners, sent_per_sec: result.saturated.sent / seconds,
    });
    printFigure({ bench: BENCH, figure: 'latency_p99', value: result.saturated.p99, unit: 'ms', baseline: base.saturated.p99, load: 'saturated' });
    printFigure({ bench: BENCH, figure: 'latency_p50', value: result.saturated.p50, unit: 'ms', baseline: base.saturated.p50, load: 'saturated' });
    printFigure({
      bench: BENCH, figure: 'paced_latency_p99', value: result.paced.p99, unit: 'ms', baseline: base.paced.p99,
      load: `${PACED_PER_SECOND} messages/s`,
    });
    printFigure({
      bench: BENCH, figure: 'cpu_per_delivery', value: result.saturated.cpuMicrosPerDelivery, unit: 'us',
      baseline: base.saturated.cpuMicrosPerDelivery,
    });
  } finally {
    await Promise.allSettled(started.map((s) => s.stop()));
    removeWork(work);
  }
  reportProblems(problems);
}

const entry = process.argv[2] === 'serve' ? serveSignaling : process.argv[2] === 'baseline' ? serveBaseline : main;
runBench(BENCH, entry);
