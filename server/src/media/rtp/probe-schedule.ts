import { OVERHEAD_BYTES } from './layers.ts';

const PROBE_MIN_INTERVAL_MS = 2_000;
const PROBE_MAX_INTERVAL_MS = 16_000;
/** The probe's outcome is read this long after its train left. */
const PROBE_SETTLE_MS = 600;
/** A probe train carries this much of the target rate, at once: the bottleneck spreads it. */
const PROBE_TRAIN_MS = 120;
/** A probe train goes at most this multiple of the estimate. */
const PROBE_MAX_FACTOR = 2;
/**
 * The first train, as soon as a video has gone out, goes at this multiple of the estimate (up to
 * FIRST_PROBE_MAX_FACTOR when the videos need more), as libwebrtc probes at 3x and 6x its start
 * rate: on a clean link the estimate reaches a camera's rate before its first frames fill the pacer.
 */
const FIRST_PROBE_FACTOR = 3;
const FIRST_PROBE_MAX_FACTOR = 6;
/** No probe while the client's link loses more than this (fraction). */
export const PROBE_MAX_LOSS = 0.1;
/** Padding bytes of one probe packet (the most one RTP padding length byte can say). */
export const PADDING_BYTES = 255;
/** An RTP payload of padding only, its length byte alone (it fills numbers of packets the pacer dropped). */
export const EMPTY_PADDING = Buffer.from([1]);
/** The probe cluster such filling padding is counted in (never read as a probe). */
export const FILL_CLUSTER = -1;
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
 * read as soon as enough of it came back, at the latest PROBE_SETTLE_MS after it left; the next one
 * PROBE_MIN_INTERVAL_MS later when the estimate grew by it, else after an interval that doubles up
 * to PROBE_MAX_INTERVAL_MS; and within PROBE_MIN_INTERVAL_MS of a video pausing for bandwidth,
 * whatever the backoff, since a paused video resumes only once a probe shows room for it while only
 * its audio flows. The clock is the caller's.
 */
export class ProbeSchedule {
  private nextMs = 0;
  private intervalMs = PROBE_MIN_INTERVAL_MS;
  private lastId = 0;
  private pending: PendingProbe | undefined;

  /** Whether no train left yet: the first one goes without waiting for anything to need it. */
  get first(): boolean {
    return this.lastId === 0;
  }

  /** The pending probe's id, if a train is out. */
  get pendingId(): number | undefined {
    return this.pending?.id;
  }

  /**
   * The probe whose outcome is due at `nowMs`, taken off the schedule (call `settle` with it): once
   * `cameBack` (enough of its train was acknowledged), else once it had PROBE_SETTLE_MS to.
   */
  due(nowMs: number, cameBack = false): PendingProbe | undefined {
    const pending = this.pending;
    if (!pending || (nowMs < pending.readAtMs && !cameBack)) return undefined;
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

/** What a train is for, besides the step it tests: the subscriber's `first`, or probing back to `recoveryBps`. */
export interface ProbeKind {
  readonly first?: boolean;
  readonly recoveryBps?: number;
}

/**
 * The rate a train stands for when it tests whether `needBps` more fits: the estimate plus the step
 * and a quarter, at most PROBE_MAX_FACTOR times the estimate (a step the estimate cannot double into
 * is reached by growing, not by one probe). The `first` train, as soon as a video has gone out, goes
 * at FIRST_PROBE_FACTOR times the estimate at least, and up to FIRST_PROBE_MAX_FACTOR times; right
 * after a large drop, a train goes at least at `recoveryBps`, the rate to probe back to
 * (rtp/downlink-estimator.ts). A train is sized for this rate, and its result is capped there
 * (rtp/probe-clusters.ts): a train that arrives as it left shows nothing beyond it.
 */
export function probeTargetBps(estimateBps: number, needBps: number, kind: ProbeKind = {}): number {
  const step = (estimateBps + needBps) * 1.25;
  const target = kind.first
    ? Math.min(Math.max(step, estimateBps * FIRST_PROBE_FACTOR), estimateBps * FIRST_PROBE_MAX_FACTOR)
    : Math.min(step, estimateBps * PROBE_MAX_FACTOR);
  return Math.max(target, kind.recoveryBps ?? 0);
}

/** The padding packets of a train at `targetBps` (probeTargetBps), for PROBE_TRAIN_MS. */
export function probeTrainPackets(targetBps: number): number {
  const bytes = (targetBps / 8) * (PROBE_TRAIN_MS / 1000);
  return Math.min(Math.ceil(bytes / (PADDING_BYTES + OVERHEAD_BYTES)), PROBE_MAX_PACKETS);
}
