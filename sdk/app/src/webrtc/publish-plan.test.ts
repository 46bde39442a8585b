import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MediaStreamTrackLike } from './dom.ts';
import { DEFAULT_VIDEO_LAYERS, defaultVideoLayers, planSend, wireSource, type PublishTrackOptions, type VideoLayer } from './publish-plan.ts';

function track(kind: 'audio' | 'video', settings: Record<string, unknown> = {}): MediaStreamTrackLike {
  return {
    id: 't', kind, readyState: 'live', enabled: true, stop: () => undefined,
    addEventListener: () => undefined, removeEventListener: () => undefined, getSettings: () => settings,
  };
}

describe('planSend', () => {
  it('sends a 1280x720 camera as three layers, smallest first, with rids q, h, f', () => {
    const plan = planSend(track('video', { width: 1280, height: 720 }), {});
    assert.equal(plan.source, 'camera');
    assert.deepEqual(plan.encodings, [
      { rid: 'q', scaleResolutionDownBy: 4, maxBitrate: 150_000 },
      { rid: 'h', scaleResolutionDownBy: 2, maxBitrate: 600_000 },
      { rid: 'f', scaleResolutionDownBy: 1, maxBitrate: 1_700_000 },
    ]);
    assert.deepEqual(defaultVideoLayers(1280, 720), DEFAULT_VIDEO_LAYERS);
    assert.equal(plan.contentHint, undefined);
    assert.equal(plan.degradationPreference, undefined);
    assert.deepEqual(planSend(track('video'), { simulcast: true }).encodings, plan.encodings);
  });

  it('sends a smaller camera as the layers Chromium encodes at its size, each rate growing with its pixels, the smallest at most 150 kbit/s', () => {
    assert.deepEqual(planSend(track('video', { width: 640, height: 480 }), {}).encodings, [
      { rid: 'h', scaleResolutionDownBy: 2, maxBitrate: 150_000 },
      { rid: 'f', scaleResolutionDownBy: 1, maxBitrate: 740_000 },
    ]);
    assert.deepEqual(planSend(track('video', { width: 320, height: 240 }), { simulcast: true }).encodings, [
      { scaleResolutionDownBy: 1, maxBitrate: 260_000 },
    ]);
    assert.equal(defaultVideoLayers(960, 540).length, 3);
    assert.equal(defaultVideoLayers(480, 270).length, 2);
    assert.equal(defaultVideoLayers(1920, 1080).at(-1)!.maxBitrate, 3_000_000);
  });

  it('sends one layer with simulcast off', () => {
    assert.equal(planSend(track('video'), { simulcast: false }).encodings, undefined);
  });

  it('takes chosen layers, naming the largest f and a single one without rid', () => {
    const two: VideoLayer[] = [{ scaleResolutionDownBy: 2, maxBitrate: 300_000, maxFramerate: 15 }, { scaleResolutionDownBy: 1, maxBitrate: 900_000 }];
    assert.deepEqual(planSend(track('video'), { simulcast: two }).encodings, [
      { rid: 'h', scaleResolutionDownBy: 2, maxBitrate: 300_000, maxFramerate: 15 },
      { rid: 'f', scaleResolutionDownBy: 1, maxBitrate: 900_000 },
    ]);
    assert.deepEqual(planSend(track('video'), { simulcast: [{ scaleResolutionDownBy: 1, maxBitrate: 800_000 }] }).encodings, [
      { scaleResolutionDownBy: 1, maxBitrate: 800_000 },
    ]);
  });

  it('sends a screen (found from displaySurface, or named) as one layer that keeps its resolution', () => {
    for (const [t, options] of [[track('video', { displaySurface: 'monitor' }), {}], [track('video'), { source: 'screen' }]] as const) {
      assert.deepEqual(planSend(t, options), {
        source: 'screen', encodings: undefined, contentHint: 'detail', degradationPreference: 'maintain-resolution',
      });
    }
    // the application may still ask a screen for layers, or call a capture a camera
    assert.equal(planSend(track('video', { displaySurface: 'window' }), { simulcast: true }).encodings?.length, 3);
    assert.equal(planSend(track('video', { displaySurface: 'window' }), { source: 'camera' }).source, 'camera');
  });

  it('leaves audio as it is, a screen share\'s sound named so for the server', () => {
    const screenAudio = planSend(track('audio'), { simulcast: true, source: 'screen' });
    assert.deepEqual(screenAudio, { source: 'screen', encodings: undefined, contentHint: undefined, degradationPreference: undefined });
    assert.equal(wireSource('audio', screenAudio), 'screen_share_audio');
    const mic = planSend(track('audio'), { simulcast: true });
    assert.deepEqual(mic, { source: 'microphone', encodings: undefined, contentHint: undefined, degradationPreference: undefined });
    assert.equal(wireSource('audio', mic), 'microphone');
    assert.equal(wireSource('video', planSend(track('video'), { source: 'screen' })), 'screen_share');
    assert.equal(wireSource('video', planSend(track('video'), {})), 'camera');
  });

  it('refuses options that are not valid with a TypeError', () => {
    const bad: [string, PublishTrackOptions][] = [
      ['an unknown source', { source: 'window' as 'screen' }],
      ['simulcast of another type', { simulcast: 3 as unknown as boolean }],
      ['no layer', { simulcast: [] }],
      ['four layers', { simulcast: [...DEFAULT_VIDEO_LAYERS, { scaleResolutionDownBy: 1, maxBitrate: 1 }] }],
      ['a layer larger than the captured size', { simulcast: [{ scaleResolutionDownBy: 0.5, maxBitrate: 100_000 }] }],
      ['a bitrate that is not an integer', { simulcast: [{ scaleResolutionDownBy: 1, maxBitrate: 1.5 }] }],
      ['a zero frame rate', { simulcast: [{ scaleResolutionDownBy: 1, maxBitrate: 100_000, maxFramerate: 0 }] }],
      ['layers from the largest', { simulcast: [{ scaleResolutionDownBy: 1, maxBitrate: 900_000 }, { scaleResolutionDownBy: 2, maxBitrate: 300_000 }] }],
    ];
    for (const [what, options] of bad) assert.throws(() => planSend(track('video'), options), TypeError, what);
  });
});
