/**
 * A stream's packet loss as the room service API shows it (docs/reference/room-api.md, "Quality"),
 * from RTCP receiver report blocks (RFC 3550 6.4.1): the cumulative number of packets lost and the
 * extended highest sequence number received. A report's own fraction lost covers the packets since
 * the previous report, a handful at the start of a stream (a key frame's burst while the send rate
 * is still ramping up), where one lost packet reads as half the stream lost. Here the loss is
 * measured over windows of at least MIN_LOSS_PACKETS packets, the first one starting at the first
 * report: until a window is complete there is no figure.
 */

/** The fewest packets a loss figure is measured over: about half a second of video, a second of audio. */
export const MIN_LOSS_PACKETS = 50;

/** Expected counts above this are a sequence reset (a new sender), not packets: the window starts again. */
const MAX_WINDOW_PACKETS = 0x7fffffff;

export class LossWindow {
  private startHighest: number | undefined;
  private startLost = 0;
  private measured: number | undefined;

  /** The loss fraction (0 to 1) of the last complete window; undefined before the first one. */
  get fraction(): number | undefined {
    return this.measured;
  }

  /** A report block: its extended highest sequence number and cumulative loss (already sign-extended). */
  report(highestSequence: number, cumulativeLost: number): void {
    if (this.startHighest === undefined) {
      this.startHighest = highestSequence >>> 0;
      this.startLost = cumulativeLost;
      return;
    }
    const expected = ((highestSequence >>> 0) - this.startHighest) >>> 0;
    if (expected > MAX_WINDOW_PACKETS) {
      this.startHighest = highestSequence >>> 0;
      this.startLost = cumulativeLost;
      return;
    }
    if (expected < MIN_LOSS_PACKETS) return;
    this.measured = Math.min(Math.max((cumulativeLost - this.startLost) / expected, 0), 1);
    this.startHighest = highestSequence >>> 0;
    this.startLost = cumulativeLost;
  }
}
