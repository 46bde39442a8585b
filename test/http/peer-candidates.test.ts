import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../helpers/inproc-media.ts';
import { startMdnsResponder } from '../helpers/mdns-responder.ts';
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

  /** Joins the node and offers a real werift offer whose candidates are `candidates` (CRLF-separated lines). */
  const offerWith = async (room: string, candidates: readonly string[]): ReturnType<RtcTestClient['offer']> => {
    const client = await RtcTestClient.join(media.role.url, await media.issue({ room_id: room, user_id: 'u', role: 'audience', subscribe_room: true }));
    clients.push(client);
    const peer = createLoopbackPeer();
    peer.addTransceiver('audio', { direction: 'recvonly' });
    const own = await gatheredOffer(peer);
    await peer.close();
    const sdp = own.split('\r\n').filter((l) => !l.startsWith('a=candidate:')).join('\r\n').replace(/(a=mid:[^\r\n]+)/, `$1\r\n${candidates.join('\r\n')}`);
    return client.offer(sdp, []);
  };
  const listener = async (address: string): ReturnType<typeof stunListener> => {
    const l = await stunListener(address);
    sockets.push(l.socket);
    return l;
  };

  it('sends no STUN to a loopback candidate when the node announces a public address, and checks an allowed one', async () => {
    const denied = await listener('127.0.0.1');
    const allowed = await listener('127.0.0.2');
    // the offer's candidates: the denied one first and of the highest priority
    const answer = await offerWith('candidates', [
      `a=candidate:1 1 udp 2130706431 127.0.0.1 ${denied.port} typ host`,
      `a=candidate:2 1 udp 2130706175 127.0.0.2 ${allowed.port} typ host`,
    ]);
    assert.equal(answer.type, 'rtc_answer', JSON.stringify(answer));
    // the node keeps checking the allowed candidate (retransmissions): by then it would have checked the other
    await waitFor(() => allowed.requests() >= 3, 'checks at the allowed candidate');
    assert.equal(denied.requests(), 0);
  });

  it('refuses an offer that breaks a line with a bare LF, which werift reads as part of a candidate line', async () => {
    const denied = await listener('127.0.0.1');
    const allowed = await listener('127.0.0.2');
    // werift splits on CRLF only: it reads one candidate at 127.0.0.1, a line split on LF reads "a=candidate:f"
    const answer = await offerWith('candidates-lf', [
      `a=candidate:f\noo 1 udp 2130706431 127.0.0.1 ${denied.port} typ host`,
      `a=candidate:2 1 udp 2130706175 127.0.0.2 ${allowed.port} typ host`,
    ]);
    assert.deepEqual([answer.type, answer['code']], ['error', 'rtc_invalid_offer'], JSON.stringify(answer));
    assert.equal(denied.requests(), 0);
  });

  it('checks an mDNS candidate by the address it resolves to', async () => {
    const denied = await listener('127.0.0.1');
    const allowed = await listener('127.0.0.2');
    const keepAlive = await listener('127.0.0.2');
    const mdns = await startMdnsResponder();
    try {
      const deniedName = `${randomUUID()}.local`;
      const allowedName = `${randomUUID()}.local`;
      mdns.answer(deniedName, '127.0.0.1');
      const answer = await offerWith('candidates-mdns', [
        `a=candidate:1 1 udp 2130706431 ${deniedName} ${denied.port} typ host`,
        `a=candidate:2 1 udp 2130706175 ${allowedName} ${allowed.port} typ host`,
        `a=candidate:3 1 udp 2130705919 127.0.0.2 ${keepAlive.port} typ host`,
      ]);
      assert.equal(answer.type, 'rtc_answer', JSON.stringify(answer));
      // the denied name resolves first: the allowed one's checks come after any to the denied address
      await waitFor(() => mdns.answered().includes(deniedName), 'the mDNS query of the denied name');
      mdns.answer(allowedName, '127.0.0.2');
      await waitFor(() => allowed.requests() >= 3, 'checks at the allowed name\'s address');
      assert.equal(denied.requests(), 0);
    } finally {
      await mdns.close();
    }
  });
});
