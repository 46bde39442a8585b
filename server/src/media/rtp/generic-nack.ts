/**
 * The NACK messages the WebRTC uplink sends its publisher, built with werift's RTCP classes. Kept
 * apart from the requester (nack-requester.ts), which the relay feed uses as well, so that a media
 * process loads werift only with its first WebRTC session (docs/decisions/webrtc.md).
 */
import { GenericNack, RtcpTransportLayerFeedback } from 'werift';

/** Most FCI entries in one NACK message: 12 + 4 × 250 bytes stays well under a path MTU. */
const MAX_FCI_ENTRIES = 250;

/**
 * Generic NACK messages (RFC 4585 section 6.2.1) asking `mediaSourceSsrc` for `seqs`, as werift
 * packs them (each entry a PID and a bitmask of the 16 numbers after it), split into several
 * messages when they would not fit one. Give the numbers ascending, as due() returns them.
 */
export function buildGenericNacks(senderSsrc: number, mediaSourceSsrc: number, seqs: readonly number[]): RtcpTransportLayerFeedback[] {
  const out: RtcpTransportLayerFeedback[] = [];
  let start = 0;
  let entries = 0;
  let pid = -1;
  for (let i = 0; i < seqs.length; i++) {
    const seq = seqs[i]! & 0xffff;
    // werift's own rule: a number joins the current entry when it is 1..16 above its PID, without wrapping.
    const d = seq - pid - 1;
    if (pid >= 0 && d >= 0 && d < 16) continue;
    if (entries === MAX_FCI_ENTRIES) {
      out.push(nack(senderSsrc, mediaSourceSsrc, seqs.slice(start, i)));
      start = i;
      entries = 0;
    }
    pid = seq;
    entries += 1;
  }
  if (start < seqs.length) out.push(nack(senderSsrc, mediaSourceSsrc, seqs.slice(start)));
  return out;
}

function nack(senderSsrc: number, mediaSourceSsrc: number, lost: readonly number[]): RtcpTransportLayerFeedback {
  const feedback = new GenericNack({ senderSsrc: senderSsrc >>> 0, mediaSourceSsrc: mediaSourceSsrc >>> 0, lost: lost.map((s) => s & 0xffff) });
  return new RtcpTransportLayerFeedback({ feedback, header: feedback.header });
}
