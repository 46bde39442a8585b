/**
 * The largest room at full delivery: one publisher (a 1 Mbit/s camera without layers, and audio)
 * and ever more subscribers in one room, against `rtc serve` on the embedded default with one media
 * process, then with two (`RTC_MEDIA_WORKERS=2`, `RTC_MEDIA_MAX_SESSIONS` low enough that placement
 * spreads the room over both, which relay the camera between them). The load is `rtc load-test` of
 * the measured build, a process of its own, so that its CPU is its own and reported beside.
 *
 * A size holds when every subscriber joined and stayed, each lost at most 1 % of its packets, and
 * the subscribers decoded on average at least 90 % of the frame rate sent (no stall). The sizes go
 * up in steps (BENCH_ROOM_SIZES) until one does not hold; the figure is the last that held, with the
 * server's and the load generator's share of a core at that size. On a machine with as many cores
 * as media processes plus the load generator, the two figures compare the processes; with fewer,
 * the load generator's CPU says what bounded the run (docs/operations/benchmarks.md).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadSummary } from '../server/src/main/client/load-test-report.ts';
import { EMBEDDED_ROLES, ROOT, createCredential, startPlatformServer, type BenchCredential } from './lib/platform.ts';
import { readTreeCpuSeconds } from './lib/proc-stats.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress, removeWork, runBench } from './lib/report.ts';

const BENCH = 'media-room-size';
const CLI = join(process.env['BENCH_PLATFORM_ROOT'] || ROOT, 'dist/server/src/main/cli.js');
const SIZES = (process.env['BENCH_ROOM_SIZES'] ?? '20,40,60,80,100,130,160,200,250,300').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
const VIDEO_BITRATE = process.env['BENCH_ROOM_VIDEO_BITRATE'] ?? '1M';
const WINDOW = process.env['BENCH_ROOM_WINDOW'] ?? '10s';
/** With two media processes, each takes this many sessions before the room spills to the other. */
const SPILL_AT = 10;
const MAX_LOSS = 0.01;
const MIN_FRAME_SHARE = 0.9;

interface Step {
  readonly size: number;
  readonly held: boolean;
  readonly why: string;
  readonly summary: LoadSummary | undefined;
  /** Share of one core over the load test's run: the server (every media process) and the load generator. */
  readonly serverCores: number;
  readonly generatorCores: number;
}

/** `rtc load-test --json` of the measured build, in a process of its own. */
function loadTest(tokenUrl: string, cred: BenchCredential, subscribers: number): Promise<{ summary: LoadSummary | undefined; stderr: string }> {
  const args = [CLI, 'load-test', '--url', tokenUrl, '--room', `size-${subscribers}-${Date.now()}`, '--publishers', '1',
    '--subscribers', String(subscribers), '--duration', WINDOW, '--video-bitrate', VIDEO_BITRATE, '--json'];
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env['PATH'] ?? '', RTC_APP_ID: cred.appId, RTC_APP_SECRET: cred.appSecret }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  return new Promise((resolve) => child.once('exit', () => {
    try {
      resolve({ summary: JSON.parse(stdout) as LoadSummary, stderr });
    } catch {
      resolve({ summary: undefined, stderr });
    }
  }));
}

/** Whether the room held at this size, and why not. */
function verdict(s: LoadSummary | undefined, subscribers: number): string {
  if (!s) return 'no summary';
  if (s.subscribers.joined < subscribers) return `${s.subscribers.joined} of ${subscribers} subscribers joined`;
  if (s.dropped.length > 0) return `${s.dropped.length} dropped`;
  const lossy = s.participants.filter((p) => p.role === 'subscriber' && (p.packets_expected ?? 0) > 0 && p.packets_lost! / p.packets_expected! > MAX_LOSS);
  if (lossy.length > 0) return `${lossy.length} subscriber(s) lost over ${MAX_LOSS * 100} %`;
  if (s.subscribers.frames_per_second < MIN_FRAME_SHARE * s.publishers.frames_per_second) {
    return `${s.subscribers.frames_per_second} frames/s received of ${s.publishers.frames_per_second} sent`;
  }
  return '';
}

async function measure(workers: number, work: string): Promise<Step[]> {
  const env: Record<string, string> = {
    RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', RTC_MEDIA_PUBLIC_HOST: '127.0.0.1',
    RTC_MEDIA_WORKERS: String(workers), RTC_MEDIA_MAX_SESSIONS: workers === 1 ? '10000' : String(SPILL_AT),
  };
  const server: ServerProcess = await startPlatformServer({
    dataDir: join(work, `data-${workers}`), stderrFile: join(work, `platform-${workers}.log`), roles: [...EMBEDDED_ROLES], env,
  });
  const steps: Step[] = [];
  try {
    const cred = await createCredential(server.urls['api']!);
    for (const size of SIZES) {
      const cpuBefore = readTreeCpuSeconds(server.pid);
      const began = performance.now();
      const { summary, stderr } = await loadTest(server.urls['token']!, cred, size);
      const seconds = (performance.now() - began) / 1000;
      const serverCores = (readTreeCpuSeconds(server.pid) - cpuBefore) / seconds;
      const why = verdict(summary, size);
      const step = { size, held: why === '', why, summary, serverCores, generatorCores: (summary?.cpu.percent ?? 0) / 100 };
      steps.push(step);
      const nodes = new Set(summary?.participants.map((p) => p.node) ?? []).size;
      progress(`${workers} media process(es), ${size} subscribers on ${nodes} node(s): ${step.held ? 'held' : `not held (${why})`}; ` +
        `loss ${summary?.subscribers.packet_loss_percent ?? '-'} %, ${summary?.subscribers.frames_per_second ?? '-'} frames/s, ` +
        `delay p50 ${summary?.subscribers.one_way_delay_ms.p50 ?? '-'} ms p99 ${summary?.subscribers.one_way_delay_ms.p99 ?? '-'} ms; ` +
        `cores busy: server ${serverCores.toFixed(2)}, load generator ${step.generatorCores.toFixed(2)}`);
      if (!summary) progress(stderr);
      if (!step.held) break;
    }
  } finally {
    await server.stop();
  }
  return steps;
}

function report(workers: number, steps: readonly Step[], baseline?: number): number {
  const held = steps.filter((s) => s.held).at(-1);
  const failed = steps.find((s) => !s.held);
  printFigure({
    bench: BENCH, figure: `largest_room_${workers}_media_process${workers === 1 ? '' : 'es'}`, value: held?.size ?? 0, unit: 'subscribers',
    ...(baseline !== undefined && { baseline }),
    video_bitrate: VIDEO_BITRATE,
    server_cores: held?.serverCores ?? null, load_generator_cores: held?.generatorCores ?? null,
    delay_p50_ms: held?.summary?.subscribers.one_way_delay_ms.p50 ?? null, delay_p99_ms: held?.summary?.subscribers.one_way_delay_ms.p99 ?? null,
    next_size: failed?.size ?? null, next_size_failed_because: failed?.why ?? null,
    next_size_load_generator_cores: failed?.generatorCores ?? null,
    sizes_tried: SIZES.join(','),
  });
  return held?.size ?? 0;
}

runBench(BENCH, async () => {
  const work = mkdtempSync(join(tmpdir(), 'bench-room-size-'));
  try {
    progress(`one media process: ${SIZES.join(', ')} subscribers of a ${VIDEO_BITRATE}bit/s camera and audio, ${WINDOW} each...`);
    const one = report(1, await measure(1, work));
    progress('two media processes (RTC_MEDIA_WORKERS=2), the room spread by placement...');
    report(2, await measure(2, work), one);
  } finally {
    removeWork(work);
  }
});
