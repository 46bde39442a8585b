import { cumulativeLost } from './receive-stats.ts';

/**
 * What a subscriber's receiver reports say of the loss on one stream the node sends it (RFC 3550
 * section 6.4.1), believed only as far as what the node sent (docs/decisions.md, "Loss a
 * subscriber reports"): a cumulative loss above the packets sent on the stream is no report at all,
 * and a report adds to the loss count only its rise since the previous one, when that rise is no
 * more than the packets sent in between. A client cannot count more loss than it was sent, however
 * often it reports.
 */
export class ReportedLoss {
  /** The loss fraction of the last report believed (0 to 1). */
  fraction = 0;
  /** The cumulative loss of the last report believed. */
  private lost = 0;
  /** Packets sent on the stream when that report came. */
  private sentThen = 0;

  /**
   * A report block for the stream, with its 8-bit fraction lost and its 24-bit cumulative loss as
   * read off the wire, and the packets sent on the stream so far. Returns the packets it adds to the
   * loss count.
   */
  onReport(fractionLost: number, packetsLostField: number, sent: number): number {
    const lost = cumulativeLost(packetsLostField);
    if (lost > sent) return 0;
    const rise = lost - this.lost;
    const sentSince = sent - this.sentThen;
    this.fraction = (fractionLost & 0xff) / 256;
    this.lost = lost;
    this.sentThen = sent;
    // a fall is allowed (duplicates count as received, RFC 3550 section 6.4.1): it adds nothing
    return rise > 0 && rise <= sentSince ? rise : 0;
  }
}
