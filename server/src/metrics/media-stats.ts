/**
 * The media role's counts (docs/operations/metrics.md, "Media quality"): plain numbers the media path
 * adds to as packets and frames pass, read by the metrics at each scrape. Here, with the metrics,
 * so that the media module imports them and the shared metrics import no module. Nothing here allocates,
 * looks anything up by name or carries an id: a count is one addition on the hot path.
 */

/** Bytes and packets (WebSocket: frames) of one transport and direction, indexed by kind code: 1 audio, 2 video, 3 data. */
export class Traffic {
  readonly bytes = new Float64Array(4);
  readonly packets = new Float64Array(4);

  add(kindCode: number, bytes: number): void {
    this.bytes[kindCode]! += bytes;
    this.packets[kindCode]! += 1;
  }
}

/** Outcomes of a peer connection's ICE, one per connection: the first that happened. */
export const ICE_OUTCOMES = ['connected', 'failed', 'timed_out', 'abandoned'] as const;
export type IceOutcome = (typeof ICE_OUTCOMES)[number];

/**
 * RTP and RTCP from clients refused before parsing (docs/decisions/security.md, "What a client's RTP and RTCP
 * may cost"): counted for the whole process, since the checks sit in front of werift's parsers,
 * which every peer connection of the process shares (one media role per process in production).
 */
export const refusedInput = { rtp: 0, rtcp: 0 };

export class MediaStats {
  /** WebSocket media frames authenticated and forwarded (once per frame). */
  framesForwarded = 0;
  /** WebSocket media frames dropped on arrival (late, replayed, crossed an unpublish). */
  framesDropped = 0;
  /** RTP packets sent on to subscribers, one per subscriber. */
  rtpForwarded = 0;
  /** Media frames authenticated from publishers / queued for subscribers over WebSocket. */
  readonly websocketIn = new Traffic();
  readonly websocketOut = new Traffic();
  /** RTP received from publishers (retransmissions and padding included) / sent to subscribers (retransmissions and probes included). */
  readonly webrtcIn = new Traffic();
  readonly webrtcOut = new Traffic();
  /** Packets lost from publishers to this node, as its own receiver reports count them. */
  packetsLostIn = 0;
  /** Packets lost from this node to subscribers, as their receiver reports say. */
  packetsLostOut = 0;
  /** Generic NACK messages (RFC 4585) received from subscribers / sent to publishers. */
  nacksReceived = 0;
  nacksSent = 0;
  /** Key frame requests (PLI or FIR) received from subscribers / PLIs sent to publishers. */
  keyFrameRequestsReceived = 0;
  keyFrameRequestsSent = 0;
  /** Changes of the simulcast layer forwarded to a subscriber, to a larger or a smaller one. */
  layerSwitchesUp = 0;
  layerSwitchesDown = 0;
  /** Videos paused for a subscriber because its downlink estimate does not fit their smallest layer. */
  bandwidthPauses = 0;
  readonly ice: Record<IceOutcome, number> = { connected: 0, failed: 0, timed_out: 0, abandoned: 0 };
  /** Connected peer connections whose selected candidate pair goes through a TURN relay, or not. */
  readonly icePaths = { direct: 0, relay: 0 };
  /**
   * Told each round trip a subscriber's receiver report gives (seconds, RFC 3550 6.4.1: LSR and
   * DLSR of a report answering one of this node's sender reports); about one per second per stream.
   */
  observeRtt: (seconds: number) => void = () => undefined;
}
