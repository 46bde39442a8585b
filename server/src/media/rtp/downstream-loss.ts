/**
 * The most downstream loss a publisher is told of (docs/decisions.md, "Loss a subscriber reports"):
 * Opus's in-band FEC gains nothing above it (libwebrtc's Opus encoder clamps the loss it is told at
 * 20 %), while a publisher's own bandwidth estimation would read more as a reason to send less to
 * every subscriber.
 */
export const MAX_RELAYED_LOSS = 0.2;

/**
 * The downstream loss to tell a stream's publisher, from the loss each of its subscribers reports
 * (fractions): the lower median, capped at MAX_RELAYED_LOSS. The node terminates RTCP and no one
 * subscriber's report reaches the publisher as is: with two subscribers or more, raising it takes
 * half of them, and one alone moves it no further than the cap. 0 without subscribers.
 */
export function relayedLoss(losses: readonly number[]): number {
  if (losses.length === 0) return 0;
  const sorted = [...losses].sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return Math.min(Math.max(median, 0), MAX_RELAYED_LOSS);
}
