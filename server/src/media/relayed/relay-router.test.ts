/**
 * Two media nodes' relays in this process, over real sockets (the relay path on each node's HTTP
 * server, one UDP socket each) and one bus: a stream published on node A reaches a subscriber's down
 * track on node B, only the layers B's subscribers need cross, B's key-frame requests reach A's
 * publisher once, a packet lost on the way is asked of A again, and the stream's end reaches B.
 * Rooms are real; fakes stand in for the sessions and their down tracks.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import type { ServerControl } from '@rtc/protocol';
import { createMemoryBus } from '../../bus/memory.ts';
import { RelayEndpoint } from '../relay/index.ts';
import type { ForwardedRtp } from '../rtp/layers.ts';
import type { DownTrack, Member } from '../room/member.ts';
import { Room } from '../room/room.ts';
import { RelayRouter } from './relay-router.ts';
import { ring } from '../../../../test/helpers/relay-nodes.ts';

const closers: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

interface FakeTrack extends DownTrack {
  readonly got: ForwardedRtp[];
  target: number;
}

function track(): FakeTrack {
  const t: FakeTrack = {
    kind: 'video', stream: undefined, got: [], target: 0, reportedLoss: 0,
    forward: (packet) => Boolean(t.got.push(packet)),
    restart: () => undefined,
  };
  return t;
}

function member(userId: string, t?: DownTrack, keyFrameAsks?: [number, number][]): Member & { readonly control: ServerControl[] } {
  const control: ServerControl[] = [];
  return {
    participantId: `pa_${userId}`, userId, role: 'speaker', metadata: '', attributes: {}, published: new Map(), control,
    account: { rtpIn: () => undefined, rtpOut: () => undefined },
    keyFrames: keyFrameAsks && { requestKeyFrame: (streamId, layer) => keyFrameAsks.push([streamId, layer]) },
    canSubscribe: () => true, sendControl: (m) => control.push(m), pushMedia: () => undefined, downTrack: () => t,
  };
}

const bus = createMemoryBus((err) => {
  throw err;
});
const credentials = ring();

async function node(now: () => number): Promise<{ router: RelayRouter; rooms: Map<string, Room>; id: string }> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  const id = `127.0.0.1:${port}`;
  const endpoint = await RelayEndpoint.open({ nodeId: id, credentials, host: '127.0.0.1', port: 0 });
  const rooms = new Map<string, Room>();
  const router = new RelayRouter({
    endpoint, url: `ws://${id}`, bus, logger: pino({ level: 'silent' }), now, room: (_p, roomId) => rooms.get(roomId),
  });
  http.on('upgrade', (req, socket, head) => {
    if (!router.server.handleUpgrade(req, socket, head)) socket.destroy();
  });
  closers.push(async () => {
    await router.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await endpoint.close();
  });
  return { router, rooms, id };
}

/** A VP8 descriptor and frame bytes as a publisher's end-to-end encryption leaves them (media.md, "Encrypted encoded frames"). */
const vp8 = Buffer.concat([Buffer.from([0x10, 0x01]), Buffer.from('sealed-frame-bytes-the-node-cannot-open')]);
const packet = (seq: number, layer: number): ForwardedRtp => ({
  layer, ssrc: 100 + layer, seq, timestamp: seq * 3000, marker: false, payload: vp8, vp8: { headerBytes: 1 } as ForwardedRtp['vp8'],
});

/** Runs `step` on each turn of the event loop until `done` holds. */
async function until(done: () => boolean, step: () => void = () => undefined): Promise<void> {
  while (!done()) {
    step();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('relays between two media nodes', () => {
  it('a stream published on A reaches a subscriber on B: its layers by need, key frames once, misses again, its end', { timeout: 30_000 }, async () => {
    let nowA = 100_000;
    const a = await node(() => nowA);
    const b = await node(() => 100_000);
    const asks: [number, number][] = [];
    const roomA = new Room('pr_1', 'hall', () => nowA);
    a.rooms.set('hall', roomA);
    const publisher = member('pub', undefined, asks);
    roomA.add(publisher);
    const published = roomA.publish(publisher, 1, 'video');
    assert.ok(published.ok);
    const stream = published.stream;
    stream.setSimulcast(['q', 'h', 'f']);
    a.router.roomChanged('pr_1', 'hall');

    const roomB = new Room('pr_1', 'hall', () => 100_000);
    b.rooms.set('hall', roomB);
    const t1 = track();
    const t2 = track();
    const s1 = member('s1', t1);
    const s2 = member('s2', t2);
    roomB.add(s1);
    roomB.add(s2);
    b.router.roomChanged('pr_1', 'hall', true);

    // B opens a link to A, subscribes, gets the key and shows the stream to its members
    await until(() => roomB.streams.has(1));
    const relayed = roomB.streams.get(1)!;
    assert.equal(relayed.relayedFrom, a.id);
    assert.deepEqual(relayed.current.key, stream.current.key, 'the origin\'s key, delivered under the subscribers\' sessions');
    assert.ok(s1.control.some((m) => m.type === 'stream_added' && m.stream.stream_id === 1 && m.stream.subscribed));
    assert.equal(t1.stream, relayed);

    // both subscribers target the lowest layer: it and the one above cross, the top layer does not
    let seq = 1;
    await until(() => t1.got.length >= 3, () => {
      for (const layer of [0, 1, 2]) stream.forwardRtp(packet(seq, layer), nowA);
      seq += 1;
    });
    assert.deepEqual(new Set(t1.got.map((p) => p.layer)), new Set([0, 1]));
    assert.ok(t2.got.length >= 3);
    assert.deepEqual(t1.got[0]!.payload, vp8, 'the payload crosses as the origin forwarded it');

    // B's subscribers both ask for a key frame of layer 0: A's publisher is asked once
    nowA += 1_000;
    const before = asks.length;
    relayed.askKeyFrame(0, 200_000);
    relayed.askKeyFrame(0, 200_001);
    await until(() => asks.length > before);

    assert.deepEqual(asks.slice(before), [[1, 0]], 'one request reached the publisher');


    // a packet lost between the nodes (its datagram dropped at A's socket) is asked of A, which sends it again from its relay's history
    const endpointA = a.router.endpoint;
    const send = endpointA.send.bind(endpointA);
    let dropNext = false;
    const onWire: Buffer[] = [];
    endpointA.send = (parts, port, address) => {
      onWire.push(Buffer.concat(parts));
      if (!dropNext) return send(parts, port, address);
      dropNext = false;
      return true;
    };
    const lost = seq + 1;
    stream.forwardRtp(packet(seq, 0), nowA);
    dropNext = true;
    stream.forwardRtp(packet(lost, 0), nowA);
    stream.forwardRtp(packet(lost + 1, 0), nowA);
    assert.equal(dropNext, false);
    await until(() => t1.got.some((p) => p.seq === lost));
    const recovered = t1.got.find((p) => p.seq === lost)!;
    assert.ok(recovered.recoveredAfterMs !== undefined, 'taken as a repair');
    assert.deepEqual(asks.slice(before), [[1, 0]], 'still one key-frame request');
    assert.ok(onWire.length >= 4);
    for (const datagram of onWire) assert.equal(datagram.indexOf(vp8.subarray(2)), -1, 'the relay seals what it carries');

    // muted by the customer's server at the origin: B's members are told, as of a stream of B
    roomA.setMuted(stream, true);
    a.router.roomChanged('pr_1', 'hall');
    await until(() => relayed.muted);
    assert.ok(s1.control.some((m) => m.type === 'stream_muted' && m.stream_id === 1 && m.muted));
    roomA.setMuted(stream, false);
    a.router.roomChanged('pr_1', 'hall');
    await until(() => !relayed.muted);

    // the stream ends at its origin: gone at B too
    roomA.removeStream(stream, false);
    await until(() => !roomB.streams.has(1));
    assert.ok(s1.control.some((m) => m.type === 'stream_removed' && m.stream_id === 1));
    assert.equal(t1.stream, undefined);

    // an audio stream crosses too; once B has nobody in the room, B unsubscribes and A stops feeding it
    const audio = roomA.publish(publisher, 3, 'audio');
    assert.ok(audio.ok);
    a.router.roomChanged('pr_1', 'hall');
    await until(() => roomB.streams.has(3));
    assert.equal(audio.stream.relayed.length, 1);
    roomB.remove(s1);
    roomB.remove(s2);
    b.rooms.delete('hall');
    b.router.roomChanged('pr_1', 'hall');
    await until(() => audio.stream.relayed.length === 0);
  });

  it('a camera announced before its simulcast m-line was negotiated crosses with every layer once the origin announces them', { timeout: 30_000 }, async () => {
    const a = await node(() => 100_000);
    const b = await node(() => 100_000);
    const roomA = new Room('pr_1', 'stage', () => 100_000);
    a.rooms.set('stage', roomA);
    const publisher = member('pub');
    roomA.add(publisher);
    // an app publishes, then negotiates its m-line: the stream is announced with one layer first
    const published = roomA.publish(publisher, 1, 'video');
    assert.ok(published.ok);
    const stream = published.stream;
    a.router.roomChanged('pr_1', 'stage');
    const roomB = new Room('pr_1', 'stage', () => 100_000);
    b.rooms.set('stage', roomB);
    const t1 = track();
    roomB.add(member('s1', t1));
    b.router.roomChanged('pr_1', 'stage', true);
    await until(() => roomB.streams.has(1));
    const relayed = roomB.streams.get(1)!;
    assert.equal(relayed.layers?.count ?? 1, 1);

    stream.setSimulcast(['h', 'f']);
    a.router.roomChanged('pr_1', 'stage');
    await until(() => relayed.layers?.count === 2);
    // the subscriber targets the lowest layer: the one above crosses too, so that it can climb
    let seq = 1;
    await until(() => t1.got.some((p) => p.layer === 1), () => {
      for (const layer of [0, 1]) stream.forwardRtp(packet(seq, layer), 100_000);
      seq += 1;
    });
  });
});
