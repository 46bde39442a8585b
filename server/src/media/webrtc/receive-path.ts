import type { RTCPeerConnection, RtcpPacket, RtpPacket } from 'werift';

/** The part of werift's peer connection that hands each packet to its senders and receivers (not in its typings). */
interface RoutedConnection {
  readonly router: {
    routeRtp: (packet: RtpPacket) => void;
    routeRtcp: (packet: RtcpPacket) => void;
  };
}

/**
 * Takes werift's senders and receivers off a connection's packets. The session reads them off the
 * DTLS transport itself: the uplink every RTP packet (sorted by mid, rid and SSRC, answered with its
 * own feedback and receiver reports, uplink.ts) and the sender reports; the downlink every feedback
 * and receiver report, and the peer the key frame requests (peer.ts). Media leaves around werift's
 * senders (rtp-route.ts). werift's router would parse each RTP packet's extensions again, keep
 * statistics of its own and copy the packet for a track no one reads; and hand each feedback to a
 * sender that runs a bandwidth estimate of its own on it and looks for NACKed packets in a history
 * it never filled: a cost per packet, for nothing used. werift's transport calls the router's
 * methods at each packet, so this holds for transports made later.
 */
export function leaveMediaToSession(pc: RTCPeerConnection): void {
  const { router } = pc as unknown as RoutedConnection;
  router.routeRtp = ignore;
  router.routeRtcp = ignore;
}

function ignore(): void {}
