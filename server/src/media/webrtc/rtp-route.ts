/**
 * Sends protected RTP on a connection's transport as werift's `sendRtp` does (SRTP, then the ICE
 * pair ICE nominated), without its four promises per packet: over a plain UDP pair the datagram goes
 * straight to the pair's socket; over TURN, or to a remote address that is a name, through werift.
 */
import { isIP } from 'node:net';
import type { Socket } from 'node:dgram';
import { StunProtocol, type CandidatePair, type RTCDtlsTransport, type RtpHeader } from 'werift';
import type { SrtpHeaderView } from '../rtp/header-bytes.ts';

interface Route {
  readonly pair: CandidatePair;
  /** undefined: through werift (TURN, or a name to resolve). */
  readonly socket: Socket | undefined;
  readonly host: string;
  readonly port: number;
}

export class RtpRoute {
  private route: Route | undefined;

  /** Protects `payload` behind `header` and sends it; false when the transport cannot send now. */
  send(transport: RTCDtlsTransport, payload: Buffer, header: SrtpHeaderView): boolean {
    const pair = transport.iceTransport.connection.nominated;
    if (!pair || !transport.srtp) return false;
    let route = this.route;
    if (route?.pair !== pair) route = this.route = routeOf(pair);
    let packet: Buffer;
    try {
      // werift's SRTP reads the header's SSRC and sequence number and its serialized bytes, nothing else
      packet = transport.srtp.encrypt(payload, header as unknown as RtpHeader);
    } catch {
      return false;
    }
    if (route.socket) {
      if (pair.protocol instanceof StunProtocol && pair.protocol.transport.closed) return false;
      try {
        route.socket.send(packet, route.port, route.host);
      } catch {
        return false; // the socket closed under the pair
      }
    } else {
      pair.protocol.sendData(packet, pair.remoteAddr).catch(() => undefined);
    }
    return true;
  }
}

function routeOf(pair: CandidatePair): Route {
  const [host, port] = pair.remoteAddr;
  const socket = pair.protocol instanceof StunProtocol && isIP(host) !== 0 ? pair.protocol.transport.socket : undefined;
  return { pair, socket, host, port };
}
