import { OVERHEAD_BYTES } from './layers.ts';

const PROBE_MIN_INTERVAL_MS = 2_000;
const PROBE_MAX_INTERVAL_MS = 16_000;
/** The probe's outcome is read this long after its train left. */
const PROBE_SETTLE_MS = 600;
/** A probe train carries this much of the target rate, at once: the bottleneck spreads it. */
const PROBE_TRAIN_MS = 120;
/** A probe train goes at most this multiple of the estimate. */
const PROBE_MAX_FACTOR = 2;
/** No probe while the client's link loses more than this (fraction). */
export const PROBE_MAX_LOSS = 0.1;
/** Padding bytes of one probe packet (the most one RTP padding length byte can say). */
export const PADDING_BYTES = 255;
/** Packets of one probe train, at most. */
const PROBE_MAX_PACKETS = 80;

/** A probe whose train left: read once settled. */
export interface PendingProbe {
  readonly id: number;
  readonly readAtMs: number;
  /** The estimate when the train left (bit/s). */
  readonly before: number;
}

/**
 * When a downlink probes with padding (docs/protocol/media.md, "Bandwidth"): one train at a time,
 * read PROBE_SETTLE_MS after it left; the next one PROBE_MIN_INTERVAL_MS later when the estimate grew
 * by it, else after an interval that doubles up to PROBE_MAX_INTERVAL_MS; and within
 * PROBE_MIN_INTERVAL_MS of a video pausing for bandwidth, whatever the backoff, since a paused video
 * resumes only once a probe shows room for it while only its audio flows. The clock is the caller's.
 */
export class ProbeSchedule {
  private nextMs = 0;
  private intervalMs = PROBE_MIN_INTERVAL_MS;
  private lastId = 0;
  private pending: PendingProbe | undefined;

  /** The probe whose outcome is due at `nowMs`, taken off the schedule (call `settle` with it). */
  due(nowMs: number): PendingProbe | undefined {
    const pending = this.pending;
    if (!pending || nowMs < pending.readAtMs) return undefined;
    this.pending = undefined;
    return pending;
  }

  /** A due probe was read: the estimate is now `estimateBps`. */
  settle(probe: PendingProbe, estimateBps: number, nowMs: number): void {
    const grew = estimateBps > probe.before * 1.05;
    this.intervalMs = grew ? PROBE_MIN_INTERVAL_MS : Math.min(this.intervalMs * 2, PROBE_MAX_INTERVAL_MS);
    this.nextMs = nowMs + this.intervalMs;
  }

  /** A video paused for bandwidth at `nowMs`. */
  paused(nowMs: number): void {
    this.intervalMs = PROBE_MIN_INTERVAL_MS;
    this.nextMs = Math.min(this.nextMs, nowMs + PROBE_MIN_INTERVAL_MS);
  }

  /** Whether a train may leave now: none pending, and its interval over unless it is `urgent` (a probe back after a drop). */
  mayStart(nowMs: number, urgent = false): boolean {
    return this.pending === undefined && (urgent || nowMs >= this.nextMs);
  }

  /** A train leaves now at an estimate of `estimateBps`: its id, which the estimator's sent packets carry. */
  start(nowMs: number, estimateBps: number): number {
    this.lastId += 1;
    this.pending = { id: this.lastId, readAtMs: nowMs + PROBE_SETTLE_MS, before: estimateBps };
    return this.lastId;
  }
}

/**
 * The rate a train stands for when it tests whether `needBps` more fits: the estimate plus the step
 * and a quarter, at most PROBE_MAX_FACTOR times the estimate (a step the estimate cannot double into
 * is reached by growing, not by one probe); right after a large drop, at least `recoveryBps`, the
 * rate to probe back to (rtp/downlink-estimator.ts).
 */
export function probeTargetBps(estimateBps: number, needBps: number, recoveryBps = 0): number {
  return Math.max(Math.min((estimateBps + needBps) * 1.25, estimateBps * PROBE_MAX_FACTOR), recoveryBps);
}

/** The padding packets of that train, for PROBE_TRAIN_MS. */
export function probeTrainPackets(estimateBps: number, needBps: number, recoveryBps = 0): number {
  const target = probeTargetBps(estimateBps, needBps, recoveryBps);
  const bytes = (target / 8) * (PROBE_TRAIN_MS / 1000);
  return Math.min(Math.ceil(bytes / (PADDING_BYTES + OVERHEAD_BYTES)), PROBE_MAX_PACKETS);
}
