/**
 * Two media nodes' relays in this process, over real sockets (the relay path on each node's HTTP
 * server, one UDP socket each) and one bus: a stream published on node A reaches a subscriber's down
 * track on node B, only the layers B's subscribers need cross, B's key-frame requests reach A's
 * publisher once, a packet lost on the way is asked of A again, and the stream's end reaches B.
 * Rooms are real; fakes stand in for the sessions and their down tracks.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Room } from '../room/room.ts';
import { LAYER_REST_AFTER_MS } from '../room/stream.ts';
import { relayCleanup } from '../../../../test/helpers/relay-nodes.ts';
import {
  fakeMember as member, fakeTrack as track, relayBus, relayedNode as node, sealedVp8 as vp8, until, vp8Packet as packet,
} from '../../../../test/helpers/relayed-nodes.ts';

after(relayCleanup);

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

  it('a publisher on A rests the layers no subscriber on B needs, and sends them again once one does', { timeout: 30_000 }, async () => {
    let nowA = 300_000;
    const a = await node(() => nowA);
    const b = await node(() => 300_000);
    const roomA = new Room('pr_1', 'layers', () => nowA);
    a.rooms.set('layers', roomA);
    const publisher = member('pub', undefined, []);
    roomA.add(publisher);
    const published = roomA.publish(publisher, 1, 'video');
    assert.ok(published.ok);
    const stream = published.stream;
    stream.setSimulcast(['q', 'h', 'f']);
    a.router.roomChanged('pr_1', 'layers');
    const roomB = new Room('pr_1', 'layers', () => 300_000);
    b.rooms.set('layers', roomB);
    const t = track();
    roomB.add(member('sub', t));
    b.router.roomChanged('pr_1', 'layers', true);
    await until(() => roomB.streams.has(1));

    // B asks A for the layers its subscriber needs once its down track is attached: the lowest and the one above
    await until(() => stream.relayed[0]?.layers.join() === '0,1');
    const told = (): unknown[] => publisher.control.flatMap((m) => (m.type === 'publish_layers' ? [m.active] : []));
    let seq = 1;
    const pump = (): void => {
      for (const layer of [0, 1, 2]) stream.forwardRtp(packet(seq, layer), nowA);
      seq += 1;
      nowA += 50;
    };
    // B's only subscriber is on the lowest layer: B asks for it and the one above; the top layer rests on A's publisher
    await until(() => told().length > 0, pump);
    assert.deepEqual(told(), [[true, true, false]]);
    assert.ok(nowA - 300_000 >= LAYER_REST_AFTER_MS, 'not before it was unneeded for a while');
    // its estimate grows to the middle layer: B asks for the top one too, and A's publisher sends it again
    t.target = 1;
    await until(() => told().length > 1, pump);
    assert.deepEqual(told().at(-1), [true, true, true]);
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

  it('a node that lets a relayed stream go has its origin rotate the key, whether or not it could still ask', { timeout: 30_000 }, async () => {
    const a = await node(() => 200_000);
    const b = await node(() => 200_000);
    const roomA = new Room('pr_1', 'let-go', () => 200_000);
    a.rooms.set('let-go', roomA);
    const publisher = member('pub');
    roomA.add(publisher);
    const published = roomA.publish(publisher, 1, 'video');
    assert.ok(published.ok);
    a.router.roomChanged('pr_1', 'let-go');
    const roomB = new Room('pr_1', 'let-go', () => 200_000);
    b.rooms.set('let-go', roomB);
    roomB.add(member('s1', track()));
    b.router.roomChanged('pr_1', 'let-go', true);
    await until(() => published.stream.relayed.length === 1);
    const keys = (): number => publisher.control.filter((m) => m.type === 'stream_key').length;
    const before = keys();
    // B's part of the room goes without a departure that asks for a rotation (its link broke, its node stops)
    b.rooms.delete('let-go');
    b.router.roomChanged('pr_1', 'let-go');
    await until(() => published.stream.relayed.length === 0);
    await until(() => keys() > before);
  });

  it('a member joining or leaving a room whose streams stay as they were costs the bus nothing; a change of its streams is announced', { timeout: 30_000 }, async () => {
    const a = await node(() => 300_000);
    const b = await node(() => 300_000);
    const said: string[] = [];
    const stop = relayBus.subscribe((event) => {
      if (event.type === 'media.streams' && event.roomId === 'town-hall') said.push(`${event.node === a.id ? 'A' : 'B'}${event.ask ? '?' : ''}:${event.streams.length}`);
    });
    try {
      const roomA = new Room('pr_1', 'town-hall', () => 300_000);
      a.rooms.set('town-hall', roomA);
      const publisher = member('pub');
      roomA.add(publisher);
      a.router.roomChanged('pr_1', 'town-hall', true);
      assert.ok(roomA.publish(publisher, 1, 'audio').ok);
      a.router.roomChanged('pr_1', 'town-hall');
      const roomB = new Room('pr_1', 'town-hall', () => 300_000);
      b.rooms.set('town-hall', roomB);
      roomB.add(member('l1', track()));
      b.router.roomChanged('pr_1', 'town-hall', true);
      await until(() => roomB.streams.has(1));
      const settled = said.length;
      // (the bus delivers in the publisher's turn: A's answer can be heard before B's question)
      assert.deepEqual([...said].sort(), ['A:1', 'A:1', 'A?:0', 'B?:0'], 'A asks and announces its stream; B asks and A answers');
      // listeners come and go on both nodes: nothing any node originates changed
      for (let i = 2; i <= 20; i++) {
        const listener = member(`l${i}`, track());
        roomB.add(listener);
        b.router.roomChanged('pr_1', 'town-hall', false);
        roomB.remove(listener);
        b.router.roomChanged('pr_1', 'town-hall');
      }
      const extra = member('l-a');
      roomA.add(extra);
      a.router.roomChanged('pr_1', 'town-hall', false);
      assert.equal(said.length, settled, 'no announcement for joins and departures');
      // the publisher mutes: that is announced, and B's copy of the stream is muted for its members
      roomA.setMuted(roomA.streams.get(1)!, true);
      a.router.roomChanged('pr_1', 'town-hall');
      await until(() => roomB.streams.get(1)?.muted === true);
      assert.deepEqual(said.slice(settled), ['A:1']);
    } finally {
      stop();
    }
  });
});
