import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RtcpRrPacket, RtpHeader, type RTCDtlsTransport, type RTCPeerConnection, type RtcpPacket, type RtpPacket } from 'werift';
import { createLoopbackPeer, gatheredOffer, generateDtlsKeys, VP8_PAYLOAD_TYPE, waitFor } from '../../main/client/media/loopback-peer.ts';
import { ingressCounts, takeMediaIngress } from './media-ingress.ts';
import { leaveMediaToSession } from './receive-path.ts';

/** The ICE pair werift selected (not in its typings beyond the counts read here). */
function nominated(transport: RTCDtlsTransport): { packetsReceived: number; bytesReceived: number } {
  const pair = (transport.iceTransport.connection as unknown as { nominated?: { packetsReceived: number; bytesReceived: number } }).nominated;
  assert.ok(pair, 'a nominated pair');
  return pair;
}

describe('SRTP and SRTCP straight off the ICE socket', () => {
  let client: RTCPeerConnection;
  let server: RTCPeerConnection;
  let clientTransport: RTCDtlsTransport;
  let serverTransport: RTCDtlsTransport;
  const rtp: RtpPacket[] = [];
  const rtcp: RtcpPacket[] = [];

  before(async () => {
    client = createLoopbackPeer({ dtls: { keys: await generateDtlsKeys() } });
    server = createLoopbackPeer({ dtls: { keys: await generateDtlsKeys() } });
    leaveMediaToSession(server);
    client.addTransceiver('video', { direction: 'sendonly' });
    await server.setRemoteDescription({ type: 'offer', sdp: await gatheredOffer(client) });
    serverTransport = server.dtlsTransports[0]!;
    serverTransport.onStateChange.subscribe((state) => {
      if (state === 'connected') takeMediaIngress(serverTransport);
    });
    serverTransport.onRtp.subscribe((packet) => rtp.push(packet));
    serverTransport.onRtcp.subscribe((packet) => rtcp.push(packet));
    await server.setLocalDescription(await server.createAnswer());
    await waitFor(() => server.iceGatheringState === 'complete', 'the answer\'s ICE gathering');
    await client.setRemoteDescription({ type: 'answer', sdp: server.localDescription!.sdp });
    clientTransport = client.dtlsTransports[0]!;
    await waitFor(() => client.connectionState === 'connected' && server.connectionState === 'connected', 'DTLS on both sides');
  });
  after(async () => {
    await client?.close();
    await server?.close();
  });

  it('delivers each RTP and RTCP packet once, counted on the pair and the transport, past werift\'s STUN parse and events', async () => {
    const before = { taken: ingressCounts.datagrams, pair: nominated(serverTransport).packetsReceived, transport: serverTransport.packetsReceived };
    const payload = Buffer.alloc(200, 7);
    for (let seq = 1; seq <= 20; seq += 1) {
      await clientTransport.sendRtp(payload, new RtpHeader({ payloadType: VP8_PAYLOAD_TYPE, sequenceNumber: seq, timestamp: seq * 3000, ssrc: 0x1234 }));
    }
    await clientTransport.sendRtcp([new RtcpRrPacket({ ssrc: 0x4321, reports: [] })]);
    await waitFor(() => rtp.length >= 20 && rtcp.length >= 1, 'the packets at the server');
    assert.deepEqual(rtp.map((p) => p.header.sequenceNumber), Array.from({ length: 20 }, (_, i) => i + 1));
    assert.ok(rtp.every((p) => p.payload.equals(payload) && p.header.ssrc === 0x1234));
    assert.equal(rtcp.length, 1);
    assert.equal(rtcp[0]!.type, RtcpRrPacket.type);
    // every one of them took the fast path (none went through werift's events, which would not count it here)
    assert.equal(ingressCounts.datagrams - before.taken, 21);
    assert.equal(nominated(serverTransport).packetsReceived - before.pair, 21);
    assert.equal(serverTransport.packetsReceived - before.transport, 21);
  });

  it('drops a datagram that fails authentication and keeps delivering the next', async () => {
    const count = rtp.length;
    const header = new RtpHeader({ payloadType: VP8_PAYLOAD_TYPE, sequenceNumber: 100, timestamp: 1, ssrc: 0x1234 });
    const forged = Buffer.concat([header.serialize(header.serializeSize), Buffer.alloc(60, 1)]);
    await clientTransport.iceTransport.connection.send(forged);
    await clientTransport.sendRtp(Buffer.alloc(10), new RtpHeader({ payloadType: VP8_PAYLOAD_TYPE, sequenceNumber: 101, timestamp: 2, ssrc: 0x1234 }));
    await waitFor(() => rtp.length > count, 'the packet after the forged one');
    assert.deepEqual(rtp.slice(count).map((p) => p.header.sequenceNumber), [101]);
  });
});
