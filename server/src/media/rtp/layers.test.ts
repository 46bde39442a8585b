import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamLayers } from './layers.ts';
import { parseVp8 } from './vp8.ts';

/** The parsed descriptor of a packet starting a key frame that claims `width` x `height`. */
function keyFrame(width: number, height: number): ReturnType<typeof parseVp8> {
  return parseVp8(Buffer.from([0x10, 0x00, 0x00, 0x00, 0x9d, 0x01, 0x2a, width & 0xff, width >> 8, height & 0xff, height >> 8, 0]));
}

/** `bps` of payload on layer 0 for `ms`, a packet every 10 ms, the first a key frame of `width` x `height`. */
function send(layers: StreamLayers, width: number, height: number, bps: number, ms: number): void {
  for (let t = 0; t <= ms; t += 10) layers.onPacket(0, 1, bps / 800, true, t === 0 ? keyFrame(width, height) : undefined, t);
}

describe('the picture size a layer verifies for billing', () => {
  it('is its key frames\' size once its rate supported that size for 5 s', () => {
    const hd = new StreamLayers(1);
    send(hd, 1920, 1080, 2_500_000, 6_000);
    assert.equal(hd.verifiedPixels(0), 1920 * 1080);
  });

  it('is no more than its rate supports, and nothing for a few packets', () => {
    const thin = new StreamLayers(1);
    send(thin, 1920, 1080, 500_000, 6_000);
    assert.equal(Math.round(thin.verifiedPixels(0)), 500_000);
    const forged = new StreamLayers(1);
    send(forged, 16383, 16383, 200_000, 40);
    assert.equal(forged.verifiedPixels(0), 0);
    assert.equal(forged.sizes()[0]!.width, 16383, 'the claimed size is still what the layer reports');
  });
});
