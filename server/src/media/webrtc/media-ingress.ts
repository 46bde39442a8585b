/**
 * SRTP and SRTCP from a connection's ICE sockets straight to its DTLS transport's decryption and
 * events (docs/decisions/webrtc.md, "The session, not werift, takes a connection's packets").
 *
 * werift reads every datagram as a STUN message first, then hands it on through two events (the ICE
 * protocol's and the connection's), each run with an async function and two promises, to the DTLS
 * transport, which decrypts it and runs a third for the packet. That chain costs more than a media
 * server's work on a packet. Here a datagram whose first byte says RTP or RTCP (RFC 7983) goes from
 * the socket's handler to the same decryption and the same `onRtp` and `onRtcp` events, counted on the
 * selected pair and the transport as werift counts it; STUN, DTLS and anything before SRTP is up
 * take werift's own path. A datagram that fails authentication or parsing is dropped, as werift drops it.
 */
import { RtcpPacketConverter, RtpPacket, StunProtocol, type RTCDtlsTransport, type RtcpPacket } from 'werift';

/** werift's ICE connection: its protocols (not in its typings) and the pair it selected. */
interface IceConnection {
  readonly protocols: readonly unknown[];
  readonly nominated?: { readonly protocol: unknown; packetsReceived: number; bytesReceived: number };
}

/** A StunProtocol as the socket's handler calls it (werift's `transport.onData`, set in `connectionMade`). */
interface SocketSide {
  readonly localCandidate?: unknown;
  readonly transport: { onData: (data: Buffer, addr: readonly [string, number]) => void } | undefined;
}

/** What took the fast path, for the test that fails when a werift upgrade bypasses it. */
export const ingressCounts = { datagrams: 0 };

const hooked = new WeakSet<object>();

/**
 * Takes the SRTP and SRTCP of `transport`'s ICE sockets once its SRTP is up (call when the transport
 * is connected, again after an ICE restart: sockets already taken are left as they are).
 */
export function takeMediaIngress(transport: RTCDtlsTransport): void {
  if (!transport.srtpStarted) return;
  const connection = transport.iceTransport.connection as unknown as IceConnection;
  for (const protocol of connection.protocols) {
    if (!(protocol instanceof StunProtocol)) continue; // TURN's data keeps werift's path
    const side = protocol as unknown as SocketSide;
    const socket = side.transport;
    if (!socket || hooked.has(socket)) continue;
    hooked.add(socket);
    const viaWerift = socket.onData;
    socket.onData = (data, addr) => {
      const first = data[0] ?? 0;
      if (first < 128 || first > 191 || !side.localCandidate) return viaWerift(data, addr);
      const pair = connection.nominated;
      if (pair && pair.protocol === protocol) {
        pair.packetsReceived += 1;
        pair.bytesReceived += data.length;
      }
      receive(transport, data);
    };
  }
}

function receive(transport: RTCDtlsTransport, data: Buffer): void {
  ingressCounts.datagrams += 1;
  transport.bytesReceived += data.length;
  transport.packetsReceived += 1;
  if (data.length >= 2 && data[1]! >= 192 && data[1]! <= 208) {
    let packets: RtcpPacket[];
    try {
      packets = RtcpPacketConverter.deSerialize(transport.srtcp.decrypt(data));
    } catch {
      return;
    }
    for (const packet of packets) {
      try {
        transport.onRtcp.execute(packet);
      } catch {
        // as werift: a handler's error costs that packet, not the ones after it
      }
    }
    return;
  }
  let rtp: RtpPacket;
  try {
    rtp = RtpPacket.deSerialize(transport.srtp.decrypt(data));
  } catch {
    return;
  }
  try {
    transport.onRtp.execute(rtp);
  } catch {
    // dropped, as werift drops it
  }
}
