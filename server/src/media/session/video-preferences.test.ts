import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RtcVideoPreference } from '@rtc/protocol';
import { MAX_VIDEO_PREFERENCES, VideoPreferences } from './video-preferences.ts';

const bound = (stream_id: number, max_width: number | null = 320): RtcVideoPreference => ({
  type: 'rtc_video', stream_id, max_width, max_height: null, max_layer: null,
});

describe('rtc_video bounds of a session', () => {
  it('keeps a bound per stream, the latest of each, for streams not there yet too', () => {
    const prefs = new VideoPreferences();
    prefs.set(bound(7, 640), () => false);
    prefs.set(bound(7, 0), () => false);
    prefs.set(bound(2), () => true);
    assert.equal(prefs.get(7)?.max_width, 0);
    assert.equal(prefs.get(2)?.max_width, 320);
    assert.equal(prefs.size, 2);
  });

  it('stays bounded however many stream ids a client names, dropping those of streams not in the room first', () => {
    const live = new Set([1, 2, 3]);
    const prefs = new VideoPreferences();
    for (const id of live) prefs.set(bound(id), (s) => live.has(s));
    for (let id = 100; id < 100_000; id++) prefs.set(bound(id), (s) => live.has(s));
    assert.equal(prefs.size, MAX_VIDEO_PREFERENCES);
    // the room's streams kept their bounds, and the newest bound is there
    for (const id of live) assert.ok(prefs.get(id), `stream ${id}`);
    assert.ok(prefs.get(99_999));
    assert.equal(prefs.get(100), undefined);
  });

  it('drops the bound set longest ago when every stream named is in the room', () => {
    const prefs = new VideoPreferences();
    for (let id = 1; id <= MAX_VIDEO_PREFERENCES + 1; id++) prefs.set(bound(id), () => true);
    assert.equal(prefs.size, MAX_VIDEO_PREFERENCES);
    assert.equal(prefs.get(1), undefined);
    assert.ok(prefs.get(2));
  });
});
