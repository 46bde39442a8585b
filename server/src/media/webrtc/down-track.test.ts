/**
 * A subscriber's down track (docs/protocol/media.md, "Bandwidth"): what it lets through of the
 * layers its stream feeds it, the key frames it asks for, and what it sends again for a NACK. A fake
 * downlink stands in for the transport, the pacer and the budget.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MediaKind } from '@rtc/protocol';
import type { RTCRtpTransceiver } from 'werift';
import { MediaStats } from '../../metrics/media-stats.ts';
import type { Member } from '../room/member.ts';
import { Stream } from '../room/stream.ts';
import type { ForwardedRtp } from '../rtp/layers.ts';
import type { Vp8Packet } from '../rtp/vp8.ts';
import { DownTrack, type DownTrackLink } from './down-track.ts';

interface Sent { readonly seq: number; readonly timestamp: number; readonly charged: boolean; readonly audio: boolean; readonly payload: Buffer }

type FakeLink = { -readonly [K in keyof DownTrackLink]: DownTrackLink[K] } & { sent: Sent[]; told: number[][]; budget: number; clock: number };

function fakeLink(): FakeLink {
  const link: FakeLink = {
    stats: new MediaStats(), sendable: true, transportUp: true, sent: [] as Sent[], told: [] as number[][], budget: 10_000, clock: 1_000,
    now: () => link.clock,
    sendAudio: (_t: DownTrack, seq: number, timestamp: number, _m: boolean, payload: Buffer) =>
      link.sent.push({ seq, timestamp, charged: false, audio: true, payload }),
    pace: (_t: DownTrack, seq: number, timestamp: number, _m: boolean, payload: Buffer, charged: boolean) =>
      link.sent.push({ seq, timestamp, charged, audio: false, payload }),
    takeRetransmitBudget: (bytes: number) => {
      if (link.budget < bytes) return false;
      link.budget -= bytes;
      return true;
    },
    makeRoom: () => undefined,
    rttMs: () => 100,
    layerTold: (_id: number, layer: number, width: number, height: number) => link.told.push([layer, width, height]),
  };
  return link;
}

function publisher(asks: number[]): Member {
  return {
    participantId: 'pa_pub', userId: 'pub', role: 'speaker', metadata: '', attributes: {}, published: new Map(),
    account: { rtpIn: () => undefined, rtpOut: () => undefined },
    keyFrames: { requestKeyFrame: (_id, layer) => asks.push(layer) },
    canSubscribe: () => true, sendControl: () => undefined, pushMedia: () => undefined, downTrack: () => undefined,
  };
}

const vp8 = (keyFrame: boolean, pictureId: number): Vp8Packet => ({
  headerBytes: 4, startOfPartition: true, partitionIndex: 0, pictureId, pictureIdBits: 15, tl0PicIdx: undefined, temporalId: undefined,
  keyFrame, width: keyFrame ? 640 : 0, height: keyFrame ? 360 : 0,
});

/** 50 bytes of VP8 whose payload descriptor carries a 15-bit picture id (RFC 7741 4.2), then `seq`. */
function vp8Bytes(pictureId: number, seq: number): Buffer {
  const payload = Buffer.alloc(50, seq & 0xff);
  payload.set([0x90, 0x80, 0x80 | (pictureId >> 8), pictureId & 0xff]);
  return payload;
}

const rtp = (layer: number, seq: number, keyFrame = false, kind: MediaKind = 'video'): ForwardedRtp => ({
  layer, ssrc: 100 + layer, seq, timestamp: seq * 3000, marker: true,
  payload: kind === 'video' ? vp8Bytes(seq, seq) : Buffer.alloc(50, seq & 0xff),
  vp8: kind === 'video' ? vp8(keyFrame, seq) : undefined,
});

/** A down track attached to a stream it receives from a publisher; `asks` collects the key frames asked of the publisher. */
function setUp(kind: MediaKind = 'video'): { track: DownTrack; link: ReturnType<typeof fakeLink>; asks: number[]; out: number[] } {
  const link = fakeLink();
  const asks: number[] = [];
  const out: number[] = [];
  const transceiver = { sender: { ssrc: 555 } } as unknown as RTCRtpTransceiver;
  const track = new DownTrack(3, kind, transceiver, link, { rtpIn: () => undefined, rtpOut: (_id, _k, p) => out.push(p.seq) });
  const stream = new Stream(3, kind, publisher(asks));
  const subscriber = { ...publisher([]), userId: 'sub', downTrack: () => track };
  stream.subscribe(subscriber);
  assert.equal(track.stream, stream);
  return { track, link, asks, out };
}

describe('the down track', () => {
  it('sends audio on at once, numbered from its own start, and counts it for its subscriber', () => {
    const { track, link, out } = setUp('audio');
    assert.equal(track.forward(rtp(0, 5000, false, 'audio')), true);
    assert.equal(track.forward(rtp(0, 5001, false, 'audio')), true);
    assert.equal(link.sent.length, 2);
    assert.equal(link.sent[0]!.audio, true);
    assert.equal(((link.sent[1]!.seq - link.sent[0]!.seq) & 0xffff), 1);
    assert.deepEqual(out, [5000, 5001]);
    assert.equal(link.stats.rtpForwarded, 2);
  });

  it('starts a video at a key frame of its target layer, asking the stream for one meanwhile', () => {
    const { track, link, asks } = setUp();
    track.target = 1;
    assert.equal(track.forward(rtp(0, 1)), false, 'not the layer it wants');
    assert.equal(track.forward(rtp(1, 2)), false, 'a delta frame cannot start it');
    assert.equal(track.forward(rtp(1, 3)), false);
    assert.deepEqual(asks, [1], 'asked once within the interval');
    assert.equal(track.forward(rtp(1, 4, true)), true);
    assert.equal(track.current, 1);
    assert.deepEqual(link.told, [[1, 640, 360]], 'the client is told the layer and its size');
    assert.equal(track.forward(rtp(1, 5)), true);
    assert.equal(link.sent.length, 2);
  });

  it('sends nothing while the client cannot receive, nor while paused', () => {
    const { track, link } = setUp();
    link.sendable = false;
    assert.equal(track.forward(rtp(0, 1, true)), false);
    link.sendable = true;
    track.paused = true;
    assert.equal(track.forward(rtp(0, 2, true)), false);
    assert.equal(link.sent.length, 0);
  });

  it('sends a lost packet again from its history, once per round trip and only within the budget', () => {
    const { track, link } = setUp();
    track.forward(rtp(0, 1, true));
    track.forward(rtp(0, 2));
    const [first, second] = link.sent.map((s) => s.seq);
    track.retransmit([first!], 2_000);
    assert.equal(link.sent.length, 2, 'what has not gone out yet (still with the pacer) is not sent again');
    // the downlink says when each went out
    track.markSent(first!, 1_000);
    track.markSent(second!, 1_000);
    track.retransmit([first!], 1_050);
    assert.equal(link.sent.length, 2, 'within a round trip of its sending');
    track.retransmit([first!, second!, 9999], 1_200);
    assert.deepEqual(link.sent.slice(2).map((s) => [s.seq, s.charged]), [[first, true], [second, true]]);
    track.retransmit([first!], 1_250);
    assert.equal(link.sent.length, 4, 'sent again once per round trip');
    link.budget = 0;
    track.retransmit([first!], 1_400);
    assert.equal(link.sent.length, 4, 'no budget left');
  });

  it('sends again the bytes it sent, a rewritten picture id as rewritten, audio too', () => {
    const { track, link } = setUp();
    track.target = 0;
    track.forward(rtp(0, 10, true));
    track.target = 1;
    assert.equal(track.forward(rtp(1, 500, true)), true, 'switched up at a key frame');
    track.forward(rtp(1, 501));
    const sent = link.sent.slice();
    assert.notDeepEqual(sent[1]!.payload.subarray(0, 4), rtp(1, 500).payload.subarray(0, 4), 'the picture id continues across the switch');
    for (const s of sent) track.markSent(s.seq, 1_000);
    track.retransmit(sent.map((s) => s.seq).reverse(), 1_500);
    assert.deepEqual(link.sent.slice(3).map((s) => [s.seq, s.payload]), sent.reverse().map((s) => [s.seq, s.payload]));

    const audio = setUp('audio');
    audio.track.forward(rtp(0, 7, false, 'audio'));
    const [packet] = audio.link.sent;
    audio.track.markSent(packet!.seq, 1_000);
    audio.track.retransmit([packet!.seq], 1_500);
    assert.deepEqual(audio.link.sent[1]!.payload, packet!.payload);
  });

  it('sends again what it sent from the stream it was attached to before', () => {
    const { track, link } = setUp();
    track.forward(rtp(0, 1, true));
    const next = new Stream(3, 'video', publisher([]));
    next.subscribe({ ...publisher([]), userId: 'sub', downTrack: () => track });
    assert.equal(track.stream, next);
    track.restart();
    assert.equal(track.forward(rtp(0, 900, true)), true);
    const sent = link.sent.slice();
    for (const s of sent) track.markSent(s.seq, 1_000);
    track.retransmit(sent.map((s) => s.seq), 1_500);
    assert.deepEqual(link.sent.slice(2).map((s) => s.payload), sent.map((s) => s.payload));
  });

  it('starts a new source after a restart: a video waits for its next key frame', () => {
    const { track } = setUp();
    track.forward(rtp(0, 1, true));
    track.restart();
    assert.equal(track.current, -1);
    assert.equal(track.forward(rtp(0, 2)), false);
    assert.equal(track.forward(rtp(0, 3, true)), true);
  });

  it('asks for a key frame of a layer at most every 300 ms, and not while its client\'s transport is down', () => {
    const { track, link, asks } = setUp();
    link.transportUp = false;
    track.askKeyFrame(0, 1_000);
    assert.deepEqual(asks, []);
    link.transportUp = true;
    track.askKeyFrame(0, 1_000);
    track.askKeyFrame(0, 1_260);
    track.askKeyFrame(1, 1_260);
    track.askKeyFrame(0, 1_300);
    assert.deepEqual(asks, [0, 1, 0]);
  });

  it('asks for the layer it forwards when its client asks for a key frame, and is fed no more once detached', () => {
    const { track, asks } = setUp();
    track.target = 0;
    track.requestKeyFrame(5_000);
    assert.deepEqual(asks, [0]);
    track.detach();
    assert.equal(track.stream, undefined);
    track.requestKeyFrame(6_000);
    assert.deepEqual(asks, [0]);
  });
});
