/**
 * The checks in front of werift's RTP and RTCP parsers (docs/decisions.md, "What a client's RTP and
 * RTCP may cost"), installed once per process like the DTLS check (dtls-verify.ts).
 *
 * werift's DTLS transport decrypts each SRTCP datagram and hands it to `RtcpPacketConverter.deSerialize`;
 * it reads the header of each SRTP packet with `RtpHeader.deSerialize`, while decrypting and again after.
 * Both are static methods werift looks up at each call, so replacing them here puts the checks of
 * rtcp-check.ts and rtp-check.ts first on every path: a refused RTCP datagram parses to no packet, a
 * refused RTP header throws, and werift drops the packet as it drops one that fails authentication.
 * An accepted RTCP datagram is parsed here, each sub-packet from its own bytes (werift hands each the
 * rest of the datagram), by werift's parser for its type; transport-cc feedback by the node's own
 * (rtp/twcc-compact.ts), which does not build an object per status reported. RTP and RTCP headers
 * are read by werift's parses rewritten without their cost (rtp-header-parse.ts). werift is pinned exactly:
 * `webrtc/input-guard.test.ts` and `webrtc/webrtc-input-guard.test.ts` fail if an upgrade bypasses this.
 */
import {
  RtcpHeader, RtcpPacketConverter, RtcpPayloadSpecificFeedback, RtcpRrPacket, RtcpSrPacket, RtcpTransportLayerFeedback, RtpHeader,
  type RtcpPacket,
} from 'werift';
import { refusedInput } from '../../metrics/media-stats.ts';
import { checkRtcp, FMT_TWCC, RTCP_PSFB, RTCP_RR, RTCP_RTPFB, RTCP_SR } from '../rtp/rtcp-check.ts';
import { checkRtpHeader } from '../rtp/rtp-check.ts';
import { parseCompactTwcc } from '../rtp/twcc-compact.ts';
import { parseRtcpHeader, parseRtpHeader } from './rtp-header-parse.ts';

/** An RTP header the checks refused (werift drops the packet). */
export class RefusedRtpError extends Error {
  constructor(reason: string) {
    super(`RTP header refused: ${reason}`);
    this.name = 'RefusedRtpError';
  }
}

/** Parses a decrypted RTCP datagram that passes checkRtcp; none of it when it does not. */
export function parseCheckedRtcp(data: Buffer): RtcpPacket[] {
  const check = checkRtcp(data);
  if (!check.ok) {
    refusedInput.rtcp += 1;
    return [];
  }
  const packets: RtcpPacket[] = [];
  try {
    for (const part of check.parts) {
      const body = data.subarray(part.start, part.end);
      const header = RtcpHeader.deSerialize(data.subarray(part.start - 4, part.start));
      if (part.type === RTCP_SR) packets.push(RtcpSrPacket.deSerialize(body, part.count));
      else if (part.type === RTCP_RR) packets.push(RtcpRrPacket.deSerialize(body, part.count));
      else if (part.type === RTCP_RTPFB && part.count === FMT_TWCC) packets.push(compactTwcc(data, part.start, part.end, header));
      else if (part.type === RTCP_RTPFB) packets.push(RtcpTransportLayerFeedback.deSerialize(body, header));
      else if (part.type === RTCP_PSFB) packets.push(RtcpPayloadSpecificFeedback.deSerialize(body, header));
    }
  } catch {
    // checked input werift cannot read after all: none of the datagram
    refusedInput.rtcp += 1;
    return [];
  }
  return packets;
}

function compactTwcc(data: Buffer, start: number, end: number, header: RtcpHeader): RtcpTransportLayerFeedback {
  const feedback = parseCompactTwcc(data, start, end, header);
  if (!feedback) throw new Error('transport-cc feedback the check passed does not parse');
  return new RtcpTransportLayerFeedback({ header, feedback });
}

let installed = false;

/** Puts the checks in front of werift's parsers, once per process. */
export function installInputGuard(): void {
  if (installed) return;
  installed = true;
  RtpHeader.deSerialize = function checkedRtpHeader(rawPacket: Buffer): RtpHeader {
    const check = checkRtpHeader(rawPacket);
    if (!check.ok) {
      refusedInput.rtp += 1;
      throw new RefusedRtpError(check.reason);
    }
    return parseRtpHeader(rawPacket);
  };
  RtcpHeader.deSerialize = parseRtcpHeader;
  RtcpPacketConverter.deSerialize = parseCheckedRtcp;
}
