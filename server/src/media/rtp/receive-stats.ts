import { RtcpReceiverInfo } from 'werift';

/** Sequence numbers remembered behind the highest, to tell duplicates; a power of two above 32. */
const WINDOW = 2048;
/** RFC 3550 A.1: a step forward of this many or more is a jump, not loss. */
const MAX_DROPOUT = 3000;
/** How far behind the highest a packet still counts as reordered (late retransmissions included). */
const MAX_MISORDER = WINDOW - 1;
/** A report block's cumulative loss is a signed 24-bit number (RFC 3550 section 6.4.1). */
const MAX_LOST = 0x7fffff;
const MIN_LOST = -0x800000;

/**
 * Reception statistics of one stream the server receives from a publisher, for the report blocks
 * of its receiver reports (RFC 3550 section 6.4.1, computed as in appendices A.1, A.3 and A.8).
 *
 * Loss here is the loss of the publisher's uplink, which the publisher adapts its sending to: a
 * packet that arrived only because the server asked for it again (RFC 4585 generic NACK) was lost
 * on the way and is not counted as received, or the publisher would never see the loss that its
 * retransmissions hide.
 */
export class ReceiveStats {
  private readonly rtpUnitsPerMs: number;
  private readonly seen = new Uint32Array(WINDOW / 32);
  private started = false;
  /** Extended (unwrapped) sequence numbers: the first counted and the highest seen. */
  private baseSeq = 0;
  private maxSeq = 0;
  /** Packets counted received: unique, not retransmitted, not older than the first. */
  private received = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;
  /** After a jump, the sequence number that confirms the source restarted its numbering (A.1's bad_seq). */
  private restartSeq = -1;
  private restartRetransmitted = false;
  /** Interarrival jitter in RTP timestamp units, unrounded (A.8). */
  private jitter = 0;
  private hasTransit = false;
  private lastArrivalRtp = 0;
  private lastTimestamp = 0;
  private lastSrNtp = 0;
  private lastSrArrivalMs = Number.NaN;

  constructor(clockRate: number) {
    if (!(clockRate > 0)) throw new TypeError('clockRate must be positive');
    this.rtpUnitsPerMs = clockRate / 1000;
  }

  /**
   * Every packet as it arrives. `retransmitted`: the server had asked for it (NackRequester.onPacket).
   * Returns false for a duplicate of a packet seen within the last 2048 sequence numbers.
   */
  onPacket(seq: number, rtpTimestamp: number, arrivalMs: number, retransmitted: boolean): boolean {
    seq &= 0xffff;
    if (!this.started) {
      this.restart(seq, retransmitted);
      this.updateJitter(rtpTimestamp, arrivalMs, retransmitted);
      return true;
    }
    const diff = ((seq - this.maxSeq) << 16) >> 16;
    const ext = this.maxSeq + diff;
    if (diff > 0 && diff < MAX_DROPOUT) {
      for (let s = Math.max(this.maxSeq + 1, ext - WINDOW + 1); s < ext; s++) this.clearSeen(s);
      this.maxSeq = ext;
      this.markSeen(ext);
      if (!retransmitted) this.received += 1;
      this.restartSeq = -1;
      this.updateJitter(rtpTimestamp, arrivalMs, retransmitted);
      return true;
    }
    if (diff <= 0 && diff >= -MAX_MISORDER) {
      if (this.isSeen(ext)) return false;
      this.markSeen(ext);
      // Older than the first packet: outside the expected range, so not counted either way.
      if (!retransmitted && ext >= this.baseSeq) this.received += 1;
      return true;
    }
    // A.1: a jump is taken for a restart of the source's numbering once the next packet follows it.
    if (seq !== this.restartSeq) {
      this.restartSeq = (seq + 1) & 0xffff;
      this.restartRetransmitted = retransmitted;
      return true;
    }
    this.restart((seq - 1) & 0xffff, this.restartRetransmitted);
    this.maxSeq = this.baseSeq + 1;
    this.markSeen(this.maxSeq);
    if (!retransmitted) this.received += 1;
    this.updateJitter(rtpTimestamp, arrivalMs, retransmitted);
    return true;
  }

  /** A sender report of the stream arrived: `ntpMiddle32` is the middle 32 bits of its NTP timestamp. */
  onSenderReport(ntpMiddle32: number, arrivalMs: number): void {
    this.lastSrNtp = ntpMiddle32 >>> 0;
    this.lastSrArrivalMs = arrivalMs;
  }

  /**
   * The report block since the previous report. `packetsLost` holds the 24-bit two's complement
   * of the cumulative loss (what goes on the wire: werift writes the field unsigned and throws on a
   * negative number); `jitter` is in RTP timestamp units; `dlsr` in 1/65536 s, 0 with `lsr` before
   * any sender report.
   */
  report(ssrc: number, nowMs: number): RtcpReceiverInfo {
    let fractionLost = 0;
    let packetsLost = 0;
    if (this.started) {
      const expected = this.maxSeq - this.baseSeq + 1;
      packetsLost = Math.min(MAX_LOST, Math.max(MIN_LOST, expected - this.received));
      const expectedInterval = expected - this.expectedPrior;
      const lostInterval = expectedInterval - (this.received - this.receivedPrior);
      this.expectedPrior = expected;
      this.receivedPrior = this.received;
      if (expectedInterval > 0 && lostInterval > 0) fractionLost = Math.min(255, Math.floor((lostInterval * 256) / expectedInterval));
    }
    const hasSr = !Number.isNaN(this.lastSrArrivalMs);
    return new RtcpReceiverInfo({
      ssrc: ssrc >>> 0,
      fractionLost,
      packetsLost: packetsLost & 0xffffff,
      highestSequence: this.maxSeq >>> 0,
      jitter: Math.floor(this.jitter) >>> 0,
      lsr: hasSr ? this.lastSrNtp : 0,
      dlsr: hasSr ? Math.round(Math.max(0, nowMs - this.lastSrArrivalMs) * 65.536) >>> 0 : 0,
    });
  }

  /** Starts counting at `seq` (A.1's init_seq); jitter carries on, its transit times do not. */
  private restart(seq: number, retransmitted: boolean): void {
    this.started = true;
    this.seen.fill(0);
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.markSeen(seq);
    this.received = retransmitted ? 0 : 1;
    this.expectedPrior = 0;
    this.receivedPrior = 0;
    this.restartSeq = -1;
    this.hasTransit = false;
  }

  /**
   * A.8, from packets in sequence only. A retransmission's transit includes the time it took to ask
   * for it, which says nothing of the network's jitter.
   */
  private updateJitter(rtpTimestamp: number, arrivalMs: number, retransmitted: boolean): void {
    if (retransmitted) return;
    const arrivalRtp = arrivalMs * this.rtpUnitsPerMs;
    const timestamp = rtpTimestamp >>> 0;
    if (this.hasTransit) {
      // The signed 32-bit difference of timestamps keeps a wrap of the timestamp out of the jitter.
      const d = Math.abs(arrivalRtp - this.lastArrivalRtp - ((timestamp - this.lastTimestamp) | 0));
      this.jitter += (d - this.jitter) / 16;
    }
    this.hasTransit = true;
    this.lastArrivalRtp = arrivalRtp;
    this.lastTimestamp = timestamp;
  }

  private isSeen(ext: number): boolean {
    const slot = ext & (WINDOW - 1);
    return ((this.seen[slot >>> 5] ?? 0) & (1 << (slot & 31))) !== 0;
  }

  private markSeen(ext: number): void {
    const slot = ext & (WINDOW - 1);
    this.seen[slot >>> 5] = (this.seen[slot >>> 5] ?? 0) | (1 << (slot & 31));
  }

  private clearSeen(ext: number): void {
    const slot = ext & (WINDOW - 1);
    this.seen[slot >>> 5] = (this.seen[slot >>> 5] ?? 0) & ~(1 << (slot & 31));
  }
}

/** The cumulative loss of a report block's field as read off the wire (24 bits, two's complement: RFC 3550 section 6.4.1). */
export function cumulativeLost(field: number): number {
  const value = field & 0xffffff;
  return value & 0x800000 ? value - 0x1000000 : value;
}
