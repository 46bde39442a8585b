/**
 * The loss a subscriber's receiver reports give for the room service API's `packet_loss_out`
 * (docs/reference/room-api.md, "Quality"): none from the first reports of a stream, which cover a
 * handful of packets; measured once enough packets went out.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RtcpReceiverInfo, RtcpRrPacket, type RTCRtpTransceiver } from 'werift';
import { MediaStats } from '../../metrics/media-stats.ts';
import { Downlink } from './downlink.ts';

const SSRC = 0x1234;

function downlink(): Downlink {
  const events = { paused: () => undefined, resumed: () => undefined, layer: () => undefined, attach: () => undefined, report: () => undefined };
  const d = new Downlink(events, { rtpIn: () => undefined, rtpOut: () => undefined }, () => 1_000, new MediaStats());
  // only the sender's SSRC matters to the receiver reports
  const transceiver = { sender: { ssrc: SSRC } } as unknown as RTCRtpTransceiver;
  d.setOutbound([{ streamId: 1, kind: 'video', transceiver }], { mid: undefined, twcc: undefined, playoutDelay: undefined });
  return d;
}

/** A receiver report on the stream: `lost` of the packets up to `highest` are missing (cumulative). */
const report = (highest: number, lost: number, fractionLost: number): RtcpRrPacket => new RtcpRrPacket({
  ssrc: 99, reports: [new RtcpReceiverInfo({ ssrc: SSRC, fractionLost, packetsLost: lost, highestSequence: highest, jitter: 0, lsr: 0, dlsr: 0 })],
});

describe('downlink loss for the quality figures', () => {
  it('reports no loss from a stream\'s first receiver reports, then the loss over enough packets', () => {
    const d = downlink();
    assert.equal(d.worstLoss, undefined, 'nothing reported yet');
    // the first reports: a key frame's burst, one of two packets missing (127/256: the 49.6 % once seen)
    d.onRtcp(report(5001, 1, 127));
    assert.equal(d.worstLoss, undefined);
    d.onRtcp(report(5011, 3, 51));
    assert.equal(d.worstLoss, undefined);
    d.onRtcp(report(5101, 4, 0));
    assert.equal(d.worstLoss, 0.03);
  });
});
