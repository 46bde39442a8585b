/**
 * The published stream owns its fan-out (docs/protocol/media.md, "WebRTC media"): it feeds every
 * subscriber's down track, asks its publisher for key frames per layer at most every 250 ms, tells the
 * publisher the loss its subscribers report, and keeps its simulcast layers. Fakes stand in for the
 * sessions and the down tracks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MediaKind, ServerControl } from '@rtc/protocol';
import type { ForwardedRtp, StreamLayers } from '../rtp/layers.ts';
import type { DownTrack, Member } from './member.ts';
import { LAYER_REST_AFTER_MS, Stream, type StreamRelay } from './stream.ts';

interface FakeMember extends Member {
  readonly keyFrameAsks: [number, number][];
  readonly control: ServerControl[];
  readonly rtpIn: number[];
  track: DownTrack | undefined;
}

function member(userId: string, track?: DownTrack): FakeMember {
  const keyFrameAsks: [number, number][] = [];
  const rtpIn: number[] = [];
  const control: ServerControl[] = [];
  const m: FakeMember = {
    participantId: `pa_${userId}`, userId, role: 'speaker', metadata: '', attributes: {}, published: new Map(),
    keyFrameAsks, rtpIn, track, control,
    account: { rtpIn: (_id, _kind, packet) => rtpIn.push(packet.seq), rtpOut: () => undefined },
    keyFrames: { requestKeyFrame: (streamId, layer) => keyFrameAsks.push([streamId, layer]) },
    canSubscribe: () => true,
    sendControl: (message) => control.push(message),
    pushMedia: () => undefined,
    downTrack: () => m.track,
  };
  return m;
}

interface FakeTrack extends DownTrack {
  readonly got: number[];
  target?: number;
  restarts: number;
  loss: number;
}

function track(kind: MediaKind = 'video', accepts = true): FakeTrack {
  const t: FakeTrack = {
    kind, stream: undefined, got: [], restarts: 0, loss: 0,
    forward(packet) {
      if (accepts) t.got.push(packet.seq);
      return accepts;
    },
    restart() {
      t.restarts += 1;
    },
    get reportedLoss() {
      return t.loss;
    },
  };
  return t;
}

const packet = (seq: number, layer = 0): ForwardedRtp => ({
  layer, ssrc: 10 + layer, seq, timestamp: seq * 3000, marker: true, payload: Buffer.alloc(100), vp8: undefined,
});

describe('the published stream', () => {
  it('feeds each packet to the down track of every subscriber, counted once for its publisher', () => {
    const publisher = member('pub');
    const stream = new Stream(1, 'video', publisher);
    const a = track();
    const b = track();
    const c = track('video', false);
    stream.subscribe(member('a', a));
    stream.subscribe(member('b', b));
    stream.subscribe(member('c', c));
    // a subscriber over WebSocket frames only: no down track
    stream.subscribe(member('ws'));
    assert.equal(stream.forwardRtp(packet(1), 0), 2, 'the two tracks that took it');
    assert.deepEqual([a.got, b.got, c.got], [[1], [1], []]);
    assert.deepEqual(publisher.rtpIn, [1]);
    assert.equal(a.stream, stream);
  });

  it('forwards nothing while muted, yet counts what its publisher sent', () => {
    const publisher = member('pub');
    const stream = new Stream(1, 'audio', publisher);
    const a = track('audio');
    stream.subscribe(member('a', a));
    stream.muted = true;
    assert.equal(stream.forwardRtp(packet(1), 0), 0);
    assert.deepEqual(a.got, []);
    assert.deepEqual(publisher.rtpIn, [1]);
  });

  it('feeds a down track only while its member subscribes, and only of its own kind', () => {
    const stream = new Stream(1, 'video', member('pub'));
    const late = member('late');
    const t = track();
    // negotiated before the subscription: attached when it starts
    stream.attach(late, t);
    assert.equal(t.stream, undefined);
    late.track = t;
    stream.subscribe(late);
    assert.equal(t.stream, stream);
    assert.equal(stream.unsubscribe(late), true);
    assert.equal(t.stream, undefined);
    stream.forwardRtp(packet(1), 0);
    assert.deepEqual(t.got, []);

    const audio = track('audio');
    const other = member('other');
    stream.subscribe(other);
    stream.attach(other, audio);
    assert.equal(audio.stream, undefined, 'an audio m-line does not carry a video');

    const renegotiated = track();
    stream.attach(other, renegotiated);
    stream.detach(renegotiated);
    stream.forwardRtp(packet(2), 0);
    assert.deepEqual(renegotiated.got, []);
  });

  it('lets every down track go when it ends', () => {
    const stream = new Stream(1, 'video', member('pub'));
    const t = track();
    stream.subscribe(member('a', t));
    stream.end();
    assert.equal(t.stream, undefined);
    assert.equal(stream.subscribers.size, 0);
    assert.equal(stream.forwardRtp(packet(1), 0), 0);
  });

  it('asks its publisher for a key frame of each layer at most every 250 ms, whatever its subscribers ask', () => {
    const publisher = member('pub');
    const stream = new Stream(7, 'video', publisher);
    stream.askKeyFrame(0, 1_000);
    stream.askKeyFrame(0, 1_100);
    stream.askKeyFrame(1, 1_100);
    stream.askKeyFrame(0, 1_249);
    stream.askKeyFrame(0, 1_250);
    assert.deepEqual(publisher.keyFrameAsks, [[7, 0], [7, 1], [7, 0]]);
  });

  it('restarts every down track at an unmute, and asks for every layer at once', () => {
    const publisher = member('pub');
    const stream = new Stream(7, 'video', publisher);
    const t = track();
    stream.subscribe(member('a', t));
    stream.restartTracks();
    stream.requestKeyFrame(-1);
    assert.equal(t.restarts, 1);
    assert.deepEqual(publisher.keyFrameAsks, [[7, -1]]);
  });

  it('tells its publisher the lower median of its subscribers\' loss, none for those without a down track', () => {
    const stream = new Stream(1, 'audio', member('pub'));
    assert.equal(stream.downstreamLoss(), 0, 'no subscriber');
    const a = track('audio');
    a.loss = 0.3;
    stream.subscribe(member('a', a));
    assert.equal(stream.downstreamLoss(), 0.2, 'one subscriber moves it no further than the cap');
    const b = track('audio');
    b.loss = 0.05;
    stream.subscribe(member('b', b));
    assert.equal(stream.downstreamLoss(), 0.05);
    stream.subscribe(member('ws'));
    stream.subscribe(member('ws2'));
    assert.equal(stream.downstreamLoss(), 0, 'half of its subscribers lose nothing');
  });

  it('keeps its simulcast layers, and says when they change', () => {
    const changes: Stream[] = [];
    const stream = new Stream(1, 'video', member('pub'), 'camera', (s) => changes.push(s));
    stream.setSimulcast(['q', 'h', 'f']);
    assert.equal(stream.layers?.count, 3);
    assert.deepEqual(stream.rids, ['q', 'h', 'f']);
    const layers: StreamLayers | undefined = stream.layers;
    stream.setSimulcast(['q', 'h', 'f']);
    assert.equal(stream.layers, layers, 'the same layers: their rates are kept');
    stream.setSimulcast([]);
    assert.equal(stream.layers?.count, 1);
    assert.equal(changes.length, 2);

    const audio = new Stream(2, 'audio', member('pub'), 'microphone', (s) => changes.push(s));
    audio.setSimulcast(['a']);
    assert.equal(audio.layers, undefined);
    assert.equal(changes.length, 2);
  });

  it('tells its publisher to rest the simulcast layers no subscriber here or on another node needs, and to send them again when one does', () => {
    const publisher = member('pub');
    const stream = new Stream(1, 'video', publisher);
    stream.setSimulcast(['q', 'h', 'f']);
    const told = (): unknown[] => publisher.control.flatMap((m) => (m.type === 'publish_layers' ? [m.active] : []));
    let now = 10_000;
    let seq = 1;
    const run = (ms: number): void => {
      for (const end = now + ms; now < end; now += 50) for (const layer of [0, 1, 2]) stream.forwardRtp(packet(seq++, layer), now);
    };
    const t = track();
    t.target = 0;
    const sub = member('sub', t);
    stream.subscribe(sub);
    run(LAYER_REST_AFTER_MS - 500);
    assert.deepEqual(told(), [], 'every layer is sent while it may still be needed');
    // a subscriber on the lowest layer: it and the one above stay, the top layer rests
    run(1_000);
    assert.deepEqual(told(), [[true, true, false]]);
    // its estimate grows to the middle layer: the top one is needed again at once
    t.target = 1;
    run(300);
    assert.deepEqual(told().at(-1), [true, true, true]);
    // back on the lowest, but another node's relay asks for the top layer: it stays
    t.target = 0;
    const relay: StreamRelay = { layers: [2], forward: () => true, forwardFrame: () => true, sendKey: () => undefined, end: () => undefined };
    stream.addRelay(relay);
    run(LAYER_REST_AFTER_MS * 2);
    assert.deepEqual(told().at(-1), [true, true, true]);
    // no relay, no down track: only the lowest layer is sent
    stream.removeRelay(relay);
    stream.unsubscribe(sub);
    run(LAYER_REST_AFTER_MS + 500);
    assert.deepEqual(told().at(-1), [true, false, false]);
    assert.equal(told().length, 3, 'told only when it changes');
    // one layer: nothing to rest
    const single = new Stream(2, 'video', publisher);
    single.setSimulcast([]);
    for (let i = 0; i < 100; i += 1) single.forwardRtp(packet(i), 10_000 + i * 100);
    assert.equal(told().length, 3);
  });
});
