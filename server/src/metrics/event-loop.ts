import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';
import { everyShared } from '../core/shared-interval.ts';

/** The event loop metrics prom-client's defaults register, replaced here under the same names. */
const LAG = 'nodejs_eventloop_lag_seconds';
const DELAY_GAUGES = [
  ['min', 'The minimum recorded event loop delay.', (h: Delays) => h.min],
  ['max', 'The maximum recorded event loop delay.', (h: Delays) => h.max],
  ['mean', 'The mean of the recorded event loop delays.', (h: Delays) => h.mean],
  ['stddev', 'The standard deviation of the recorded event loop delays.', (h: Delays) => h.stddev],
  ['p50', 'The 50th percentile of the recorded event loop delays.', (h: Delays) => h.percentile(50)],
  ['p90', 'The 90th percentile of the recorded event loop delays.', (h: Delays) => h.percentile(90)],
  ['p99', 'The 99th percentile of the recorded event loop delays.', (h: Delays) => h.percentile(99)],
] as const;
/**
 * The period of the timer whose lateness is sampled (ms): the process's shared 50 ms timer, which
 * also runs the media ticks and the SQLite bus's poll (core/shared-interval.ts). A sampler of its
 * own (node's monitorEventLoopDelay, prom-client's at 10 ms, ours at 20) woke the loop 50 to 100
 * times a second more, most of an idle process's wake-ups (docs/operations/metrics.md, "Event loop lag").
 */
const SAMPLE_MS = 50;

type Delays = RecordableHistogram;

/** Records, at each run of the shared timer, how late it ran (ns; at least 1, the histogram's floor). */
function sampleDelays(delays: RecordableHistogram): void {
  let last: number | undefined;
  everyShared(SAMPLE_MS, () => {
    const now = performance.now();
    // the first run may come up to one period early (the timer's phase is shared): nothing to measure yet
    if (last !== undefined) delays.record(Math.max(Math.round((now - last - SAMPLE_MS) * 1e6), 1));
    last = now;
  });
}

/**
 * The event loop lag gauges, in place of prom-client's (docs/operations/metrics.md). prom-client
 * resets its delay histogram at every scrape and sets the gauges from it even when no delay was
 * sampled since: two scrapes within the sampling interval print the mean and deviation of nothing
 * as `Nan`, which strict parsers refuse, and the minimum as 9.2e9 s. Here a gauge has no sample
 * until something was measured, and an interval with no measurement keeps the last values.
 */
export function replaceEventLoopLag(registry: Registry): void {
  registry.removeSingleMetric(LAG);
  for (const [suffix] of DELAY_GAUGES) registry.removeSingleMetric(`nodejs_eventloop_lag_${suffix}_seconds`);

  const delays = createHistogram();
  sampleDelays(delays);
  const gauges: { readonly gauge: Gauge; readonly read: (h: Delays) => number }[] = [];
  // registered first: a scrape runs this collect before it reads the delay gauges
  const lag: Gauge = new Gauge({
    name: LAG,
    help: 'Lag of event loop in seconds (the time a callback queued at the previous scrape waited).',
    registers: [registry],
    collect() {
      // measured now, reported at the next scrape (as prom-client does)
      const start = process.hrtime.bigint();
      setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9));
      if (delays.count === 0) return;
      for (const { gauge, read } of gauges) gauge.set(read(delays) / 1e9);
      delays.reset();
    },
  });
  lag.remove();
  for (const [suffix, help, read] of DELAY_GAUGES) {
    const gauge = new Gauge({ name: `nodejs_eventloop_lag_${suffix}_seconds`, help, registers: [registry] });
    gauge.remove();
    gauges.push({ gauge, read });
  }
}
