import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { placeRoom, type MediaNode } from './media-placement.ts';

const node = (i: number): MediaNode => ({ id: `media-${i}`, host: `10.0.0.${i}`, port: 7880 });
const ROOMS = Array.from({ length: 4000 }, (_, i) => `room-${i}`);

function placements(nodes: readonly MediaNode[]): Map<string, string> {
  return new Map(ROOMS.map((room) => [room, placeRoom(nodes, 'prj_1', room)!.id]));
}

describe('room placement on media nodes (rendezvous hashing)', () => {
  it('is the same whatever the order of the node list', () => {
    const nodes = [node(1), node(2), node(3), node(4)];
    assert.deepEqual(placements(nodes), placements([...nodes].reverse()));
  });

  it('spreads rooms over the nodes about evenly', () => {
    const counts = new Map<string, number>();
    for (const id of placements([node(1), node(2), node(3), node(4)]).values()) counts.set(id, (counts.get(id) ?? 0) + 1);
    assert.equal(counts.size, 4);
    for (const [id, count] of counts) assert.ok(count > 800 && count < 1200, `${id} holds ${count} of 4000 rooms`);
  });

  it('moves only the rooms of a removed node, and to a new node only rooms it now wins', () => {
    const before = placements([node(1), node(2), node(3), node(4)]);
    const removed = placements([node(1), node(2), node(4)]);
    for (const room of ROOMS) {
      if (before.get(room) !== 'media-3') assert.equal(removed.get(room), before.get(room), `${room} stayed`);
      else assert.notEqual(removed.get(room), 'media-3');
    }
    const added = placements([node(1), node(2), node(3), node(4), node(5)]);
    let moved = 0;
    for (const room of ROOMS) {
      if (added.get(room) === before.get(room)) continue;
      assert.equal(added.get(room), 'media-5', `${room} moved only to the new node`);
      moved += 1;
    }
    assert.ok(moved > 600 && moved < 1000, `${moved} of 4000 rooms moved to the fifth node`);
  });

  it('keys a room by project and room id, and has no answer without nodes', () => {
    const nodes = [node(1), node(2), node(3)];
    const differs = ROOMS.some((room) => placeRoom(nodes, 'prj_a', room)!.id !== placeRoom(nodes, 'prj_b', room)!.id);
    assert.ok(differs, 'the same room name in two projects is placed independently');
    assert.equal(placeRoom([], 'prj_1', 'room'), undefined);
  });
});
