import { RtcpReceiverInfo } from 'werift';
import { seqAfter } from './rewriter.ts';

/**
 * Receiver report fields (RFC 3550 6.4.2, A.3, A.8) for a stream the server receives from a publisher.
 * The loss is the publisher's uplink loss: a packet that only came as a retransmission, after the
 * server asked for it, counts as lost, so the publisher sees what its retransmissions hide.
 */
export class ReceiveStats {
  private readonly clockRate: number;
  private started = false;
  private baseSeq = 0;
  private maxSeq = 0;
  private cycles = 0;
  private received = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;
  private jitter = 0;
  private lastTransit: number | undefined;
  private lsr = 0;
  private lsrAtMs: number | undefined;

  constructor(clockRate: number) {
    this.clockRate = clockRate;
  }

  /** Every packet as it arrives; false for one older than the newest by more than half the sequence space. */
  onPacket(seq: number, rtpTimestamp: number, arrivalMs: number, retransmitted: boolean): boolean {
    if (!this.started) {
      this.started = true;
      this.baseSeq = seq;
      this.maxSeq = seq;
    } else if (seqAfter(seq, this.maxSeq)) {
      if (seq < this.maxSeq) this.cycles += 0x10000;
      this.maxSeq = seq;
    }
    if (retransmitted) return true;
    this.received += 1;
    const transit = (arrivalMs * this.clockRate) / 1000 - rtpTimestamp;
    if (this.lastTransit !== undefined) {
      let d = Math.abs(transit - this.lastTransit);
      if (d > 0x7fffffff) d = 0;
      this.jitter += (d - this.jitter) / 16;
    }
    this.lastTransit = transit;
    return true;
  }

  onSenderReport(ntpMiddle32: number, arrivalMs: number): void {
    this.lsr = ntpMiddle32 >>> 0;
    this.lsrAtMs = arrivalMs;
  }

  report(ssrc: number, nowMs: number): RtcpReceiverInfo {
    const extendedMax = this.cycles + this.maxSeq;
    const expected = extendedMax - this.baseSeq + 1;
    // werift writes the cumulative loss unsigned: a duplicate-heavy interval reports 0, not a negative count
    const lost = Math.max(Math.min(expected - this.received, 0x7fffff), 0);
    const expectedInterval = expected - this.expectedPrior;
    const receivedInterval = this.received - this.receivedPrior;
    this.expectedPrior = expected;
    this.receivedPrior = this.received;
    const lostInterval = expectedInterval - receivedInterval;
    const fractionLost = expectedInterval <= 0 || lostInterval <= 0 ? 0 : Math.min(Math.floor((lostInterval << 8) / expectedInterval), 255);
    const dlsr = this.lsrAtMs === undefined ? 0 : Math.floor(((nowMs - this.lsrAtMs) / 1000) * 65536);
    return new RtcpReceiverInfo({
      ssrc, fractionLost, packetsLost: lost, highestSequence: extendedMax >>> 0, jitter: Math.floor(this.jitter) >>> 0,
      lsr: this.lsr, dlsr: this.lsrAtMs === undefined ? 0 : dlsr >>> 0,
    });
  }
}
