import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GenericNack, RtcpPacketConverter, RtcpTransportLayerFeedback, RtpHeader, RtpPacket, TransportWideCC } from 'werift';
import { hostileDatagram, nack, rtpWithExtensions, runChunk, twccFeedback } from '../../../../test/helpers/hostile-rtcp.ts';
import { refusedInput } from '../../metrics/media-stats.ts';
import { installInputGuard, RefusedRtpError } from './input-guard.ts';

installInputGuard();

/** Counts the calls of werift's transport-cc parser while `run` runs. */
function twccParses(run: () => void): number {
  const parse = TransportWideCC.deSerialize;
  let calls = 0;
  TransportWideCC.deSerialize = (data, header) => {
    calls += 1;
    return parse(data, header);
  };
  try {
    run();
  } finally {
    TransportWideCC.deSerialize = parse;
  }
  return calls;
}

describe('the checks in front of werift\'s parsers', () => {
  it('refuses the hostile transport-cc datagram at werift\'s RTCP entry point before werift parses any of it, and counts it', () => {
    const before = refusedInput.rtcp;
    let packets: unknown[] = [];
    assert.equal(twccParses(() => {
      packets = RtcpPacketConverter.deSerialize(hostileDatagram());
    }), 0);
    assert.deepEqual(packets, []);
    assert.equal(refusedInput.rtcp, before + 1);
  });

  it('parses a valid datagram at the same entry point, each sub-packet from its own bytes', () => {
    const before = refusedInput.rtcp;
    const packets = RtcpPacketConverter.deSerialize(Buffer.concat([nack(9, [5], 0b11), nack(9, [40])]));
    const lost = packets.map((p) => (p.type === RtcpTransportLayerFeedback.type && p.feedback instanceof GenericNack ? p.feedback.lost : []));
    assert.deepEqual(lost, [[5, 6, 7], [40]]);
    assert.equal(refusedInput.rtcp, before);
  });

  it('reads transport-cc feedback at the same entry point without werift\'s parser, 65,535 lost packets 30 times over included', () => {
    const before = refusedInput.rtcp;
    const lost = twccFeedback(65_535, [...Array.from({ length: 8 }, () => runChunk(0, 8191)), runChunk(0, 7)]);
    let packets: unknown[] = [];
    assert.equal(twccParses(() => {
      packets = RtcpPacketConverter.deSerialize(Buffer.concat(Array.from({ length: 30 }, () => lost)));
    }), 0);
    assert.equal(packets.length, 30);
    assert.equal(refusedInput.rtcp, before);
  });

  it('refuses an RTP header at werift\'s entry point (the one SRTP decryption and RTP parsing call) and counts it', () => {
    const before = refusedInput.rtp;
    assert.throws(() => RtpHeader.deSerialize(rtpWithExtensions(600)), RefusedRtpError);
    assert.throws(() => RtpPacket.deSerialize(rtpWithExtensions(1, 0xffff)), RefusedRtpError);
    assert.equal(refusedInput.rtp, before + 2);
    assert.deepEqual(RtpPacket.deSerialize(rtpWithExtensions(3)).header.extensions.map((e) => e.id), [1, 2, 3]);
    assert.equal(refusedInput.rtp, before + 2);
  });
});
