/**
 * Sends protected RTP and RTCP on a connection's transport as werift's `sendRtp` and `sendRtcp` do
 * (SRTP, then the ICE pair ICE nominated), without their promises per packet: over a plain UDP pair the datagram goes
 * straight to the pair's socket; over TURN, or to a remote address that is a name, through werift.
 */
import { isIP } from 'node:net';
import type { Socket } from 'node:dgram';
import { StunProtocol, type CandidatePair, type RTCDtlsTransport, type RtcpPacket, type RtpHeader } from 'werift';
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
    const route = this.routeFor(transport);
    if (!route || !transport.srtp) return false;
    let packet: Buffer;
    try {
      // werift's SRTP reads the header's SSRC and sequence number and its serialized bytes, nothing else
      packet = transport.srtp.encrypt(payload, header as unknown as RtpHeader);
    } catch {
      return false;
    }
    return sendOn(route, packet);
  }

  /** Protects `packets` as one compound RTCP datagram and sends it, as werift's `sendRtcp` does; false when the transport cannot send now. */
  sendRtcp(transport: RTCDtlsTransport, packets: readonly RtcpPacket[]): boolean {
    const route = this.routeFor(transport);
    if (!route || !transport.srtcp) return false;
    let packet: Buffer;
    try {
      packet = transport.srtcp.encrypt(packets.length === 1 ? packets[0]!.serialize() : Buffer.concat(packets.map((p) => p.serialize())));
    } catch {
      return false;
    }
    return sendOn(route, packet);
  }

  /** The nominated pair's route, undefined before ICE nominated one. */
  private routeFor(transport: RTCDtlsTransport): Route | undefined {
    const pair = transport.iceTransport.connection.nominated;
    if (!pair) return undefined;
    const route = this.route;
    return route?.pair === pair ? route : (this.route = routeOf(pair));
  }
}

function sendOn(route: Route, packet: Buffer): boolean {
  const { pair } = route;
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

function routeOf(pair: CandidatePair): Route {
  const [host, port] = pair.remoteAddr;
  const socket = pair.protocol instanceof StunProtocol && isIP(host) !== 0 ? pair.protocol.transport.socket : undefined;
  return { pair, socket, host, port };
}
