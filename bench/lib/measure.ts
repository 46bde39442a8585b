/** One measured load on a server process: wrk figures plus the server's CPU time and peak memory. */
import { readCpuSeconds, readPeakRssBytes, resetPeakRss } from './proc-stats.ts';
import { runWrk, type WrkOptions, type WrkResult } from './wrk.ts';

export interface LoadMeasurement {
  readonly wrk: WrkResult;
  /** Server CPU time (user + system, all threads) per completed request, in microseconds. */
  readonly cpuMicrosPerRequest: number;
  /** Server CPU seconds over the measured run. */
  readonly cpuSeconds: number;
  /**
   * Peak resident set size (VmHWM) over the warm-up and the measured run, in bytes: the peak is
   * reset just before the warm-up, so start-up transients are left out (when the kernel allows).
   */
  readonly peakRssBytes: number;
  /** Peak resident set size since the process started, in bytes. */
  readonly peakRssSinceStartBytes: number;
}

export interface MeasureOptions extends Omit<WrkOptions, 'durationSeconds'> {
  readonly pid: number;
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
  /** Script variables of the warm-up, when they must differ from the measured run's. */
  readonly warmupEnv?: Readonly<Record<string, string>>;
}

/** Warms the server up with the same load, then measures a bounded run. */
export async function measureLoad(options: MeasureOptions): Promise<LoadMeasurement> {
  const { pid, warmupSeconds, warmupEnv, ...wrk } = options;
  const peakBefore = readPeakRssBytes(pid);
  resetPeakRss(pid);
  if (warmupSeconds > 0) {
    await runWrk({ ...wrk, durationSeconds: warmupSeconds, env: warmupEnv ?? wrk.env ?? {} });
  }
  const cpuBefore = readCpuSeconds(pid);
  const result = await runWrk(wrk);
  const cpuSeconds = readCpuSeconds(pid) - cpuBefore;
  return {
    wrk: result,
    cpuSeconds,
    cpuMicrosPerRequest: result.requests > 0 ? (cpuSeconds * 1e6) / result.requests : Number.NaN,
    peakRssBytes: readPeakRssBytes(pid),
    peakRssSinceStartBytes: Math.max(peakBefore, readPeakRssBytes(pid)),
  };
}
