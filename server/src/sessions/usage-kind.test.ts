import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PRICE_LIST } from '../billing/catalog/price-list.ts';
import { SessionUsage, usageKindOf } from './usage-kind.ts';

describe('usage kind of a session', () => {
  it('is audio without video, else the video kind whose max_pixels holds the largest picture', () => {
    assert.equal(usageKindOf(PRICE_LIST, 0), 'audio');
    const kind = (width: number, height: number): string => {
      const usage = new SessionUsage();
      usage.noteVideo(320, 240);
      usage.noteVideo(width, height);
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
});
