/**
 * How much a subscriber's downlink may resend when the client asks again for packets (NACK)
 * (docs/protocol/media.md, "Downlink"). Clock-free: the caller passes the estimate and the time
 * elapsed at each tick.
 *
 * Retransmissions have an allowance of their own, RTX_SHARE of the estimate (libwebrtc holds them
 * to the whole estimate), rather than what media leaves of it: a frame left unrepaired stops the
 * client's video until the next key frame, which costs far more than the packet, and media at the
 * edge of the estimate (a layer kept through a dip) would otherwise leave nothing for repairs.
 */

/** Retransmissions may take this share of the estimate. */
const RTX_SHARE = 0.5;
/** The allowance holds at most this much time of that share (a key frame's lost packets fit). */
const ALLOWANCE_MS = 1_000;

export class RetransmitBudget {
  private tokens = 0;

  /** A tick: `elapsedMs` more of the share. */
  refill(estimateBps: number, elapsedMs: number): void {
    const rate = (estimateBps / 8) * RTX_SHARE;
    this.tokens = Math.min(this.tokens + (rate * elapsedMs) / 1000, (rate * ALLOWANCE_MS) / 1000);
  }

  /** Whether a retransmission of `bytes` may go now; if so it is charged. */
  allow(bytes: number): boolean {
    if (this.tokens < bytes) return false;
    this.tokens -= bytes;
    return true;
  }
}
