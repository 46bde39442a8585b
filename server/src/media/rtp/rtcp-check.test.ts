import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  GenericNack, RtcpPayloadSpecificFeedback, RtcpRrPacket, RtcpSrPacket, RtcpTransportLayerFeedback, TransportWideCC, type RtcpPacket,
} from 'werift';
import {
  hostileDatagram, hostileTwcc, nack, pli, receiverReport, remb, rtcpPacket, runChunk, sdes, twccFeedback,
} from '../../../../test/helpers/hostile-rtcp.ts';
import { parseCheckedRtcp } from '../webrtc/input-guard.ts';
import { DownlinkEstimator, feedbackResults } from './downlink-estimator.ts';
import { checkRtcp, MAX_RTCP_PACKETS, WORK_PER_BYTE } from './rtcp-check.ts';
import { CompactTwcc } from './twcc-compact.ts';
import { TwccRecorder } from './twcc-feedback.ts';

/**
 * Objects the node builds from parsed packets: werift's (report blocks, NACKed sequence numbers,
 * FIR entries, transport-cc chunks and deltas, and the results werift's own sender makes of the
 * run-length chunks), and ours (feedbackResults: one per packet received and per run of lost ones).
 */
function objectsBuilt(packets: readonly RtcpPacket[]): number {
  let n = packets.length;
  for (const p of packets) {
    if (p.type === RtcpRrPacket.type || p.type === RtcpSrPacket.type) n += p.reports.length;
    else if (p.type === RtcpTransportLayerFeedback.type) {
      const { feedback } = p;
      if (feedback instanceof GenericNack) n += feedback.lost.length;
      if (feedback instanceof CompactTwcc) {
        n += feedback.recvDeltas.length + feedback.packetChunks.length + feedback.packetResults.length + feedbackResults(feedback).length;
      }
    } else if (p.type === RtcpPayloadSpecificFeedback.type && p.feedback && 'fir' in p.feedback) n += p.feedback.fir.length;
  }
  return n;
}

const refusal = (data: Buffer): string | undefined => {
  const check = checkRtcp(data);
  return check.ok ? undefined : check.reason;
};

describe('checkRtcp', () => {
  it('refuses the 40-byte transport-cc feedback claiming 65,535 received packets, and the 1,200-byte datagram of 30 of them', () => {
    assert.equal(hostileTwcc().length, 40);
    assert.equal(refusal(hostileTwcc()), 'malformed');
    assert.equal(hostileDatagram().length, 1200);
    assert.equal(refusal(hostileDatagram()), 'malformed');
    assert.deepEqual(parseCheckedRtcp(hostileDatagram()), []);
  });

  it('accepts a feedback reporting 65,535 lost packets in 40 bytes, 30 to a datagram, as a few entries and no werift object per status', () => {
    const lost = twccFeedback(65_535, [...Array.from({ length: 8 }, () => runChunk(0, 8191)), runChunk(0, 7)]);
    assert.equal(lost.length, 40);
    const datagram = Buffer.concat(Array.from({ length: 30 }, () => lost));
    const check = checkRtcp(datagram);
    assert.ok(check.ok, JSON.stringify(check));
    assert.ok(check.work <= WORK_PER_BYTE * datagram.length);
    const packets = parseCheckedRtcp(datagram);
    assert.equal(packets.length, 30);
    for (const p of packets) {
      assert.ok(p.type === RtcpTransportLayerFeedback.type && p.feedback instanceof CompactTwcc);
      // one run of 65,535 lost: what the estimator reads, and nothing werift's sender would expand
      assert.deepEqual(feedbackResults(p.feedback), [{ seq: 0, receivedAtMs: undefined, lost: 65_535 }]);
      assert.equal(p.feedback.packetChunks.length + p.feedback.recvDeltas.length + p.feedback.packetResults.length, 0);
    }
    assert.ok(objectsBuilt(packets) <= 4 * datagram.length);
    // a run may not reach past the count, nor be empty
    assert.equal(refusal(twccFeedback(1, [runChunk(0, 8191)])), 'malformed');
    assert.equal(refusal(twccFeedback(3, [runChunk(0, 0), runChunk(0, 3)])), 'malformed');
  });

  it('accepts the feedback a browser sends after a burst of loss, with the report beside it, and the loss reaches the estimator', () => {
    const burst = (lost: readonly number[], received: number): Buffer => {
      const total = lost.reduce((a, b) => a + b, 0) + received;
      return twccFeedback(total, [...lost.map((run) => runChunk(0, run)), runChunk(1, received)], Buffer.alloc(received, 4));
    };
    // 800 lost then 20 received: 44 bytes
    const gap = burst([800], 20);
    assert.equal(gap.length, 44);
    assert.ok(checkRtcp(gap).ok);
    // 0x7FFE lost, as far back as libwebrtc reports, then 20 received
    const widest = burst([8191, 8191, 8191, 8191, 2], 20);
    for (const [feedback, lost] of [[gap, 800], [widest, 0x7ffe]] as const) {
      const datagram = Buffer.concat([receiverReport(7, 1, 200, lost), sdes('cname'), feedback]);
      const packets = parseCheckedRtcp(datagram);
      assert.deepEqual(packets.map((p) => p.type), [RtcpRrPacket.type, RtcpTransportLayerFeedback.type]);
      const [report, twcc] = packets;
      assert.ok(report?.type === RtcpRrPacket.type);
      assert.equal(report.reports[0]?.packetsLost, lost);
      assert.ok(twcc?.type === RtcpTransportLayerFeedback.type && twcc.feedback instanceof CompactTwcc);
      const results = feedbackResults(twcc.feedback);
      assert.ok(results.length <= 30, `${results.length} results`);
      // the same feedback without its lost run: only the loss tells the two apart
      const [withLoss, without] = [results, results.filter((r) => r.receivedAtMs !== undefined)].map((fed) => {
        const estimator = new DownlinkEstimator({ initialBps: 1_000_000, minBps: 50_000, maxBps: 5_000_000 });
        for (let seq = 0; seq < lost + 20; seq++) estimator.onSent(seq, 1000, 10 + seq / 100);
        estimator.onFeedback(fed, 1000 + lost / 100);
        return estimator.bps;
      });
      assert.ok(withLoss! < 0.6 * without!, `${withLoss} with the loss, ${without} without`);
    }
  });

  it('accepts the transport-cc feedback the node itself builds, gaps included, and parses it as werift would', () => {
    const recorder = new TwccRecorder(5);
    for (let seq = 0; seq < 400; seq++) if (seq % 7 !== 3 && (seq < 100 || seq > 180)) recorder.record(seq, 1_000_000 + seq * 900);
    const built = recorder.build(9).map((p) => p.serialize());
    assert.ok(built.length >= 1);
    for (const bytes of built) {
      const check = checkRtcp(bytes);
      assert.ok(check.ok, JSON.stringify(check));
      const [parsed] = parseCheckedRtcp(bytes);
      assert.ok(parsed?.type === RtcpTransportLayerFeedback.type && parsed.feedback instanceof TransportWideCC);
      assert.equal(parsed.feedback.mediaSourceSsrc, 9);
    }
  });

  it('refuses report blocks, NACK entries, REMB SSRCs, FIR entries or SDES items that their packet does not hold', () => {
    assert.equal(refusal(receiverReport(5, 1, 0, 0, 31)), 'malformed');
    assert.equal(refusal(remb(255, 1)), 'malformed');
    assert.equal(refusal(rtcpPacket(205, 1, Buffer.alloc(4))), 'malformed');
    assert.equal(refusal(rtcpPacket(206, 4, Buffer.alloc(12))), 'malformed');
    assert.equal(refusal(rtcpPacket(202, 3, Buffer.from([0, 0, 0, 7, 1, 200, 0, 0]))), 'malformed');
    assert.equal(refusal(rtcpPacket(200, 2, Buffer.alloc(24 + 24))), 'malformed');
  });

  it('refuses a length past the datagram, a version other than 2, padding larger than its packet, and too many sub-packets', () => {
    const long = pli(3);
    long.writeUInt16BE(40, 2);
    assert.equal(refusal(long), 'truncated');
    assert.equal(refusal(pli(3).subarray(0, 10)), 'truncated');
    const v1 = pli(3);
    v1[0] = 0x41;
    assert.equal(refusal(v1), 'version');
    const padded = Buffer.from(pli(3));
    padded[0]! |= 0x20;
    padded[padded.length - 1] = 60;
    assert.equal(refusal(padded), 'padding');
    const many = Buffer.concat(Array.from({ length: MAX_RTCP_PACKETS + 1 }, () => pli(3)));
    assert.equal(refusal(many), 'too_many_packets');
  });

  it('hands each sub-packet of a compound datagram its own bytes only (werift hands it the rest of the datagram)', () => {
    const compound = Buffer.concat([nack(44, [100]), receiverReport(44, 1, 12, 3), sdes('cname'), pli(44), remb(1, 1)]);
    const packets = parseCheckedRtcp(compound);
    assert.deepEqual(packets.map((p) => p.type), [205, 201, 206]);
    const [first, report] = packets;
    assert.ok(first?.type === RtcpTransportLayerFeedback.type && first.feedback instanceof GenericNack);
    assert.deepEqual(first.feedback.lost, [100]);
    assert.ok(report?.type === RtcpRrPacket.type);
    assert.deepEqual(report.reports.map((r) => [r.ssrc, r.fractionLost, r.packetsLost]), [[44, 12, 3]]);
  });

  it('bounds the objects parsing an accepted datagram builds by WORK_PER_BYTE per byte, whatever the sub-packets claim', () => {
    const word = fc.integer({ min: 0, max: 0xffff });
    const twcc = fc.record({ count: fc.integer({ min: 0, max: 0xffff }), chunks: fc.array(word, { maxLength: 40 }), deltas: fc.uint8Array({ maxLength: 120 }) })
      .map(({ count, chunks, deltas }) => twccFeedback(count, chunks, Buffer.from(deltas)));
    const raw = fc.record({ type: fc.constantFrom(200, 201, 202, 203, 204, 205, 206, 207), count: fc.integer({ min: 0, max: 31 }), body: fc.uint8Array({ maxLength: 200 }) })
      .map(({ type, count, body }) => rtcpPacket(type, count, Buffer.from(body)));
    const valid = fc.constantFrom(pli(3), sdes('x'), receiverReport(4, 2), remb(2, 2), twccFeedback(3, [runChunk(1, 3)], Buffer.alloc(3)));
    const nacks = fc.integer({ min: 0, max: 200 }).map((n) => nack(1, Array.from({ length: n }, (_, i) => i), 0xffff));
    // well formed, but reporting runs of lost packets: cheap in bytes, not in statuses
    const lostRuns = fc.array(fc.integer({ min: 1, max: 8191 }), { minLength: 1, maxLength: 8 })
      .map((runs) => twccFeedback(runs.reduce((a, b) => a + b, 0), runs.map((run) => runChunk(0, run))));
    const part = fc.oneof(twcc, raw, valid, valid, nacks, lostRuns, fc.constant(hostileTwcc()));
    let accepted = 0;
    fc.assert(fc.property(fc.array(part, { minLength: 1, maxLength: 6 }), (parts) => {
      const data = Buffer.concat(parts);
      const check = checkRtcp(data);
      if (!check.ok) return;
      accepted += 1;
      assert.ok(check.work <= WORK_PER_BYTE * data.length);
      assert.ok(objectsBuilt(parseCheckedRtcp(data)) <= 2 * WORK_PER_BYTE * data.length);
    }), { numRuns: 2000 });
    assert.ok(accepted > 300, `${accepted} datagrams accepted`);
  });
});
