import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { currentVideoOf, summarizeReceive, summarizeSend, type InboundSample, type OutboundSample, type StatsSample } from './call-quality.ts';

/** Receiver samples a second apart from `t0`: frames decoded in each second, width, and audio concealed per second. */
function receiver(perSecond: readonly { frames: number; width?: number; concealed?: number }[], t0 = 10_000): StatsSample[] {
  let frames = 0;
  let concealed = 0;
  let played = 0;
  let bytes = 0;
  const out: StatsSample[] = [];
  const sample = (at: number, width: number | undefined): StatsSample => {
    const video: InboundSample = { kind: 'video', ssrc: 1, framesDecoded: frames, bytesReceived: bytes, ...(width ? { frameWidth: width } : {}) };
    const audio: InboundSample = { kind: 'audio', ssrc: 2, concealedSamples: concealed, totalSamplesReceived: played, bytesReceived: played / 10 };
    // a stale stream with fewer bytes is never the main one
    const stale: InboundSample = { kind: 'video', ssrc: 9, framesDecoded: 5, bytesReceived: 1 };
    return { at, inbound: [stale, video, audio], outbound: [], pair: undefined };
  };
  out.push(sample(t0, perSecond[0]?.width));
  perSecond.forEach((s, i) => {
    frames += s.frames;
    bytes += s.frames * 1000;
    played += 48_000;
    concealed += s.concealed ?? 0;
    out.push(sample(t0 + (i + 1) * 1000, s.width));
  });
  return out;
}

describe('summarizeReceive', () => {
  it('takes fps, stall seconds and episodes, concealment, rate and the usual width over the window', () => {
    const samples = receiver([
      { frames: 30, width: 640 }, { frames: 2, width: 640, concealed: 4800 }, { frames: 0, width: 640 }, { frames: 28, width: 320 },
      { frames: 1, width: 320 }, { frames: 30, width: 320 }, { frames: 30, width: 320 }, { frames: 30, width: 320 },
    ]);
    const q = summarizeReceive(samples, { from: 10_000, to: 18_000 });
    assert.equal(q.seconds, 8);
    assert.equal(q.meanFps, 151 / 8);
    assert.equal(q.stallSeconds, 3);
    assert.equal(q.stallEpisodes, 2);
    assert.equal(q.audioConcealedPercent, (100 * 4800) / (8 * 48_000));
    assert.equal(q.videoKbps, (151_000 * 8) / 8 / 1000);
    assert.equal(q.frameWidth, 320);
  });

  it('takes the frame size from the seconds with frames decoded: a stalled stream keeps its last size', () => {
    const samples = receiver([{ frames: 30, width: 320 }, { frames: 0, width: 640 }, { frames: 0, width: 640 }, { frames: 0, width: 640 }]);
    assert.equal(summarizeReceive(samples, { from: 10_000, to: 14_000 }).frameWidth, 320);
    assert.equal(summarizeReceive(samples, { from: 11_000, to: 14_000 }).frameWidth, undefined);
  });

  it('counts only the intervals that end inside the window, the sample before it as their start', () => {
    const samples = receiver([{ frames: 0 }, { frames: 30 }, { frames: 30 }, { frames: 0 }]);
    const q = summarizeReceive(samples, { from: 11_000, to: 13_000 });
    assert.equal(q.seconds, 2);
    assert.equal(q.meanFps, 30);
    assert.equal(q.stallSeconds, 0);
  });

  it('gives NaN concealment when no audio was played out, and zeros for no samples', () => {
    const q = summarizeReceive([], { from: 0, to: 1 });
    assert.equal(q.seconds, 0);
    assert.equal(q.meanFps, 0);
    assert.ok(Number.isNaN(q.audioConcealedPercent));
    assert.equal(q.frameWidth, undefined);
  });
});

describe('summarizeSend', () => {
  it('takes the sent rate, encoded fps, mean target and estimate, and the usual limitation', () => {
    const out = (at: number, n: number, reason: string): StatsSample => {
      const video: OutboundSample = { kind: 'video', ssrc: 3, bytesSent: n * 50_000, framesEncoded: n * 25, targetBitrate: 400_000, qualityLimitationReason: reason, frameWidth: 480 };
      return { at, inbound: [], outbound: [video], pair: { availableOutgoingBitrate: 500_000 } };
    };
    const q = summarizeSend([out(0, 0, 'none'), out(1000, 1, 'bandwidth'), out(2000, 2, 'bandwidth'), out(3000, 3, 'none')], { from: 0, to: 3000 });
    assert.equal(q.videoKbps, 400);
    assert.equal(q.fps, 25);
    assert.equal(q.targetKbps, 400);
    assert.equal(q.availableOutgoingKbps, 500);
    assert.equal(q.qualityLimitation, 'bandwidth');
    assert.equal(q.frameWidth, 480);
  });
});

describe('currentVideoOf', () => {
  it('reads the last interval', () => {
    const v = currentVideoOf(receiver([{ frames: 30, width: 640 }, { frames: 12, width: 640 }]));
    assert.deepEqual(v, { framesDecoded: 42, fps: 12, frameWidth: 640, frameHeight: undefined, at: 12_000 });
  });
});
