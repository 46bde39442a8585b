import type { RTCPeerConnection, RTCRtpTransceiver } from 'werift';
import type { OfferScan } from './sdp.ts';

/** The part of werift's peer connection that routes packets by SSRC (not in its typings). */
interface RoutedConnection {
  readonly router?: { readonly ssrcTable?: Record<number, unknown> };
}

/**
 * Applies to the server's transceivers what an offer says of the m-lines the client no longer uses
 * (RFC 8829 5.2.2, docs/protocol/media.md "Negotiation"), before werift reads the offer:
 *
 * - a rejected m-line (port 0 without `a=bundle-only`) stops its transceiver: werift then leaves it
 *   alone, whatever codec it names (a stopped transceiver of Firefox names PCMU only, which werift
 *   would refuse), and answers it inactive with port 0;
 * - a transceiver whose mid the offer no longer has lost its m-line to a new transceiver of the
 *   client (a rejected m-line is recycled under a new mid) and leaves the connection: werift names
 *   transceivers after their m-line's index, so it would give the old one the new mid and answer
 *   the recycled m-line from it, inactive. Leaving also keeps MAX_MLINES a bound on the transceivers
 *   a session makes the server hold.
 */
export function retireLines(pc: RTCPeerConnection, scan: OfferScan): void {
  // werift's own list (getTransceivers returns it, not a copy): what it answers and routes from
  const transceivers = pc.getTransceivers();
  for (let i = transceivers.length - 1; i >= 0; i--) {
    const transceiver = transceivers[i]!;
    if (transceiver.mid === undefined) continue;
    if (!scan.kinds.has(transceiver.mid)) {
      transceivers.splice(i, 1);
      leave(pc, transceiver);
    } else if (scan.rejected.has(transceiver.mid)) {
      transceiver.setDirection('inactive');
      transceiver.stop();
    }
  }
}

function leave(pc: RTCPeerConnection, transceiver: RTCRtpTransceiver): void {
  transceiver.setDirection('inactive');
  transceiver.stop();
  transceiver.sender.stop();
  transceiver.receiver.stop();
  const table = (pc as unknown as RoutedConnection).router?.ssrcTable;
  if (!table) return;
  for (const [ssrc, end] of Object.entries(table)) {
    if (end === transceiver.sender || end === transceiver.receiver) Reflect.deleteProperty(table, ssrc);
  }
}
