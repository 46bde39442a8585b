/** Runs `wrk` with a Lua script from bench/lib/wrk/ and parses the line its report prints. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT_DIR = fileURLToPath(new URL('./wrk/', import.meta.url));

export interface WrkOptions {
  readonly url: string;
  /** A script of bench/lib/wrk/ (e.g. `post.lua`), or an absolute path. */
  readonly script: string;
  readonly connections: number;
  readonly threads: number;
  readonly durationSeconds: number;
  /** Variables the script reads with os.getenv. */
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutSeconds?: number;
}

export interface WrkResult {
  readonly requests: number;
  readonly durationSeconds: number;
  readonly requestsPerSecond: number;
  readonly bytes: number;
  readonly errors: { readonly connect: number; readonly read: number; readonly write: number; readonly status: number; readonly timeout: number };
  /** Latency in milliseconds. */
  readonly latencyMs: { readonly min: number; readonly mean: number; readonly max: number; readonly p50: number; readonly p90: number; readonly p99: number; readonly p999: number };
  /** Response statuses, when the script counts them (empty otherwise). */
  readonly statuses: Readonly<Record<string, number>>;
}

interface RawReport {
  requests: number;
  duration_us: number;
  bytes: number;
  errors: WrkResult['errors'];
  latency_us: { min: number; max: number; mean: number; percentiles: Record<string, number> };
  statuses: Record<string, number>;
}

/** Runs one bounded wrk load (loopback URLs only) and returns its figures. */
export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const target = new URL(options.url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname)) {
    throw new Error(`load runs target loopback only, not ${target.hostname}`);
  }
  const scriptPath = options.script.startsWith('/') ? options.script : join(SCRIPT_DIR, options.script);
  const dir = mkdtempSync(join(tmpdir(), 'rtc-wrk-'));
  try {
    const combined = join(dir, 'script.lua');
    writeFileSync(combined, `${readFileSync(scriptPath, 'utf8')}\n${readFileSync(join(SCRIPT_DIR, 'report.lua'), 'utf8')}`);
    const args = [
      `-t${options.threads}`, `-c${options.connections}`, `-d${options.durationSeconds}s`,
      `--timeout`, `${options.timeoutSeconds ?? 2}s`, '-s', combined, options.url,
    ];
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.on('data', (c: Buffer) => err.push(c));
      child.once('error', reject);
      child.once('exit', (code) => {
        const text = Buffer.concat(out).toString('utf8');
        if (code === 0) resolve(text);
        else reject(new Error(`wrk exited with ${code}:\n${text}${Buffer.concat(err).toString('utf8')}`));
      });
    });
    const line = output.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
    if (!line) throw new Error(`wrk printed no report:\n${output}`);
    const raw = JSON.parse(line.slice('BENCH_RESULT '.length)) as RawReport;
    const ms = (us: number | undefined): number => (us ?? Number.NaN) / 1000;
    const durationSeconds = raw.duration_us / 1e6;
    return {
      requests: raw.requests,
      durationSeconds,
      requestsPerSecond: raw.requests / durationSeconds,
      bytes: raw.bytes,
      errors: raw.errors,
      latencyMs: {
        min: ms(raw.latency_us.min), mean: ms(raw.latency_us.mean), max: ms(raw.latency_us.max),
        p50: ms(raw.latency_us.percentiles['50']), p90: ms(raw.latency_us.percentiles['90']),
        p99: ms(raw.latency_us.percentiles['99']), p999: ms(raw.latency_us.percentiles['99.9']),
      },
      statuses: raw.statuses,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
