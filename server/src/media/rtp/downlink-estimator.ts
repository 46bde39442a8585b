/**
 * A send-side estimate of one subscriber's downlink (docs/protocol/media.md, "Bandwidth"), from the
 * transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01) the
 * subscriber returns for what the server sent it. It follows the shape of Google congestion control
 * (draft-ietf-rmcat-gcc-02): a delay-based part (a trend of the one-way queuing delay, compared with an
 * adaptive threshold), a loss-based part, and what the subscriber really received (the acknowledged
 * rate) as the anchor of every decrease. Clock-injected and timer-free: times are arguments.
 */
import { ProbeClusters } from './probe-clusters.ts';
import type { CompactTwcc } from './twcc-compact.ts';

/** Send records kept, indexed by the 16-bit transport sequence number. */
const HISTORY = 1 << 16;
/**
 * Packets sent within this many ms form one group for the delay trend (a burst leaves the sender at
 * once); so do packets that arrive within this many ms of the group's last and sooner than their send
 * times would have them: held behind a late one on the way (jitter), they come out together.
 */
const BURST_MS = 5;
/** A group of packets arriving together spans at most this long. */
const MAX_BURST_MS = 100;
/** Groups in the trend's linear regression. */
const TREND_WINDOW = 20;
const TREND_SMOOTHING = 0.9;
const TREND_GAIN = 4;
const INITIAL_THRESHOLD_MS = 12.5;
const THRESHOLD_UP = 0.0087;
const THRESHOLD_DOWN = 0.039;
/**
 * Overuse must last this long (in the send times of the groups that show it), over at least two
 * groups, with the trend still rising, before the rate is cut: jitter alone makes single groups look late.
 */
const OVERUSE_MS = 10;
/** Window of the acknowledged rate. */
const ACKED_WINDOW_MS = 500;
/** Shorter window of the acknowledged rate, for the rate of the narrowest link while a queue builds. */
const RECENT_WINDOW_MS = 200;
/** Multiplicative increase per second while the path shows no queue. */
const INCREASE_PER_S = 1.08;
/** Cut to this fraction of the acknowledged rate on overuse. */
const DECREASE_FACTOR = 0.85;
/** Loss fractions of the loss-based part: above the upper one the rate drops, below the lower one it may grow. */
const LOSS_HIGH = 0.1;
const LOSS_LOW = 0.02;
/** Loss is judged over at least this many packets. */
const LOSS_MIN_PACKETS = 20;
/** The loss-based part cuts at most once in this long, by half the loss (libwebrtc: 300 ms and a round trip). */
const LOSS_CUT_INTERVAL_MS = 400;
/**
 * A delay-based cut to under this fraction of the estimate, without the loss that marks a link
 * really full, is worth a probe back to RECOVERY_FRACTION of where it was, within RECOVERY_MS (as
 * libwebrtc probes after a large drop while application-limited): jitter makes a path look queued
 * for a moment, and climbing back at 8 % a second would leave a video paused for seconds.
 */
const LARGE_DROP = 0.66;
const RECOVERY_FRACTION = 0.85;
const RECOVERY_MS = 5_000;

export interface EstimatorOptions {
  readonly initialBps: number;
  readonly minBps: number;
  readonly maxBps: number;
}

export type DelaySignal = 'normal' | 'overuse' | 'underuse';

/** One entry of a transport-wide feedback message, in sequence order. */
export interface FeedbackResult {
  readonly seq: number;
  /** Arrival at the subscriber in ms on the subscriber's clock; undefined when reported lost. */
  readonly receivedAtMs: number | undefined;
  /** Packets from `seq` on reported lost, when `receivedAtMs` is undefined (1 when absent): a run costs the same however long. */
  readonly lost?: number;
}

export class DownlinkEstimator {
  private readonly options: EstimatorOptions;
  private readonly sentAt = new Float64Array(HISTORY);
  private readonly sentBytes = new Int32Array(HISTORY);
  /** Probe cluster of a sent packet, 0 for media. */
  private readonly sentProbe = new Int32Array(HISTORY);
  /** Media packets sent before each sequence number, so a run of lost ones is counted at once. */
  private readonly mediaBefore = new Float64Array(HISTORY);
  private mediaSent = 0;
  private lastSeq: number | undefined;
  /** Sequence numbers up to lastSeq that mediaBefore covers. */
  private seqsKnown = 0;
  private estimate: number;
  private lastUpdateMs: number | undefined;
  private signal: DelaySignal = 'normal';
  /** Send time spanned by the groups over the threshold in a row (-1: none), their count, and the last trend. */
  private overuseMs = -1;
  private overuseCount = 0;
  private prevSlope = 0;
  private threshold = INITIAL_THRESHOLD_MS;
  private lastThresholdMs: number | undefined;
  // the current burst group: its last send and arrival time
  private groupSendMs: number | undefined;
  private groupFirstSendMs = 0;
  private groupArrivalMs = 0;
  private groupFirstArrivalMs = 0;
  private prevGroupSendMs: number | undefined;
  private prevGroupArrivalMs = 0;
  private accumulatedDelay = 0;
  private smoothedDelay = 0;
  private firstArrivalMs: number | undefined;
  private deltas = 0;
  private readonly trendX: number[] = [];
  private readonly trendY: number[] = [];
  // acknowledged bytes by arrival time
  private readonly ackedTimes: number[] = [];
  private readonly ackedSizes: number[] = [];
  private ackedSum = 0;
  private lossLost = 0;
  private lossTotal = 0;
  private lossFraction = 0;
  private lastLossCutMs = Number.NEGATIVE_INFINITY;
  /** The estimate before a large delay-based drop, and when it dropped; undefined once probed or too old. */
  private beforeDrop: { bps: number; atMs: number } | undefined;
  // probe clusters: what each sent, and what of it arrived
  private readonly probes = new ProbeClusters();

  constructor(options: EstimatorOptions) {
    this.options = options;
    this.estimate = options.initialBps;
  }

  /** The current estimate of what the downlink carries, in bits per second. */
  get bps(): number {
    return this.estimate;
  }

  /** What the subscriber received over the last half second, in bits per second. */
  get ackedBps(): number {
    if (this.ackedTimes.length < 2) return 0;
    const span = Math.max(this.ackedTimes[this.ackedTimes.length - 1]! - this.ackedTimes[0]!, 100);
    return (this.ackedSum * 8 * 1000) / span;
  }

  /**
   * What the subscriber received over the last RECENT_WINDOW_MS. While a queue builds, packets
   * arrive at the rate of the narrowest link: right after a step up in what is sent (a video
   * resumed, a larger layer) this tells the link's rate where the half-second window still holds
   * the slower time before.
   */
  private get recentAckedBps(): number {
    const times = this.ackedTimes;
    const last = times.length - 1;
    if (last < 1) return 0;
    let bytes = 0;
    let i = last;
    for (; i > 0 && times[i]! >= times[last]! - RECENT_WINDOW_MS; i--) bytes += this.ackedSizes[i]!;
    const span = times[last]! - times[i]!;
    return span < RECENT_WINDOW_MS / 2 ? 0 : (bytes * 8 * 1000) / span;
  }

  get delaySignal(): DelaySignal {
    return this.signal;
  }

  get loss(): number {
    return this.lossFraction;
  }

  /** Records a packet as it leaves; `probe` names its probe cluster (0 for media and retransmissions). */
  onSent(seq: number, bytes: number, nowMs: number, probe = 0): void {
    const i = seq & 0xffff;
    this.sentAt[i] = nowMs;
    this.sentBytes[i] = bytes;
    this.sentProbe[i] = probe;
    this.countSent(i, probe === 0);
    if (probe !== 0) this.probes.sent(probe, bytes, nowMs);
  }

  /** Applies one feedback message; returns the new estimate. */
  onFeedback(results: Iterable<FeedbackResult>, nowMs: number): number {
    for (const result of results) {
      if (result.receivedAtMs === undefined) {
        // a probe sent above what the path carries loses padding by design: only media loss counts
        const media = this.mediaSentIn(result.seq & 0xffff, result.lost ?? 1);
        this.lossTotal += media;
        this.lossLost += media;
        continue;
      }
      const i = result.seq & 0xffff;
      const sentMs = this.sentAt[i]!;
      if (sentMs === 0) continue;
      const probe = this.sentProbe[i]!;
      if (probe === 0) this.lossTotal += 1;
      const size = this.sentBytes[i]!;
      this.sentAt[i] = 0;
      this.onArrival(sentMs, result.receivedAtMs, size, nowMs);
      if (probe !== 0) this.probes.arrived(probe, size, result.receivedAtMs);
    }
    if (this.lossTotal >= LOSS_MIN_PACKETS) {
      this.lossFraction = this.lossLost / this.lossTotal;
      this.lossLost = 0;
      this.lossTotal = 0;
    }
    this.update(nowMs);
    return this.estimate;
  }

  /** Numbers the media packets sent; sequence numbers the sender skipped carry none. */
  private countSent(seq: number, media: boolean): void {
    if (this.lastSeq !== undefined) {
      const skipped = (seq - this.lastSeq - 1) & 0xffff;
      if (skipped < 0x8000) {
        for (let k = 1; k <= skipped; k += 1) this.mediaBefore[(this.lastSeq + k) & 0xffff] = this.mediaSent;
        this.seqsKnown = Math.min(HISTORY, this.seqsKnown + skipped);
      } else {
        // a step back: what came before no longer lines up
        this.seqsKnown = 0;
      }
    }
    this.mediaBefore[seq] = this.mediaSent;
    if (media) this.mediaSent += 1;
    this.lastSeq = seq;
    this.seqsKnown = Math.min(HISTORY, this.seqsKnown + 1);
  }

  /**
   * Media packets sent among the `count` sequence numbers from `seq`, in constant time. A run ending
   * at most half the sequence space before the last sent is read back from its end (libwebrtc reports
   * up to 0x7FFE lost at once); one ending after it, from its start; numbers after the last sent, or
   * before what is known, were not sent.
   */
  private mediaSentIn(seq: number, count: number): number {
    if (this.lastSeq === undefined) return 0;
    const endBack = (this.lastSeq - seq - count + 1) & 0xffff;
    let lastBack = endBack;
    let firstBack = endBack + count - 1;
    if (endBack >= 0x8000) {
      firstBack = (this.lastSeq - seq) & 0xffff;
      if (firstBack >= 0x8000) return 0;
      lastBack = 0;
    }
    firstBack = Math.min(firstBack, this.seqsKnown - 1);
    if (lastBack > firstBack) return 0;
    const upTo = lastBack === 0 ? this.mediaSent : this.mediaBefore[(this.lastSeq - lastBack + 1) & 0xffff]!;
    return upTo - this.mediaBefore[(this.lastSeq - firstBack) & 0xffff]!;
  }

  /**
   * What a probe cluster showed (probe-clusters.ts): the estimate may jump there rather than climb.
   * Undefined until enough of it came back. Reading the result of a probe sent after a drop ends the
   * probing back (recoveryProbeBps), whatever it shows.
   */
  probeResult(probe: number, trainBps: number): number | undefined {
    const firstSentMs = this.probes.firstSentMs(probe);
    if (firstSentMs !== undefined && this.beforeDrop && firstSentMs >= this.beforeDrop.atMs) this.beforeDrop = undefined;
    return this.probes.result(probe, trainBps);
  }

  /** Whether enough of a probe came back for its result to be read now (without reading it). */
  probeCameBack(probe: number): boolean {
    return this.probes.cameBack(probe);
  }

  /** Takes a probe's result into the estimate (the caller decides when the probe is over). */
  applyProbe(bps: number): void {
    if (this.signal === 'overuse') return;
    this.estimate = this.clamp(Math.max(this.estimate, bps * 0.95));
  }

  /**
   * The rate a probe should try now, right after a large delay-based drop (LARGE_DROP) that no heavy
   * loss explains; undefined otherwise, and once a probe's result was read.
   */
  recoveryProbeBps(nowMs: number): number | undefined {
    const drop = this.beforeDrop;
    if (!drop || nowMs - drop.atMs > RECOVERY_MS || this.lossFraction > LOSS_HIGH) return undefined;
    const bps = drop.bps * RECOVERY_FRACTION;
    return bps > this.estimate ? bps : undefined;
  }

  private onArrival(sentMs: number, arrivalMs: number, size: number, nowMs: number): void {
    this.firstArrivalMs ??= arrivalMs;
    // acknowledged rate, by arrival time
    this.ackedTimes.push(arrivalMs);
    this.ackedSizes.push(size);
    this.ackedSum += size;
    while (this.ackedTimes.length > 0 && this.ackedTimes[0]! < arrivalMs - ACKED_WINDOW_MS) {
      this.ackedTimes.shift();
      this.ackedSum -= this.ackedSizes.shift()!;
    }
    // delay trend over burst groups
    if (this.groupSendMs === undefined) {
      this.groupSendMs = sentMs;
      this.groupFirstSendMs = sentMs;
      this.groupArrivalMs = arrivalMs;
      this.groupFirstArrivalMs = arrivalMs;
      return;
    }
    if (sentMs >= this.groupSendMs && (sentMs - this.groupFirstSendMs < BURST_MS || this.arrivedInBurst(sentMs, arrivalMs))) {
      this.groupSendMs = sentMs;
      this.groupArrivalMs = Math.max(this.groupArrivalMs, arrivalMs);
      return;
    }
    if (sentMs < this.groupSendMs) return; // reordered into an older group: leave it out of the trend
    if (this.prevGroupSendMs !== undefined) {
      const sendDelta = this.groupSendMs - this.prevGroupSendMs;
      this.trend((this.groupArrivalMs - this.prevGroupArrivalMs) - sendDelta, sendDelta, this.groupArrivalMs, nowMs);
    }
    this.prevGroupSendMs = this.groupSendMs;
    this.prevGroupArrivalMs = this.groupArrivalMs;
    this.groupSendMs = sentMs;
    this.groupFirstSendMs = sentMs;
    this.groupArrivalMs = arrivalMs;
    this.groupFirstArrivalMs = arrivalMs;
  }

  /** A packet that came out of the link together with the group's last (as libwebrtc's inter-arrival burst rule has it). */
  private arrivedInBurst(sentMs: number, arrivalMs: number): boolean {
    const arrivalDelta = arrivalMs - this.groupArrivalMs;
    const sendDelta = sentMs - this.groupSendMs!;
    if (sendDelta === 0) return true;
    return arrivalDelta - sendDelta < 0 && arrivalDelta <= BURST_MS && arrivalMs - this.groupFirstArrivalMs < MAX_BURST_MS;
  }

  private trend(deltaMs: number, sendDeltaMs: number, arrivalMs: number, nowMs: number): void {
    this.deltas = Math.min(this.deltas + 1, 1000);
    this.accumulatedDelay += deltaMs;
    this.smoothedDelay = TREND_SMOOTHING * this.smoothedDelay + (1 - TREND_SMOOTHING) * this.accumulatedDelay;
    this.trendX.push(arrivalMs - this.firstArrivalMs!);
    this.trendY.push(this.smoothedDelay);
    if (this.trendX.length > TREND_WINDOW) {
      this.trendX.shift();
      this.trendY.shift();
    }
    if (this.trendX.length < TREND_WINDOW) return;
    const slope = linearSlope(this.trendX, this.trendY);
    const modified = Math.min(this.deltas, 60) * slope * TREND_GAIN;
    if (modified > this.threshold) {
      this.overuseMs = this.overuseMs < 0 ? sendDeltaMs / 2 : this.overuseMs + sendDeltaMs;
      this.overuseCount += 1;
      if (this.overuseMs > OVERUSE_MS && this.overuseCount > 1 && slope >= this.prevSlope) this.signal = 'overuse';
    } else {
      this.overuseMs = -1;
      this.overuseCount = 0;
      this.signal = modified < -this.threshold ? 'underuse' : 'normal';
    }
    this.prevSlope = slope;
    // the threshold follows the trend slowly, so that competing flows do not starve this one
    const elapsed = Math.min(nowMs - (this.lastThresholdMs ?? nowMs), 100);
    this.lastThresholdMs = nowMs;
    if (Math.abs(modified) <= this.threshold + 15) {
      const k = Math.abs(modified) < this.threshold ? THRESHOLD_DOWN : THRESHOLD_UP;
      this.threshold = Math.min(Math.max(this.threshold + k * (Math.abs(modified) - this.threshold) * elapsed, 6), 600);
    }
  }

  private update(nowMs: number): void {
    const elapsedS = this.lastUpdateMs === undefined ? 0 : Math.min(nowMs - this.lastUpdateMs, 1000) / 1000;
    this.lastUpdateMs = nowMs;
    const acked = this.ackedBps;
    let next = this.estimate;
    if (this.signal === 'overuse') {
      // cut to what really got through, once per overuse
      const through = Math.max(acked, this.recentAckedBps);
      if (through > 0) next = Math.min(next, DECREASE_FACTOR * through);
      if (next < this.estimate * LARGE_DROP && this.lossFraction <= LOSS_HIGH) {
        // the first estimate of a run of drops is the one to probe back to
        const recent = this.beforeDrop && nowMs - this.beforeDrop.atMs <= RECOVERY_MS;
        this.beforeDrop = { bps: recent ? this.beforeDrop!.bps : this.estimate, atMs: nowMs };
      }
      this.signal = 'normal';
      this.overuseMs = -1;
      this.overuseCount = 0;
      this.accumulatedDelay = 0;
      this.smoothedDelay = 0;
      this.trendX.length = 0;
      this.trendY.length = 0;
    } else if (this.signal === 'normal' && this.lossFraction <= LOSS_HIGH) {
      next = next * INCREASE_PER_S ** elapsedS;
      // an estimate far above what is sent is untested: keep it within reach of the acknowledged rate
      if (acked > 0) next = Math.min(next, Math.max(this.estimate, 1.5 * acked + 10_000));
    }
    // one cut per judged window, and no more often than LOSS_CUT_INTERVAL_MS however late the feedback came
    if (this.lossFraction > LOSS_HIGH && nowMs - this.lastLossCutMs >= LOSS_CUT_INTERVAL_MS) {
      next = Math.min(next, this.estimate * (1 - 0.5 * this.lossFraction));
      this.lastLossCutMs = nowMs;
      this.lossFraction = LOSS_LOW;
    }
    this.estimate = this.clamp(next);
  }

  private clamp(bps: number): number {
    return Math.min(Math.max(bps, this.options.minBps), this.options.maxBps);
  }
}

/** Slope of the least-squares line through the points. */
function linearSlope(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i += 1) {
    sx += x[i]!;
    sy += y[i]!;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i += 1) {
    num += (x[i]! - mx) * (y[i]! - my);
    den += (x[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * The results of a feedback message read in compact form (twcc-compact.ts): one per packet received,
 * times in ms with their 250 µs resolution, and one per run of lost packets, however long.
 */
export function feedbackResults(feedback: CompactTwcc): FeedbackResult[] {
  const results: FeedbackResult[] = [];
  let timeUs = feedback.referenceTime * 64_000;
  for (const entry of feedback.entries) {
    const seq = (feedback.baseSequenceNumber + entry.offset) & 0xffff;
    if ('lost' in entry) {
      results.push({ seq, receivedAtMs: undefined, lost: entry.lost });
    } else {
      timeUs += entry.deltaUs;
      results.push({ seq, receivedAtMs: timeUs / 1000 });
    }
  }
  return results;
}
