/**
 * The origin's relay of a stream to another node: it sends only the layers that node asked for,
 * beside the local down tracks, answers the node's NACK misses from its own history, passes its
 * key-frame requests to the stream (asked of the publisher once per layer and interval however many
 * nodes ask), and hands over the stream's key at each rotation and the end of the stream.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ForwardedRtp } from '../rtp/layers.ts';
import type { Member } from '../room/member.ts';
import { Room } from '../room/room.ts';
import { RelayConsumer, type RelayConsumerSink } from './relay-consumer.ts';
import { unpackRelayedRtp } from './relayed-rtp.ts';

function publisher(keyFrameAsks: [number, number][]): Member {
  return {
    participantId: 'pa_pub', userId: 'pub', role: 'speaker', metadata: '', attributes: {}, published: new Map(),
    account: { rtpIn: () => undefined, rtpOut: () => undefined },
    keyFrames: { requestKeyFrame: (streamId, layer) => keyFrameAsks.push([streamId, layer]) },
    canSubscribe: () => true, sendControl: () => undefined, pushMedia: () => undefined, downTrack: () => undefined,
  };
}

interface FakeSink extends RelayConsumerSink {
  readonly rtp: { layer: number; seq: number; bytes: Buffer }[];
  readonly keys: { epoch: number; key: Buffer }[];
  ended: number;
}

function sink(): FakeSink {
  const s: FakeSink = {
    rtp: [], keys: [], ended: 0,
    sendRtp: (_track, layer, packet) => Boolean(s.rtp.push({ layer, seq: Buffer.from(packet).readUInt16BE(2), bytes: Buffer.from(packet) })),
    sendStreamKey: (_track, epoch, key) => Boolean(s.keys.push({ epoch, key: Buffer.from(key) })),
    endStream: () => Boolean(++s.ended),
    sendFrame: () => true,
  };
  return s;
}

const vp8 = (key: boolean): Buffer => Buffer.from([0x10, key ? 0x00 : 0x01, 0x02, 0x03]);
const packet = (seq: number, layer: number): ForwardedRtp => ({
  layer, ssrc: 100 + layer, seq, timestamp: seq * 3000, marker: seq % 2 === 0, payload: vp8(false), vp8: { headerBytes: 1 } as ForwardedRtp['vp8'],
});

function setup(layers: readonly number[]) {
  let now = 1_000;
  const asks: [number, number][] = [];
  const room = new Room('pr_1', 'room', () => now);
  const pub = publisher(asks);
  room.members.set(pub.userId, pub);
  const published = room.publish(pub, 7, 'video');
  assert.ok(published.ok);
  const stream = published.stream;
  stream.setSimulcast(['q', 'h', 'f']);
  const out = sink();
  const consumer = new RelayConsumer(1, stream, out, layers, () => now);
  stream.addRelay(consumer);
  return { stream, consumer, out, asks, room, advance: (ms: number) => { now += ms; } };
}

describe('relay consumer at the origin', () => {
  it('sends only the layers the remote node asked for, as RTP the remote node reads back', () => {
    const { stream, out } = setup([0]);
    for (let seq = 1; seq <= 3; seq += 1) for (const layer of [0, 1, 2]) stream.forwardRtp(packet(seq, layer), 0);
    assert.deepEqual(out.rtp.map((p) => [p.layer, p.seq]), [[0, 1], [0, 2], [0, 3]]);
    const read = unpackRelayedRtp('video', 0, out.rtp[1]!.bytes);
    assert.equal(read?.ssrc, 100);
    assert.equal(read?.timestamp, 6000);
    assert.equal(read?.marker, true);
    assert.deepEqual(read?.payload, vp8(false));
  });

  it('a layer the node stops needing stops crossing; one it starts needing asks the publisher for a key frame', () => {
    const { stream, consumer, out, asks } = setup([0, 2]);
    consumer.setLayers([1]);
    assert.deepEqual(asks, [[7, 0], [7, 2], [7, 1]]);
    for (const layer of [0, 1, 2]) stream.forwardRtp(packet(9, layer), 0);
    assert.deepEqual(out.rtp.map((p) => p.layer), [1]);
    consumer.setLayers([]);
    stream.forwardRtp(packet(10, 1), 0);
    assert.equal(out.rtp.length, 1);
  });

  it('key-frame requests of the remote node reach the publisher once per layer and interval', () => {
    const { consumer, asks, advance } = setup([0]);
    asks.length = 0;
    advance(300);
    consumer.onKeyFrameRequest(0);
    consumer.onKeyFrameRequest(0);
    consumer.onKeyFrameRequest(2); // not a layer it receives
    assert.deepEqual(asks, [[7, 0]]);
    advance(300);
    consumer.onKeyFrameRequest(0);
    assert.deepEqual(asks, [[7, 0], [7, 0]]);
  });

  it('answers NACK misses from what it sent, and nothing it did not keep', () => {
    const { stream, consumer, out } = setup([0]);
    for (let seq = 1; seq <= 5; seq += 1) stream.forwardRtp(packet(seq, 0), 0);
    out.rtp.length = 0;
    consumer.onNackMiss(0, [2, 4, 600]);
    consumer.onNackMiss(1, [2]);
    assert.deepEqual(out.rtp.map((p) => [p.layer, p.seq]), [[0, 2], [0, 4]]);
    assert.equal(consumer.resent, 2);
  });

  it('hands over each new key after a rotation, and tells the node when the stream ends', async () => {
    const { stream, consumer, out, room } = setup([0]);
    consumer.sendKey();
    assert.deepEqual(out.keys, [{ epoch: 1, key: stream.current.key }]);
    room.scheduleRotation(stream);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(out.keys.map((k) => k.epoch), [1, 2]);
    assert.deepEqual(out.keys[1]!.key, stream.current.key);
    room.removeStream(stream, false);
    assert.equal(out.ended, 1);
    stream.forwardRtp(packet(1, 0), 0);
    assert.equal(out.rtp.length, 0);
  });

  it('is not fed while the stream is muted', () => {
    const { stream, out, room } = setup([0]);
    room.setMuted(stream, true);
    stream.forwardRtp(packet(1, 0), 0);
    assert.equal(out.rtp.length, 0);
  });
});
