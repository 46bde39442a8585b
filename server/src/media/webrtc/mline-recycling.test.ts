/**
 * The m-lines of a participant who left, as Firefox offers them (docs/protocol/media.md, "Negotiation"):
 * under max-bundle every m-line but the BUNDLE tag has port 0 and `a=bundle-only`, which is not a
 * rejection (RFC 8829 5.2.1); a transceiver a client stopped is offered rejected (port 0, out of
 * BUNDLE), and a later offer recycles its m-line for a new transceiver with a new mid (5.2.2).
 * A werift client in Node replays those SDP shapes against the in-process media role, on its real
 * DTLS transport, so that what the answers name is what carries packets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RtpPacket } from 'werift';
import { createCustomer, type Customer } from '../../../../test/helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../../../../test/helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../../../../test/helpers/inproc-media.ts';
import { RtcTestClient, waitFor, type RtcOfferTrack } from '../../../../test/helpers/webrtc-client.ts';

const ROOM = 'recycle';
const [ANT, BEE, CAT] = [1, 2, 3];

/** An m-section of an answer, as the tests read it. */
interface AnswerLine {
  readonly port: string;
  readonly mid: string | undefined;
  readonly direction: string | undefined;
  readonly ssrc: number | undefined;
}

function readAnswer(sdp: string): { bundle: string[]; lines: AnswerLine[] } {
  const [session = '', ...sections] = sdp.split('\r\nm=');
  const bundle = /^a=group:BUNDLE(.*)$/m.exec(session)?.[1]?.trim().split(' ').filter((m) => m !== '') ?? [];
  const lines = sections.map((section) => ({
    port: section.split(' ')[1] ?? '',
    mid: /^a=mid:(\S+)/m.exec(section)?.[1],
    direction: /^a=(sendrecv|sendonly|recvonly|inactive)$/m.exec(section)?.[1],
    ssrc: Number(/^a=ssrc:(\d+)/m.exec(section)?.[1]) || undefined,
  }));
  return { bundle, lines };
}

/** An offer of the session part and m-sections given (each without its leading `m=`), with this BUNDLE group. */
function offerOf(session: string, bundle: readonly string[], sections: readonly string[]): string {
  const head = session.replace(/^a=group:BUNDLE.*$/m, `a=group:BUNDLE ${bundle.join(' ')}`);
  return `${[head, ...sections.map((s) => s.replace(/\r\n$/, ''))].join('\r\nm=')}\r\n`;
}

/** Firefox's shape of a bundled m-line other than the tag: port 0 and `a=bundle-only`, with this mid and direction. */
function bundledLine(section: string, mid: string, direction: string): string {
  return section.replace(/^(\S+) \d+ /, '$1 0 ').replace(/^a=mid:\S+$/m, `a=mid:${mid}\r\na=bundle-only`)
    .replace(/^a=(sendrecv|sendonly|recvonly|inactive)$/m, `a=${direction}`);
}

/** A rejected m-line as Firefox writes that of a stopped transceiver: port 0, no transport, a codec the server lacks. */
const rejectedLine = (mid: string): string => `audio 0 UDP/TLS/RTP/SAVPF 0\r\nc=IN IP4 0.0.0.0\r\na=inactive\r\na=mid:${mid}\r\na=rtpmap:0 PCMU/8000`;

describe('m-lines a client offers bundle-only, rejects and recycles (RFC 8829 5.2), as Firefox does', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let media: InProcessMedia;
  const clients: RtcTestClient[] = [];

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    media = await startInProcessMedia(server, customer);
  });

  after(async () => {
    for (const c of clients) await c.close();
    await media?.close();
    await server?.close();
  });

  const joinAs = async (user: string, publish: number): Promise<RtcTestClient> => {
    const client = await RtcTestClient.join(media.role.url, await media.issue({
      room_id: ROOM, user_id: user, role: 'speaker', publish_streams: [publish], subscribe_room: true,
    }));
    clients.push(client);
    assert.equal((await client.publish(publish, 'audio')).type, 'published');
    return client;
  };
  /** Sends audio on `streamId` every 20 ms until stopped. */
  const pump = (client: RtcTestClient, streamId: number): (() => void) => {
    const timer = setInterval(() => client.sendRtp(streamId, Buffer.from([0xf8, 1, 2, 3])), 20);
    return () => clearInterval(timer);
  };
  const answerOf = async (client: RtcTestClient, sdp: string, tracks: readonly RtcOfferTrack[]) => {
    const reply = await client.offer(sdp, tracks);
    assert.equal(reply.type, 'rtc_answer', JSON.stringify(reply));
    return { ...readAnswer(reply['sdp'] as string), refused: reply['refused'] as string[] };
  };

  it('keeps a left participant\'s bundle-only m-lines open, answers them rejected once the client rejects them, and forwards on the recycled m-line', async () => {
    const bee = await joinAs('bee', BEE);
    await bee.negotiate([{ streamId: BEE, kind: 'audio', direction: 'send' }]);
    const ant = await joinAs('ant', ANT);
    await ant.negotiate([{ streamId: ANT, kind: 'audio', direction: 'send' }, { streamId: BEE, kind: 'audio', direction: 'recv' }]);
    const stopBee = pump(bee, BEE);
    try {
      await ant.waitForRtp(BEE, 5);
    } finally {
      stopBee();
    }
    // ant's real offer: mid 0 sends ANT (the BUNDLE tag), mid 1 received BEE
    const [session = '', sendLine = '', recvLine = ''] = ant.pc.localDescription!.sdp.split('\r\nm=');
    const [sendMid, recvMid] = [ant.mid(ANT, 'send'), ant.mid(BEE, 'recv')];
    const sending: RtcOfferTrack = { mid: sendMid, stream_id: ANT, direction: 'send' };

    // bee leaves: ant's m-line of it goes inactive, offered bundle-only as Firefox does
    await bee.close();
    const inactive = await answerOf(ant, offerOf(session, [sendMid, recvMid], [sendLine, bundledLine(recvLine, recvMid, 'inactive')]), [sending]);
    assert.deepEqual(inactive.bundle, [sendMid, recvMid], 'a bundle-only m-line is not rejected: it stays in BUNDLE');
    assert.deepEqual(inactive.lines.map((l) => [l.mid, l.direction, l.port !== '0']), [[sendMid, 'recvonly', true], [recvMid, 'inactive', true]]);

    // the client stops that transceiver (as Firefox does when an answer rejects one): its m-line is offered rejected
    const rejected = await answerOf(ant, offerOf(session, [sendMid], [sendLine, rejectedLine(recvMid)]), [sending]);
    assert.deepEqual(rejected.bundle, [sendMid]);
    assert.deepEqual(rejected.lines.map((l) => [l.mid, l.port]), [[sendMid, '9'], [recvMid, '0']]);

    // cat publishes: the next offer recycles the rejected m-line for a new transceiver, under a new mid
    const cat = await joinAs('cat', CAT);
    await cat.negotiate([{ streamId: CAT, kind: 'audio', direction: 'send' }]);
    const newMid = 'r5';
    const recycledOffer = offerOf(session, [sendMid, newMid], [sendLine, bundledLine(recvLine, newMid, 'recvonly')]);
    const tracks: RtcOfferTrack[] = [sending, { mid: newMid, stream_id: CAT, direction: 'recv' }];
    const recycled = await answerOf(ant, recycledOffer, tracks);
    assert.deepEqual(recycled.refused, []);
    assert.deepEqual(recycled.bundle, [sendMid, newMid]);
    assert.deepEqual(recycled.lines.map((l) => [l.mid, l.direction, l.port]), [[sendMid, 'recvonly', '9'], [newMid, 'sendonly', '9']]);
    const catSsrc = recycled.lines[1]!.ssrc;
    assert.ok(catSsrc !== undefined, 'the answer names the SSRC of the recycled m-line');

    // cat's packets reach ant on that SSRC (read off ant's DTLS transport: its werift never saw these answers)
    let arrived = 0;
    ant.pc.dtlsTransports[0]!.onRtp.subscribe((packet: RtpPacket) => {
      if (packet.header.ssrc === catSsrc) arrived += 1;
    });
    const stopCat = pump(cat, CAT);
    try {
      await waitFor(() => arrived >= 5, `cat's packets on the recycled m-line (have ${arrived})`);
      // offered again unchanged (any later change is), the recycled m-line keeps sending
      const again = await answerOf(ant, recycledOffer, tracks);
      assert.deepEqual(again.lines.map((l) => [l.mid, l.direction, l.ssrc]), [[sendMid, 'recvonly', again.lines[0]!.ssrc], [newMid, 'sendonly', catSsrc]]);
      const before = arrived;
      await waitFor(() => arrived >= before + 5, `cat's packets after the offer again (have ${arrived - before})`);
    } finally {
      stopCat();
    }
  });
});
