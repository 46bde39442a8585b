/** The output of every bench module: one JSON line per figure on standard output. */
import { rmSync } from 'node:fs';

export interface Figure {
  readonly bench: string;
  readonly figure: string;
  readonly value: number;
  readonly unit: string;
  /** The same figure of the baseline measured in the same run. */
  readonly baseline?: number;
  /** Extra fields (targets, comparisons) printed after the standard ones. */
  readonly [extra: string]: unknown;
}

const round = (value: number): number => {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value);
  const digits = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  return Number(value.toFixed(digits));
};

/** Prints a figure; `ratio` (value / baseline) is added when a baseline is given. */
export function printFigure(figure: Figure): void {
  const { bench, figure: name, value, unit, baseline, ...extra } = figure;
  const line: Record<string, unknown> = { bench, figure: name, value: round(value), unit };
  if (baseline !== undefined) {
    line['baseline'] = round(baseline);
    line['ratio'] = baseline === 0 ? null : Number((value / baseline).toFixed(3));
  }
  for (const [key, extraValue] of Object.entries(extra)) {
    line[key] = typeof extraValue === 'number' ? round(extraValue) : extraValue;
  }
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Progress for the person running the bench, on standard error (standard output carries figures). */
export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Removes a bench's work directory, or with BENCH_KEEP_DIR=1 keeps it (its logs and data) and says where. */
export function removeWork(work: string): void {
  if (process.env['BENCH_KEEP_DIR'] === '1') progress(`logs and data kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

/** Names each measurement that cannot be trusted, and fails the run when there is one. */
export function reportProblems(problems: readonly string[]): void {
  if (problems.length === 0) return;
  for (const problem of problems) progress(`invalid measurement: ${problem}`);
  process.exitCode = 1;
}

/** Runs a bench's entry point: a failure is printed with the bench's name and fails the run. */
export function runBench(bench: string, entry: () => Promise<void>): void {
  entry().catch((err: unknown) => {
    process.stderr.write(`${bench}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
