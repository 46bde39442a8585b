/**
 * A stream of the local room fed by a relay from its origin node: its down tracks receive what
 * crosses, it asks the origin only for the layers they need, passes their key-frame requests on once
 * per layer and interval, asks again only for packets that did not cross, and delivers the origin's
 * stream key to the local subscribers as for a stream published here. Fakes stand in for the link,
 * the local subscribers and their down tracks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServerControl } from '@rtc/protocol';
import type { ForwardedRtp } from '../rtp/layers.ts';
import type { DownTrack, Member } from '../room/member.ts';
import { RelayFeed, type RelayFeedLink } from './relay-feed.ts';
import { packRelayedRtp } from './relayed-rtp.ts';

interface FakeLink extends RelayFeedLink {
  readonly subscribed: (readonly number[])[];
  readonly keyFrames: [number, number][];
  readonly misses: [number, readonly number[]][];
  unsubscribed: number;
  /** Rotation requests sent; while `down`, none leaves. */
  rotations: number;
  down: boolean;
}

function link(): FakeLink {
  const l: FakeLink = {
    subscribed: [], keyFrames: [], misses: [], unsubscribed: 0, rotations: 0, down: false,
    subscribe: (_track, _ref, layers) => Boolean(l.subscribed.push([...layers])),
    unsubscribe: () => Boolean(++l.unsubscribed),
    requestKeyFrame: (track, layer) => Boolean(l.keyFrames.push([track, layer])),
    sendNackMiss: (_track, layer, seqs) => Boolean(l.misses.push([layer, [...seqs]])),
    requestKeyRotation: () => !l.down && Boolean(++l.rotations),
  };
  return l;
}

interface FakeTrack extends DownTrack {
  readonly got: [number, number][];
  target: number;
  restarts: number;
}

function track(target: number): FakeTrack {
  const t: FakeTrack = {
    kind: 'video', stream: undefined, got: [], target, restarts: 0, reportedLoss: 0,
    forward: (packet) => Boolean(t.got.push([packet.layer, packet.seq])),
    restart: () => {
      t.restarts += 1;
    },
  };
  return t;
}

function subscriber(userId: string, t: DownTrack): Member & { readonly control: ServerControl[] } {
  const control: ServerControl[] = [];
  return {
    participantId: `pa_${userId}`, userId, role: 'speaker', metadata: '', attributes: {}, published: new Map(), control,
    account: { rtpIn: () => undefined, rtpOut: () => undefined }, keyFrames: undefined,
    canSubscribe: () => true, sendControl: (m) => control.push(m), pushMedia: () => undefined, downTrack: () => t,
  };
}

const datagram = (seq: number, layer: number): Buffer => packRelayedRtp('video', {
  layer, ssrc: 100 + layer, seq, timestamp: seq * 3000, marker: false, payload: Buffer.from([0x10, 0x01, 0x02]), vp8: undefined,
} satisfies ForwardedRtp);

function setup(targets: number[]) {
  let now = 10_000;
  const l = link();
  const feed = new RelayFeed({
    track: 3, ref: { project_id: 'pr_1', room_id: 'room', stream_id: 7 }, kind: 'video', layerCount: 3,
    publisher: { participantId: 'pa_pub', userId: 'pub' }, link: l, now: () => now,
  });
  const tracks = targets.map(track);
  const members = tracks.map((t, i) => subscriber(`u${i}`, t));
  for (const m of members) feed.stream.subscribe(m);
  return { feed, l, tracks, members, advance: (ms: number) => { now += ms; } };
}

describe('relay-fed stream', () => {
  it('asks the origin for the layers its down tracks target and the one above, not the layers nobody needs', () => {
    const { feed, l, tracks } = setup([0, 0]);
    feed.refresh();
    feed.refresh();
    assert.deepEqual(l.subscribed, [[0, 1]]);
    tracks[1]!.target = 2;
    feed.refresh();
    assert.deepEqual(l.subscribed, [[0, 1], [0, 2]]);
  });

  it('feeds what crosses to the local down tracks unchanged', () => {
    const { feed, tracks } = setup([0]);
    feed.refresh();
    feed.onRtp(0, datagram(5, 0));
    feed.onRtp(0, Buffer.from([1, 2, 3])); // not a relayed RTP packet
    feed.onRtp(6, datagram(6, 0)); // a layer the stream does not have
    assert.deepEqual(tracks[0]!.got, [[0, 5]]);
  });

  it('passes key-frame requests of its down tracks to the origin once per layer and interval', () => {
    const { feed, l, advance } = setup([0, 0]);
    feed.refresh();
    advance(1_000);
    feed.stream.askKeyFrame(0, 11_000);
    feed.stream.askKeyFrame(0, 11_010);
    assert.deepEqual(l.keyFrames, [[3, 0]]);
    feed.stream.askKeyFrame(2, 11_020); // not crossing: nothing to ask for
    assert.deepEqual(l.keyFrames, [[3, 0]]);
  });

  it('asks the origin again only for packets that did not cross', () => {
    const { feed, l, advance } = setup([0]);
    feed.refresh();
    for (const seq of [1, 2, 5, 6]) feed.onRtp(0, datagram(seq, 0));
    advance(5);
    feed.flush();
    assert.deepEqual(l.misses, [[0, [3, 4]]]);
    feed.onRtp(0, datagram(3, 0));
    feed.onRtp(0, datagram(4, 0));
    advance(100);
    feed.flush();
    assert.equal(l.misses.length, 1);
  });

  it('delivers the origin key to its local subscribers, once per key', () => {
    const { feed, members } = setup([0]);
    assert.equal(feed.ready, false);
    const key = Buffer.alloc(32, 9);
    feed.onStreamKey(4, key);
    feed.onStreamKey(4, key);
    assert.equal(feed.ready, true);
    const expected = { type: 'stream_key', stream_id: 7, epoch: 4, key: key.toString('base64url') };
    assert.deepEqual(members[0]!.control, [expected]);
    assert.deepEqual(feed.stream.describe(members[0]!), {
      stream_id: 7, kind: 'video', participant_id: 'pa_pub', user_id: 'pub', subscribed: true, epoch: 4, key: key.toString('base64url'),
    });
  });

  it('asks the origin to rotate the key once per flush however many subscribers left, never rotating it here; once the link is back if it was down', () => {
    const { feed, l } = setup([0, 0]);
    const key = Buffer.alloc(32, 9);
    feed.onStreamKey(4, key);
    feed.stream.rotateAtOrigin!();
    feed.stream.rotateAtOrigin!();
    assert.equal(l.rotations, 0, 'asked at the next flush');
    feed.flush();
    feed.flush();
    assert.equal(l.rotations, 1, 'two departures of one turn: one request');
    assert.deepEqual([feed.stream.current.epoch, feed.stream.current.key], [4, key]);
    l.down = true;
    feed.linkDown();
    feed.stream.rotateAtOrigin!();
    feed.flush();
    assert.equal(l.rotations, 1);
    l.down = false;
    feed.linkUp();
    feed.linkUp();
    assert.equal(l.rotations, 2);
  });

  it('resumes after the link comes back as after a pause: tracks restart and key frames are asked for', () => {
    const { feed, l, tracks } = setup([0]);
    feed.refresh();
    feed.linkDown();
    feed.linkUp();
    assert.deepEqual(l.subscribed, [[0, 1], [0, 1]]);
    assert.equal(tracks[0]!.restarts, 1);
    assert.deepEqual(l.keyFrames, [[3, 0], [3, 1]]);
    feed.close();
    assert.equal(l.unsubscribed, 1);
    feed.onRtp(0, datagram(9, 0));
    assert.deepEqual(tracks[0]!.got, []);
  });
});
