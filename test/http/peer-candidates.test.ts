import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../helpers/inproc-media.ts';
import { RtcTestClient, createLoopbackPeer, gatheredOffer, waitFor } from '../helpers/webrtc-client.ts';

/** A UDP socket on `address` that counts the STUN binding requests it receives. */
async function stunListener(address: string): Promise<{ socket: Socket; port: number; requests: () => number }> {
  const socket = createSocket('udp4');
  let requests = 0;
  socket.on('message', (message) => {
    // STUN: message type 0x0001 (binding request) and the magic cookie (RFC 8489 section 5)
    if (message.length >= 20 && message.readUInt16BE(0) === 0x0001 && message.readUInt32BE(4) === 0x2112a442) requests += 1;
  });
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  return { socket, port: socket.address().port, requests: () => requests };
}

// docs/operations/configuration.md, "Peer addresses": the media node sends connectivity checks only
// where a client may be, as coturn's denied-peer-ip does for relays.
describe('the ICE candidates a media node checks', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let media: InProcessMedia;
  const sockets: Socket[] = [];
  const clients: RtcTestClient[] = [];

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    // a node announcing a public address, that allows one loopback address all the same
    media = await startInProcessMedia(server, customer, server.deps, {
      RTC_MEDIA_PUBLIC_IP: '203.0.113.7', RTC_MEDIA_ALLOWED_PEER_IPS: '127.0.0.2',
    });
  });

  after(async () => {
    for (const c of clients) await c.close();
    for (const s of sockets) s.close();
    await media?.close();
    await server?.close();
  });

  it('sends no STUN to a loopback candidate when the node announces a public address, and checks an allowed one', async () => {
    const denied = await stunListener('127.0.0.1');
    const allowed = await stunListener('127.0.0.2');
    sockets.push(denied.socket, allowed.socket);
    const client = await RtcTestClient.join(media.role.url, await media.issue({ room_id: 'candidates', user_id: 'u', role: 'audience', subscribe_room: true }));
    clients.push(client);
    const peer = createLoopbackPeer();
    peer.addTransceiver('audio', { direction: 'recvonly' });
    const own = await gatheredOffer(peer);
    await peer.close();
    // the offer's candidates: the denied one first and of the highest priority
    const candidates = [
      `a=candidate:1 1 udp 2130706431 127.0.0.1 ${denied.port} typ host`,
      `a=candidate:2 1 udp 2130706175 127.0.0.2 ${allowed.port} typ host`,
    ].join('\r\n');
    const sdp = own.split('\r\n').filter((l) => !l.startsWith('a=candidate:')).join('\r\n').replace(/(a=mid:[^\r\n]+)/, `$1\r\n${candidates}`);
    const answer = await client.offer(sdp, []);
    assert.equal(answer.type, 'rtc_answer', JSON.stringify(answer));
    // the node keeps checking the allowed candidate (retransmissions): by then it would have checked the other
    await waitFor(() => allowed.requests() >= 3, 'checks at the allowed candidate');
    assert.equal(denied.requests(), 0);
  });
});
