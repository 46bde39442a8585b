/**
 * Hostile RTCP and RTP from a subscriber holding a valid grant, over a real WebRTC session with a
 * real platform (`rtc serve` with the api, token and media roles in one process): the media node
 * refuses and counts what claims more than its bytes hold, keeps serving the other participants and
 * the token API, and believes a subscriber's receiver reports no further than what it sent
 * (docs/decisions.md, "What a client's RTP and RTCP may cost").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RtcpRrPacket, RtpHeader, type RtcpPacket } from 'werift';
import { hostileDatagram, pli, receiverReport, runChunk, twccFeedback } from '../../../../test/helpers/hostile-rtcp.ts';
import { request } from '../../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { parseStrictExposition, sampleValue, type MetricFamily } from '../../../../test/helpers/prometheus.ts';
import { RtcTestClient, waitFor } from '../../../../test/helpers/webrtc-client.ts';
import { TokenIssuer, type TokenBody } from '../../../../test/helpers/media-session.ts';

/** Raw bytes werift's DTLS transport encrypts as one SRTCP datagram (it concatenates what `serialize` returns). */
function raw(bytes: Buffer): RtcpPacket {
  return { serialize: () => bytes } as unknown as RtcpPacket;
}

describe('hostile RTCP and RTP from a subscriber (rtc serve: api, token, media)', () => {
  let server: ServedPlatform;
  let projectA: TokenIssuer;
  let projectB: TokenIssuer;
  const clients: RtcTestClient[] = [];
  let pumping: NodeJS.Timeout | undefined;

  before(async () => {
    server = await serveInProcess({
      roles: ['api', 'token', 'media'],
      env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADMIN_PORT: '0' },
    });
    projectA = await TokenIssuer.create(() => server.api);
    projectB = await TokenIssuer.create(() => server.api);
  });
  after(async () => {
    clearInterval(pumping);
    for (const c of clients) await c.close();
    await server?.stop();
  });

  const scrape = async (): Promise<ReadonlyMap<string, MetricFamily>> => {
    const res = await request(`${server.urls['admin']}/metrics`);
    assert.equal(res.status, 200);
    return parseStrictExposition(res.text);
  };

  it('refuses and counts the 65,535-packet feedback and an RTP header of too many extensions, keeps serving, reads honest burst loss, and bounds forged loss', async () => {
    const room = 'hostile-rtcp';
    const join = async (body: Omit<TokenBody, 'room_id'>, onSsrc?: (ssrc: number) => void): Promise<RtcTestClient> => {
      const c = await RtcTestClient.join(server.urls['media']!, await projectA.issue({ ...body, room_id: room }), {
        keepPayloads: false, onRtp: (_id, packet) => onSsrc?.(packet.header.ssrc),
      });
      clients.push(c);
      return c;
    };
    const pub = await join({ user_id: 'pub', role: 'speaker', publish_streams: [1] });
    assert.equal((await pub.publish(1, 'audio')).type, 'published');
    await pub.negotiate([{ streamId: 1, kind: 'audio', direction: 'send' }]);
    await pub.waitConnected();
    const benign = await join({ user_id: 'listener', role: 'audience', subscribe_room: true });
    await benign.negotiate([{ streamId: 1, kind: 'audio', direction: 'recv' }]);
    let sentSsrc: number | undefined;
    const hostile = await join({ user_id: 'attacker', role: 'audience', subscribe_room: true }, (ssrc) => {
      sentSsrc = ssrc;
    });
    await hostile.negotiate([{ streamId: 1, kind: 'audio', direction: 'recv' }]);
    // the attacker's own receiver reports would overwrite its forged one: it sends none but those
    for (const t of hostile.pc.getTransceivers()) t.receiver.rtcpRunning = true;
    await Promise.all([benign.waitConnected(), hostile.waitConnected()]);

    // the publisher's audio, one packet every 20 ms; the node's receiver reports to it, as they come
    let sent = 0;
    pumping = setInterval(() => {
      pub.sendRtp(1, Buffer.alloc(80, sent & 0xff));
      sent += 1;
    }, 20);
    const publisherReports: number[] = [];
    pub.pc.dtlsTransports[0]!.onRtcp.subscribe((packet) => {
      if (packet.type === RtcpRrPacket.type) for (const r of packet.reports) publisherReports.push(r.fractionLost);
    });
    await waitFor(() => benign.receivedCount(1) >= 10 && hostile.receivedCount(1) >= 10, 'audio at both subscribers');
    const before = await scrape();
    const refused = (f: ReadonlyMap<string, MetricFamily>, packet: string): number => sampleValue(f, 'rtc_media_input_refused_total', { packet });
    const lostOut = (f: ReadonlyMap<string, MetricFamily>): number => sampleValue(f, 'rtc_media_packets_lost_total', { direction: 'out' });
    const keyFrameRequests = (f: ReadonlyMap<string, MetricFamily>): number => sampleValue(f, 'rtc_media_key_frame_requests_total', { direction: 'received' });

    // eight datagrams of 30 feedbacks, each claiming 65,535 packets; an RTP header of 17 extension elements
    const transport = hostile.pc.dtlsTransports[0]!;
    for (let i = 0; i < 8; i++) await transport.sendRtcp([raw(hostileDatagram(sentSsrc))]);
    const header = new RtpHeader({ ssrc: 99, payloadType: 111, sequenceNumber: 1, timestamp: 1 });
    for (let id = 1; id <= 17; id++) header.extensions.push({ id: 1 + (id % 14), payload: Buffer.from([id]) });
    await transport.sendRtp(Buffer.alloc(20), header);
    const benignBefore = benign.receivedCount(1);
    await waitFor(async () => {
      const f = await scrape();
      return refused(f, 'rtcp') >= refused(before, 'rtcp') + 8 && refused(f, 'rtp') >= refused(before, 'rtp') + 1;
    }, 'the hostile datagrams to be refused');
    // the node still serves: the other subscriber's audio, and another project's token request
    await waitFor(() => benign.receivedCount(1) >= benignBefore + 10, 'more audio at the other subscriber');
    await projectB.issue({ room_id: 'elsewhere', user_id: 'b-user', role: 'speaker', publish_streams: [1] });

    // forged receiver reports on what the node sends the attacker: 8,388,607 lost, then 100 % lost
    // (the PLI in the same datagram tells when the node has read them)
    const forged = Buffer.concat([receiverReport(sentSsrc!, 1, 255, 0x7fffff), receiverReport(sentSsrc!, 1, 255, 0), pli(sentSsrc!)]);
    await transport.sendRtcp([raw(forged)]);
    await waitFor(async () => keyFrameRequests(await scrape()) > keyFrameRequests(before), 'the forged reports to be read');
    // a browser's feedback after a burst of loss (0x7FFE lost, as far back as libwebrtc reports, then
    // 20 received), with a PLI: read, not refused
    const lostRuns = [8191, 8191, 8191, 8191, 2].map((run) => runChunk(0, run));
    const burst = Buffer.concat([twccFeedback(0x7ffe + 20, [...lostRuns, runChunk(1, 20)], Buffer.alloc(20, 4), sentSsrc), pli(sentSsrc!)]);
    const requestsThen = keyFrameRequests(await scrape());
    await transport.sendRtcp([raw(burst)]);
    await waitFor(async () => keyFrameRequests(await scrape()) > requestsThen, 'the burst-loss feedback to be read');
    const reportsThen = publisherReports.length;
    await waitFor(() => publisherReports.length >= reportsThen + 2, 'two receiver reports at the publisher after the forged ones');
    const after = await scrape();
    assert.ok(lostOut(after) - lostOut(before) <= sent, `${lostOut(after) - lostOut(before)} lost of ${sent} sent`);
    // the other subscriber lost nothing: what the publisher is told is the lower median of the two
    assert.deepEqual(publisherReports.slice(reportsThen).filter((fraction) => fraction > 0.2 * 256), []);
    assert.equal(refused(after, 'rtcp'), refused(before, 'rtcp') + 8, 'the forged reports and the burst-loss feedback were well formed');
  });
});
