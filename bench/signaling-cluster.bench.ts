/**
 * Signaling across nodes: two signaling processes whose rooms live in one Redis
 * (docs/operations/scale-out.md, "Signaling"). One sender posts to node A; one listener reads the
 * room's stream on node A (the same node) and one on node B (across nodes). Figures: the latency
 * from the start of the send to the receipt by each listener, p50 and p99, the cross-node figure
 * beside the same-node one as its baseline (their ratio is the cost of crossing nodes), and the
 * same-node figure beside one embedded process (rooms in memory, no Redis: the cost of Redis).
 *
 * The messages are paced (BENCH_RATE per second, 100 by default; the per-token limit is lifted) so
 * that the latency of one message is measured, not a queue. The same file is the server process:
 * `serve` composes the signaling role with the Redis room state.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startRedis, type RedisServer } from '../test/helpers/redis.ts';
import { postJson } from './lib/http.ts';
import { startServerProcess, type ServerProcess } from './lib/process.ts';
import { openBenchStream } from './lib/sse.ts';
import { serveBenchSignaling } from './lib/signaling-node.ts';
import { printFigure, progress, removeWork, reportProblems, runBench } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'signaling-cluster';
const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

const seconds = intSetting('BENCH_DURATION_SECONDS', 5, 1, 30);
const warmupSeconds = intSetting('BENCH_WARMUP_SECONDS', 1, 0, 30);
const rate = intSetting('BENCH_RATE', 100, 1, 2000);
const PAD = 'x'.repeat(160);

interface Tokens {
  readonly sender: string;
  readonly same: string;
  readonly cross: string;
}

/** One signaling node with its rooms in Redis; the first one also issues the bench's tokens. */
async function serveSignaling(): Promise<void> {
  await serveBenchSignaling({
    redisUrl: process.env['REDIS_URL'],
    tokens: async (issue): Promise<Tokens> => ({ sender: await issue('sender'), same: await issue('same'), cross: await issue('cross') }),
  });
}

// ---------------------------------------------------------------- load

const now = (): number => performance.timeOrigin + performance.now();


interface Recorder {
  phase: string;
  latencies: number[];
}

/** Opens a listener's stream; records the latency of each message of the current phase. */
function openListener(url: string, token: string, recorder: Recorder): Promise<() => void> {
  return openBenchStream(url, { authorization: `Bearer ${token}` }, () => recorder.phase,
    (sentAt) => recorder.latencies.push(now() - sentAt));
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function runPhase(sendUrl: string, sender: string, recorders: readonly Recorder[], phase: string, durationSeconds: number): Promise<number> {
  for (const r of recorders) {
    r.phase = phase;
    r.latencies = [];
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const started = now();
  const until = started + durationSeconds * 1000;
  const pending: Promise<void>[] = [];
  let sent = 0;
  let failed = 0;
  for (let next = started; next < until; next += 1000 / rate) {
    const wait = next - now();
    if (wait > 0) await delay(wait);
    const seq = sent;
    sent += 1;
    pending.push(postJson(sendUrl, JSON.stringify({ token: sender, data: { p: phase, t: now(), seq, pad: PAD } }), {}, agent).then((res) => {
      if (res.status !== 200) failed += 1;
    }));
  }
  await Promise.all(pending);
  const drainUntil = now() + 10_000;
  while (recorders.some((r) => r.latencies.length < sent - failed) && now() < drainUntil) await delay(20);
  agent.destroy();
  if (failed > 0) throw new Error(`${phase}: ${failed} of ${sent} sends failed`);
  return sent;
}

interface Latencies {
  readonly 50: number;
  readonly 99: number;
}

/** Joins the three sessions, opens the listeners (the cross one only with a node B), then warms up and measures. */
async function measure(urlA: string, urlB: string | undefined, tokens: Tokens, problems: string[]): Promise<{ same: Latencies; cross: Latencies }> {
  const agent = new Agent();
  const sessions: [string, string][] = [[urlA, tokens.sender], [urlA, tokens.same]];
  if (urlB) sessions.push([urlB, tokens.cross]);
  for (const [url, token] of sessions) {
    const joined = await postJson(`${url}/v1/signaling/join`, JSON.stringify({ token }), {}, agent);
    if (joined.status !== 200) throw new Error(`join: ${joined.status} ${joined.text}`);
  }
  agent.destroy();
  const same: Recorder = { phase: '', latencies: [] };
  const cross: Recorder = { phase: '', latencies: [] };
  const recorders = urlB ? [same, cross] : [same];
  const closers = [await openListener(urlA, tokens.same, same)];
  if (urlB) closers.push(await openListener(urlB, tokens.cross, cross));
  try {
    const sendUrl = `${urlA}/v1/signaling/messages`;
    if (warmupSeconds > 0) await runPhase(sendUrl, tokens.sender, recorders, 'warmup', warmupSeconds);
    const sent = await runPhase(sendUrl, tokens.sender, recorders, 'measured', seconds);
    const where = urlB ? 'cluster' : 'embedded';
    for (const [what, r] of [['same node', same], ['across nodes', cross]] as const) {
      if (recorders.includes(r) && r.latencies.length !== sent) problems.push(`${where}, ${what}: ${sent - r.latencies.length} of ${sent} messages missing`);
    }
    const figures = (r: Recorder): Latencies => {
      const sorted = r.latencies.sort((x, y) => x - y);
      return { 50: percentile(sorted, 50), 99: percentile(sorted, 99) };
    };
    const result = { same: figures(same), cross: figures(cross) };
    progress(`${where}: same node p50 ${result.same[50].toFixed(2)} ms, p99 ${result.same[99].toFixed(2)} ms`
      + (urlB ? `; across nodes p50 ${result.cross[50].toFixed(2)} ms, p99 ${result.cross[99].toFixed(2)} ms` : '') + ` (${sent} messages)`);
    return result;
  } finally {
    for (const close of closers) close();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rtc-bench-signaling-cluster-'));
  const started: ServerProcess[] = [];
  let redis: RedisServer | undefined;
  const problems: string[] = [];
  try {
    progress(`${BENCH}: 1 sender on node A, a listener on A and one on B, ${rate} messages/s, ${warmupSeconds} s warm-up + ${seconds} s measured`);
    redis = await startRedis();
    const tokensFile = join(work, 'tokens.json');
    const env = { PATH: process.env['PATH'] ?? '', BENCH_DATA_DIR: work, REDIS_URL: redis.url };
    const start = async (name: string, extra: Record<string, string>): Promise<ServerProcess> => {
      const server = await startServerProcess({
        command: process.execPath, args: ['--import', 'tsx', SELF, 'serve'], cwd: ROOT, roles: ['signaling'],
        stderrFile: join(work, `${name}.log`), env: { ...env, ...extra },
      });
      started.push(server);
      return server;
    };
    // A first: it creates the keys that B then reads
    const a = await start('node-a', { BENCH_TOKENS_FILE: tokensFile });
    const b = await start('node-b', {});
    const cluster = await measure(a.urls['signaling']!, b.urls['signaling']!, JSON.parse(readFileSync(tokensFile, 'utf8')) as Tokens, problems);
    await Promise.all([a.stop(), b.stop()]);
    const embeddedTokens = join(work, 'embedded-tokens.json');
    const embedded = await start('embedded', { REDIS_URL: '', BENCH_TOKENS_FILE: embeddedTokens });
    const alone = await measure(embedded.urls['signaling']!, undefined, JSON.parse(readFileSync(embeddedTokens, 'utf8')) as Tokens, problems);
    const load = `${rate} messages/s`;
    for (const p of [50, 99] as const) {
      printFigure({ bench: BENCH, figure: `cross_node_latency_p${p}`, value: cluster.cross[p], unit: 'ms', baseline: cluster.same[p], baseline_is: 'same node', load });
    }
    for (const p of [50, 99] as const) {
      printFigure({ bench: BENCH, figure: `same_node_latency_p${p}`, value: cluster.same[p], unit: 'ms', baseline: alone.same[p], baseline_is: 'embedded, no Redis', load });
    }
  } finally {
    await Promise.allSettled(started.map((s) => s.stop()));
    await redis?.dispose();
    removeWork(work);
  }
  reportProblems(problems);
}

const entry = process.argv[2] === 'serve' ? serveSignaling : main;
runBench(BENCH, entry);
