import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PRICE_LIST } from '../billing/catalog/price-list.ts';
import { FLOW, MAX_USAGE_FLOWS, SessionUsage, flowKey, usageKindOf } from './usage-kind.ts';

/** Feeds `flow` with `bps` for `ms`, a packet every 10 ms from `fromMs`; returns the session's kind. */
function stream(usage: SessionUsage, flow: number, bps: number, ms: number, fromMs = 0, claimedPixels?: number, video = claimedPixels !== undefined): string {
  for (let t = fromMs; t <= fromMs + ms; t += 10) usage.noteMedia(flow, video, bps / 800, t, claimedPixels);
  return usageKindOf(PRICE_LIST, usage.videoPixels);
}

/** Feeds every one of `flows` with `bps` at once for `ms`, a packet each every 10 ms; returns the session's kind. */
function streams(usage: SessionUsage, flows: readonly number[], bps: number, ms: number): string {
  for (let t = 0; t <= ms; t += 10) for (const flow of flows) usage.noteMedia(flow, false, bps / 800, t);
  return usageKindOf(PRICE_LIST, usage.videoPixels);
}

const ids = (n: number, from = 1): number[] => Array.from({ length: n }, (_, i) => from + i);

describe('usage kind of a session', () => {
  it('is audio without video, else the video kind whose max_pixels holds the largest verified picture', () => {
    assert.equal(usageKindOf(PRICE_LIST, 0), 'audio');
    const kind = (width: number, height: number): string => {
      const usage = new SessionUsage();
      usage.noteVerified(320 * 240);
      usage.noteVerified(width * height);
      usage.noteVideo();
      return usageKindOf(PRICE_LIST, usage.videoPixels);
    };
    assert.equal(kind(640, 480), 'video_sd');
    assert.equal(kind(641, 480), 'video_hd');
    assert.equal(kind(1280, 720), 'video_hd');
    assert.equal(kind(1920, 1080), 'video_full_hd');
    assert.equal(kind(2560, 1440), 'video_2k_plus');
  });

  it('counts video of unknown size as the smallest video kind', () => {
    const usage = new SessionUsage();
    assert.equal(usageKindOf(PRICE_LIST, usage.videoPixels), 'audio');
    usage.noteVideo();
    assert.equal(usageKindOf(PRICE_LIST, usage.videoPixels), 'video_sd');
  });

  it('counts a picture size once a rate it needs was carried for 5 s, and only as far as that rate goes', () => {
    // 1280x720 at 1.2 Mbit/s: 4 s are not enough, 5 s are
    const hd = new SessionUsage();
    assert.equal(stream(hd, 1, 1_200_000, 4_000, 0, 1280 * 720), 'video_sd');
    assert.equal(stream(hd, 1, 1_200_000, 1_500, 4_010, 1280 * 720), 'video_hd');
    // a claimed 16383x16383 at the same rate counts as the pixels 1.2 Mbit/s verify (1.2 Mpx), not as claimed
    assert.equal(stream(new SessionUsage(), 1, 1_200_000, 6_000, 0, 16383 * 16383), 'video_full_hd');
    assert.equal(stream(new SessionUsage(), 1, 2_500_000, 6_000, 0, 16383 * 16383), 'video_2k_plus');
    // a second of gap starts the count again: bursts of 3 s never add up
    const bursts = new SessionUsage();
    for (let i = 0; i < 5; i++) stream(bursts, 1, 3_000_000, 3_000, i * 5_000, 2560 * 1440);
    assert.equal(usageKindOf(PRICE_LIST, bursts.videoPixels), 'video_sd');
    // 4 s of a high rate within a low one: the sustained minimum counts
    const dip = new SessionUsage();
    stream(dip, 1, 200_000, 3_000, 0, 1920 * 1080);
    stream(dip, 1, 3_000_000, 3_000, 3_010, 1920 * 1080);
    assert.equal(stream(dip, 1, 200_000, 3_000, 6_020, 1920 * 1080), 'video_sd');
  });

  it('bills media of no readable size (sealed frames, audio) by its rate: video rates are video whatever the client calls them', () => {
    assert.equal(stream(new SessionUsage(), 2, 128_000, 10_000), 'audio');
    assert.equal(stream(new SessionUsage(), 2, 510_000, 10_000), 'audio');
    assert.equal(stream(new SessionUsage(), 3, 1_000_000, 10_000), 'video_sd');
    assert.equal(stream(new SessionUsage(), 3, 2_000_000, 10_000), 'video_hd');
    assert.equal(stream(new SessionUsage(), 3, 67_000_000, 10_000), 'video_2k_plus');
    // sealed video frames are video from the first, and more by their rate
    const frames = new SessionUsage();
    assert.equal(stream(frames, 4, 100_000, 100, 0, undefined, true), 'video_sd');
    assert.equal(stream(frames, 4, 4_000_000, 6_000, 200, undefined, true), 'video_full_hd');
  });

  it('sums media of no readable size over the streams of a session each way: splitting it keeps no audio rate', () => {
    // 4 Mbit/s as 8 streams of 500 kbit/s labelled audio, sent or received over WebSocket or RTP
    assert.equal(streams(new SessionUsage(), ids(8).map((id) => flowKey(FLOW.websocketIn, id)), 500_000, 10_000), 'video_full_hd');
    assert.equal(streams(new SessionUsage(), ids(8).map((id) => flowKey(FLOW.websocketOut, id)), 500_000, 10_000), 'video_full_hd');
    assert.equal(streams(new SessionUsage(), ids(8).map((id) => flowKey(FLOW.rtpIn, id)), 500_000, 10_000), 'video_full_hd');
    // a large room received over WebSocket: 100 streams of 20 kbit/s are 2 Mbit/s
    assert.equal(streams(new SessionUsage(), ids(100).map((id) => flowKey(FLOW.websocketOut, id)), 20_000, 10_000), 'video_hd');
    // the two ways are not added up: 400 kbit/s each way stays audio
    const both = [...ids(4).map((id) => flowKey(FLOW.websocketIn, id)), ...ids(4).map((id) => flowKey(FLOW.rtpOut, id))];
    assert.equal(streams(new SessionUsage(), both, 100_000, 10_000), 'audio');
  });

  it('keeps following a flow while it is active, however many others come and go', () => {
    const usage = new SessionUsage();
    const hd = flowKey(FLOW.rtpOut, 1);
    // 1280x720 at 1.2 Mbit/s for 6 s, while a new flow starts every 10 ms: 600 flows, the 64 most recent followed
    for (let t = 0, other = 2; t <= 6_000; t += 10, other++) {
      usage.noteMedia(hd, true, 1_200_000 / 800, t, 1280 * 720);
      usage.noteMedia(flowKey(FLOW.rtpOut, other), true, 100, t, 320 * 240);
    }
    assert.equal(usageKindOf(PRICE_LIST, usage.videoPixels), 'video_hd');
  });

  it('follows a bounded number of flows, and what an evicted flow verified stays counted', () => {
    const usage = new SessionUsage();
    assert.equal(stream(usage, 5, 67_000_000, 6_000), 'video_2k_plus');
    for (let i = 0; i < MAX_USAGE_FLOWS * 4; i++) usage.noteMedia(flowKey(FLOW.rtpOut, 100 + i), true, 100, 7_000, 320 * 240);
    assert.equal(usageKindOf(PRICE_LIST, usage.videoPixels), 'video_2k_plus');
    assert.ok((usage as unknown as { flows: Map<number, unknown> }).flows.size <= MAX_USAGE_FLOWS);
  });
});
