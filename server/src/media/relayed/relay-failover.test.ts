/**
 * Failures of a room across media nodes (docs/protocol/relay.md, §6 and §7), with the nodes' relays
 * in this process over real sockets: a relay link that breaks comes back by itself and its stream
 * resumes for the same subscribers; a node that dies (stops announcing) has its streams removed for
 * the members of the nodes that relayed them, which take each stream from its new origin once its
 * publisher announces it there, without their subscribers joining again.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Room } from '../room/room.ts';
import { relayCleanup } from '../../../../test/helpers/relay-nodes.ts';
import { fakeMember, fakeTrack, relayBus, relayedNode, until, vp8Packet, type RelayedNode } from '../../../../test/helpers/relayed-nodes.ts';
import { ANNOUNCEMENT_LIVENESS_MS } from './relay-router.ts';

after(relayCleanup);

/** A room `roomId` on `node` with a publisher of a three-layer video (stream 1), announced. */
function publishOn(node: RelayedNode, roomId: string, now: () => number, asks: [number, number][]) {
  const room = new Room('pr_1', roomId, now);
  node.rooms.set(roomId, room);
  const publisher = fakeMember('pub', undefined, asks);
  room.add(publisher);
  const published = room.publish(publisher, 1, 'video');
  assert.ok(published.ok);
  published.stream.setSimulcast(['q', 'h', 'f']);
  node.router.roomChanged('pr_1', roomId, true);
  return { room, stream: published.stream };
}

describe('relays between media nodes, when something fails', () => {
  it('a relay link that breaks is opened again; the stream resumes for the same subscribers, from a key frame', { timeout: 30_000 }, async () => {
    let nowA = 100_000;
    const a = await relayedNode(() => nowA);
    const b = await relayedNode(() => 100_000);
    const asks: [number, number][] = [];
    const { stream } = publishOn(a, 'hall-1', () => nowA, asks);
    const roomB = new Room('pr_1', 'hall-1', () => 100_000);
    b.rooms.set('hall-1', roomB);
    const t = fakeTrack();
    const s = fakeMember('sub', t);
    roomB.add(s);
    b.router.roomChanged('pr_1', 'hall-1', true);
    await until(() => roomB.streams.has(1));
    const relayed = roomB.streams.get(1)!;
    let seq = 1;
    await until(() => t.got.length > 0, () => stream.forwardRtp(vp8Packet(seq++, 0), nowA));

    // the origin's end of the link goes (its socket closed): the relaying node opens it again
    const [channel] = [...a.router.server.channels];
    assert.ok(channel);
    const asked = asks.length;
    nowA += 1_000;
    channel.close(1011);
    // while the link is down the stream's source is out of reach: its video down tracks pause (reason `relay`)
    await until(() => relayed.sourceLost);
    await until(() => !relayed.sourceLost);
    await until(() => a.router.server.channels.size === 1 && [...a.router.server.channels][0] !== channel);
    // the subscription was sent again: packets flow to the same track, restarted, after a key frame was asked
    const got = t.got.length;
    await until(() => t.got.length > got + 2, () => stream.forwardRtp(vp8Packet(seq++, 0), nowA));
    assert.ok(t.restarts >= 1, 'the down track starts a new source, as after a pause');
    assert.ok(asks.slice(asked).some(([id]) => id === 1), 'a key frame of the stream was asked of its publisher');
    assert.equal(roomB.streams.get(1), relayed, 'the same stream: its subscribers were not told it went');
    assert.ok(!s.control.some((m) => m.type === 'stream_removed'));
    assert.equal(s.control.filter((m) => m.type === 'stream_added').length, 1);
  });

  it('a node that dies: its streams go from the relaying node, which takes them from the node the publisher moved to', { timeout: 30_000 }, async () => {
    let nowA = 200_000;
    let nowB = 200_000;
    const a = await relayedNode(() => nowA);
    const b = await relayedNode(() => nowB);
    const c = await relayedNode(() => 200_000);
    const { stream: onA } = publishOn(a, 'hall-2', () => nowA, []);
    let fromA = 0;
    const unlisten = relayBus.subscribe((event) => {
      if (event.type === 'media.streams' && event.node === a.id) fromA += 1;
    });
    const roomB = new Room('pr_1', 'hall-2', () => nowB);
    b.rooms.set('hall-2', roomB);
    const t = fakeTrack();
    const s = fakeMember('sub', t);
    roomB.add(s);
    b.router.roomChanged('pr_1', 'hall-2', true);
    await until(() => roomB.streams.has(1));
    let seq = 1;
    await until(() => t.got.length > 0, () => onA.forwardRtp(vp8Packet(seq++, 0), nowA));

    // while A lives it repeats its announcement of a room that spans nodes, so B keeps its streams however long it lasts
    for (let i = 0; i < 6; i++) {
      const heard = fromA;
      nowA += ANNOUNCEMENT_LIVENESS_MS / 3;
      nowB += ANNOUNCEMENT_LIVENESS_MS / 3;
      await until(() => fromA > heard);
    }
    unlisten();
    assert.ok(roomB.streams.has(1), 'B still relays the stream of a node that lives');
    assert.ok(!s.control.some((m) => m.type === 'stream_removed'));
    // A is killed: a link that broke alone would come back, so the stream stays while A's announcement holds
    await a.kill();
    nowB += ANNOUNCEMENT_LIVENESS_MS / 2;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(roomB.streams.has(1));
    // once it no longer holds, B's members are told the stream is gone, and B stops dialling A
    nowB += ANNOUNCEMENT_LIVENESS_MS;
    await until(() => !roomB.streams.has(1));
    assert.ok(s.control.some((m) => m.type === 'stream_removed' && m.stream_id === 1));
    assert.equal(t.stream, undefined);
    assert.equal(b.router.feeds.length, 0);

    // the publisher joins C again and publishes there: B relays it from C by itself, to the same member
    const { stream: onC } = publishOn(c, 'hall-2', () => 200_000, []);
    await until(() => roomB.streams.get(1)?.relayedFrom === c.id);
    assert.equal(s.control.filter((m) => m.type === 'stream_added' && m.stream.stream_id === 1).length, 2);
    assert.equal(roomB.members.get('sub'), s, 'the subscriber on B stayed in its session');
    const got = t.got.length;
    await until(() => t.got.length > got, () => onC.forwardRtp(vp8Packet(seq++, 0), 200_000));
  });

  it('a publisher that moves to the node that relayed its stream publishes it there at once, before its old node is taken as gone', { timeout: 30_000 }, async () => {
    let nowB = 300_000;
    const a = await relayedNode(() => 300_000);
    const b = await relayedNode(() => nowB);
    publishOn(a, 'hall-3', () => 300_000, []);
    const roomB = new Room('pr_1', 'hall-3', () => nowB);
    b.rooms.set('hall-3', roomB);
    const t = fakeTrack();
    const s = fakeMember('sub', t);
    roomB.add(s);
    b.router.roomChanged('pr_1', 'hall-3', true);
    await until(() => roomB.streams.get(1)?.relayedFrom === a.id);

    // A is killed; its publisher joins B again and publishes the same stream while A's announcement still holds
    await a.kill();
    const publisher = fakeMember('pub', undefined, []);
    roomB.add(publisher);
    const published = roomB.publish(publisher, 1, 'video');
    assert.ok(published.ok, 'not refused as a stream in use');
    assert.equal(published.stream.relayedFrom, undefined);
    assert.deepEqual(s.control.filter((m) => m.type === 'stream_removed' || m.type === 'stream_added').map((m) => m.type),
      ['stream_added', 'stream_removed', 'stream_added'], 'the relayed stream went, the local one came');
    b.router.roomChanged('pr_1', 'hall-3');
    published.stream.forwardRtp(vp8Packet(1, 0), nowB);
    assert.equal(t.got.length, 1, 'the subscriber receives it from its publisher here');
    // once A's announcement no longer holds, the relay from A goes, and the stream published here stays
    nowB += ANNOUNCEMENT_LIVENESS_MS * 2;
    await until(() => b.router.feeds.length === 0);
    assert.equal(roomB.streams.get(1), published.stream);
    assert.equal(s.control.filter((m) => m.type === 'stream_removed').length, 1);
  });
});
