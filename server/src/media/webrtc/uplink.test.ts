/**
 * What a publisher's uplink returns to it (docs/protocol/media.md, "Bandwidth"): transport-wide
 * feedback every 50 ms, as a browser receiving the stream sends its own, and NACKs on a timer of
 * their own: the first the reorder delay after a gap opens, each retry one round trip after the ask
 * before, up to ten, then a key frame request. The clock and the timers are the test's; the
 * transport is a stand-in that hands the uplink RTP and keeps the RTCP it sends, in the clear.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import {
  GenericNack, PictureLossIndication, RtcpPacketConverter, RtcpPayloadSpecificFeedback, RtcpTransportLayerFeedback, RtpHeader,
  RtpPacket, TransportWideCC, type RTCDtlsTransport, type RtcpPacket,
} from 'werift';
import { vp8Payload } from '../../main/client/media/loopback-peer.ts';
import { MediaStats } from '../../metrics/media-stats.ts';
import { Uplink, type IngressStream } from './uplink.ts';

const SSRC = 0x1111;
const TWCC_ID = 3;
const RTT_MS = 40;
/** The publisher's packets: one every 5 ms. */
const PACKET_MS = 5;

interface Received { readonly atMs: number; readonly packet: RtcpPacket }

function publisher() {
  let now = 1_000;
  const received: Received[] = [];
  const rtpHandlers: ((rtp: RtpPacket) => void)[] = [];
  const event = <T>(handlers: ((value: T) => void)[]) => ({
    subscribe: (handler: (value: T) => void) => {
      handlers.push(handler);
      return { unSubscribe: () => handlers.splice(handlers.indexOf(handler), 1) };
    },
  });
  const transport = {
    state: 'connected',
    srtcp: { encrypt: (data: Buffer) => data },
    onRtp: event(rtpHandlers),
    onRtcp: event<RtcpPacket>([]),
    iceTransport: {
      connection: {
        nominated: {
          remoteAddr: ['127.0.0.1', 9],
          protocol: {
            sendData: (data: Buffer): Promise<void> => {
              for (const packet of RtcpPacketConverter.deSerialize(data)) received.push({ atMs: now, packet });
              return Promise.resolve();
            },
          },
        },
      },
    },
  } as unknown as RTCDtlsTransport;
  const stream: IngressStream = { forwardRtp: () => undefined, downstreamLoss: () => 0 };
  const uplink = new Uplink(new Map([[1, stream]]), () => RTT_MS, () => now, new MediaStats());
  uplink.attach(transport);
  uplink.configure({ mid: undefined, rid: undefined, twcc: TWCC_ID }, new Map([
    ['0', { streamId: 1, kind: 'video' as const, rids: [], ssrcs: [SSRC] }],
  ]));
  let seq = 0;
  let twccSeq = 0;
  const send = (packetSeq: number): void => {
    twccSeq += 1;
    const extension = Buffer.alloc(2);
    extension.writeUInt16BE(twccSeq);
    const header = new RtpHeader({
      ssrc: SSRC, sequenceNumber: packetSeq, timestamp: packetSeq * 3000, payloadType: 96,
      extension: true, extensions: [{ id: TWCC_ID, payload: extension }],
    });
    for (const handler of rtpHandlers) handler(new RtpPacket(header, vp8Payload(1000, packetSeq === 1)));
  };
  /** Sends the publisher's packets for `ms`, leaving out the sequence numbers in `lost`. */
  const run = (ms: number, lost: ReadonlySet<number> = new Set()): void => {
    for (const end = now + ms; now < end;) {
      if (now % PACKET_MS === 0) {
        seq += 1;
        if (!lost.has(seq)) send(seq);
      }
      now += 1;
      mock.timers.tick(1);
    }
  };
  /** A retransmission of `packetSeq`, now. */
  const resend = (packetSeq: number): void => send(packetSeq);
  return { uplink, received, run, resend, now: () => now, seq: () => seq };
}

const nacksOf = (received: readonly Received[], seq: number): number[] => received
  .filter(({ packet }) => packet instanceof RtcpTransportLayerFeedback && packet.feedback instanceof GenericNack
    && packet.feedback.lost.includes(seq))
  .map(({ atMs }) => atMs);

const plis = (received: readonly Received[]): number[] => received
  .filter(({ packet }) => packet instanceof RtcpPayloadSpecificFeedback && packet.feedback instanceof PictureLossIndication)
  .map(({ atMs }) => atMs);

describe('a publisher\'s uplink', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval', 'setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('returns transport-wide feedback every 50 ms, covering every packet it received', () => {
    const call = publisher();
    call.run(1_000);
    const feedback = call.received.filter(({ packet }) => packet instanceof RtcpTransportLayerFeedback && packet.feedback instanceof TransportWideCC);
    assert.ok(feedback.length >= 19 && feedback.length <= 21, `${feedback.length} feedback messages in 1 s`);
    for (let i = 1; i < feedback.length; i += 1) assert.equal(feedback[i]!.atMs - feedback[i - 1]!.atMs, 50);
    const covered = feedback.reduce((sum, { packet }) => sum + ((packet as RtcpTransportLayerFeedback).feedback as TransportWideCC).packetStatusCount, 0);
    // what arrived after the last feedback waits for the next one
    assert.ok(covered >= call.seq() - 50 / PACKET_MS && covered <= call.seq(), `${covered} of ${call.seq()} packets covered`);
    call.uplink.close();
  });

  it('asks for a lost packet the reorder delay after its gap opens, then once a round trip, ten times, then for a key frame', () => {
    const call = publisher();
    call.run(100);
    const lost = call.seq() + 2;
    const gapOpensMs = call.now() + 2 * PACKET_MS; // when the packet after the lost one arrives
    call.run(1_500, new Set([lost]));
    const asks = nacksOf(call.received, lost);
    assert.equal(asks.length, 10, `asks at ${asks.map((t) => t - gapOpensMs).join(', ')} ms after the gap`);
    assert.ok(asks[0]! - gapOpensMs >= 5 && asks[0]! - gapOpensMs <= 7, `first ask ${asks[0]! - gapOpensMs} ms after the gap`);
    for (let i = 1; i < asks.length; i += 1) {
      const spacing = asks[i]! - asks[i - 1]!;
      assert.ok(spacing >= RTT_MS && spacing <= RTT_MS + 2, `retry ${i} came ${spacing} ms after the ask before (round trip ${RTT_MS} ms)`);
    }
    const keyFrames = plis(call.received);
    assert.equal(keyFrames.length, 1);
    const givenUp = keyFrames[0]! - asks.at(-1)!;
    assert.ok(givenUp >= RTT_MS && givenUp <= RTT_MS + 2, `key frame asked ${givenUp} ms after the last NACK`);
    call.uplink.close();
  });

  it('asks for nothing while nothing is missing, and stops asking once the packet arrives', () => {
    const call = publisher();
    call.run(300);
    const isNack = ({ packet }: Received): boolean => packet instanceof RtcpTransportLayerFeedback && packet.feedback instanceof GenericNack;
    assert.equal(call.received.filter(isNack).length, 0);
    const lost = call.seq() + 1;
    call.run(60, new Set([lost]));
    assert.equal(nacksOf(call.received, lost).length, 2);
    call.resend(lost);
    call.run(1_000);
    assert.equal(nacksOf(call.received, lost).length, 2);
    assert.equal(call.received.filter(isNack).length, 2);
    assert.deepEqual(plis(call.received), []);
    call.uplink.close();
  });
});
