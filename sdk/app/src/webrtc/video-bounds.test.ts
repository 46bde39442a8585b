import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RtcVideoPreference } from '@rtc/protocol';
import { ManualClock } from '../../../../test/helpers/manual-clock.ts';
import { BOUNDS_BURST, BOUNDS_PER_SECOND, NO_BOUNDS, VideoPreferences, resolveBounds, tighterBounds, type VideoBounds } from './video-bounds.ts';

const wire = (streamId: number, w: number | null, h: number | null, layer: number | null): RtcVideoPreference => (
  { type: 'rtc_video', stream_id: streamId, max_width: w, max_height: h, max_layer: layer });

function preferences(): { prefs: VideoPreferences; clock: ManualClock; sent: RtcVideoPreference[]; connect(): void } {
  const clock = new ManualClock();
  const prefs = new VideoPreferences(clock);
  const sent: RtcVideoPreference[] = [];
  return { prefs, clock, sent, connect: () => prefs.connected((m) => (sent.push(m), true)) };
}

describe('video bounds', () => {
  it('resolves missing fields to no bound and refuses values out of range', () => {
    assert.deepEqual(resolveBounds(null), NO_BOUNDS);
    assert.deepEqual(resolveBounds({ maxWidth: 640 }), { maxWidth: 640, maxHeight: null, maxLayer: null });
    assert.deepEqual(resolveBounds({ maxWidth: 0, maxHeight: 0, maxLayer: 2 }), { maxWidth: 0, maxHeight: 0, maxLayer: 2 });
    const bad: VideoBounds[] = [{ maxWidth: -1 }, { maxHeight: 16_385 }, { maxLayer: 3 }, { maxWidth: 1.5 }, { maxLayer: Number.NaN }];
    for (const b of bad) assert.throws(() => resolveBounds(b), TypeError, JSON.stringify(b));
    assert.throws(() => resolveBounds('wide' as unknown as VideoBounds), TypeError);
  });

  it('combines two bounds field by field, the tighter winning', () => {
    assert.deepEqual(tighterBounds({ maxWidth: 640, maxHeight: null, maxLayer: 2 }, { maxWidth: 1280, maxHeight: 360, maxLayer: null }),
      { maxWidth: 640, maxHeight: 360, maxLayer: 2 });
    assert.deepEqual(tighterBounds(NO_BOUNDS, NO_BOUNDS), NO_BOUNDS);
  });
});

describe('VideoPreferences', () => {
  it('sends each change once, only while connected, and everything again on a new connection', () => {
    const { prefs, sent, connect } = preferences();
    prefs.setExplicit(2, resolveBounds({ maxLayer: 1 }));
    assert.deepEqual(sent, [], 'nothing before a connection');
    connect();
    assert.deepEqual(sent, [wire(2, null, null, 1)]);
    prefs.setExplicit(2, resolveBounds({ maxLayer: 1 }));
    assert.equal(sent.length, 1, 'the same bounds again are not sent');
    prefs.setExplicit(3, resolveBounds({ maxWidth: 0 }));
    prefs.setExplicit(2, NO_BOUNDS);
    assert.deepEqual(sent.slice(1), [wire(3, 0, null, null), wire(2, null, null, null)]);
    prefs.disconnected();
    prefs.setExplicit(3, resolveBounds({ maxWidth: 320, maxHeight: 180 }));
    assert.equal(sent.length, 3);
    sent.length = 0;
    connect();
    // stream 2 has no bound left: a new connection knows none, so only stream 3 is told
    assert.deepEqual(sent, [wire(3, 320, 180, null)]);
  });

  it('asks for the tighter of the application\'s and adaptive video\'s bounds', () => {
    const { prefs, sent, connect } = preferences();
    connect();
    prefs.setExplicit(5, resolveBounds({ maxLayer: 1, maxWidth: 1920 }));
    prefs.setAdaptive(5, { maxWidth: 640, maxHeight: 360, maxLayer: null });
    prefs.setAdaptive(5, { maxWidth: 0, maxHeight: 0, maxLayer: null });
    prefs.setAdaptive(5, undefined);
    assert.deepEqual(sent, [wire(5, 1920, null, 1), wire(5, 640, 360, 1), wire(5, 0, 0, 1), wire(5, 1920, null, 1)]);
    assert.deepEqual(prefs.explicitOf(5), { maxWidth: 1920, maxHeight: null, maxLayer: 1 });
    assert.equal(prefs.explicitOf(6), undefined);
  });

  it('keeps within its share of the control message budget, sending the latest bounds when it refills', () => {
    const { prefs, clock, sent, connect } = preferences();
    for (let id = 1; id <= BOUNDS_BURST + 5; id++) prefs.setExplicit(id, resolveBounds({ maxWidth: 100 }));
    connect();
    assert.equal(sent.length, BOUNDS_BURST, 'a burst at most');
    prefs.setExplicit(BOUNDS_BURST + 5, resolveBounds({ maxWidth: 200 }));
    assert.equal(clock.pending, 1);
    clock.advance(1000 / BOUNDS_PER_SECOND);
    assert.equal(sent.length, BOUNDS_BURST + 1);
    clock.advance(1000);
    assert.equal(sent.length, BOUNDS_BURST + 5);
    // the stream changed while waiting: its latest bounds went out, once
    assert.deepEqual(sent.filter((m) => m.stream_id === BOUNDS_BURST + 5), [wire(BOUNDS_BURST + 5, 200, null, null)]);
    assert.equal(clock.pending, 0);
  });

  it('keeps what could not be sent for the next connection', () => {
    const { prefs } = preferences();
    const sent: RtcVideoPreference[] = [];
    let up = false;
    prefs.connected((m) => (up ? (sent.push(m), true) : false));
    prefs.setExplicit(7, resolveBounds({ maxHeight: 720 }));
    up = true;
    prefs.connected((m) => (sent.push(m), true));
    assert.deepEqual(sent, [wire(7, null, 720, null)]);
  });
});
