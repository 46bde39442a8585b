/** The placement rule (core/media-placement.ts, choosePlacement), held to one suite for each media node directory (Redis, SQLite). */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { rendezvousOrder, RESERVATION_MS, type MediaNode, type MediaNodeDirectory, type NodeLoad, type PlacementPolicy } from '../../server/src/core/media-placement.ts';

export type PlacementDirectory = MediaNodeDirectory & { refresh(): unknown };

/** Makes a fresh directory (its own keys or file) with the policy, reading the time from `nowMs`. */
export type MakeDirectory = (policy: PlacementPolicy, nowMs: () => number) => Promise<PlacementDirectory>;

const NODES: readonly MediaNode[] = [1, 2, 3].map((i) => ({ id: `10.0.0.${i}:7880`, host: `10.0.0.${i}`, port: 7880 }));
const IDLE: NodeLoad = { sessions: 0, users: [] };

/** Rooms whose first choice (rendezvous order over `nodes`) is `node`. */
function roomsPreferring(node: MediaNode, nodes: readonly MediaNode[], count: number, tag: string): string[] {
  const rooms: string[] = [];
  for (let i = 0; rooms.length < count; i++) if (rendezvousOrder(nodes, 'prj_1', `${tag}-${i}`)[0]!.id === node.id) rooms.push(`${tag}-${i}`);
  return rooms;
}

export function placementContract(make: MakeDirectory): void {
  let now = 1_800_000_000_000;
  const stops: (() => Promise<void>)[] = [];
  const errors: unknown[] = [];
  after(async () => {
    for (const stop of stops) await stop();
  });

  /** A directory with `count` nodes announced, each reporting what `loads` holds for it at each announcement. */
  const deployment = async (policy: PlacementPolicy, count = 2) => {
    const directory = await make(policy, () => now);
    const nodes = NODES.slice(0, count);
    const loads = new Map<string, NodeLoad>(nodes.map((n) => [n.id, IDLE]));
    const announce = async (): Promise<void> => {
      for (const node of nodes) stops.push(await directory.announce(node, (err) => errors.push(err), () => loads.get(node.id)!));
      await directory.refresh();
    };
    await announce();
    const place = async (room: string, user: string): Promise<string> => (await directory.place('prj_1', room, user, 600)).id;
    return { directory, nodes, loads, announce, place };
  };

  for (const spill of [false, true]) {
    it(`spreads a burst of tokens for new rooms by their reservations, and counts placements over capacity (spill ${spill ? 'on' : 'off'})`, async () => {
      const { directory, nodes, place } = await deployment({ capacity: 2, spill });
      const rooms = roomsPreferring(nodes[0]!, nodes, 5, `burst-${spill}`);
      const placed = [];
      for (const room of rooms.slice(0, 4)) placed.push(await place(room, 'user-1'));
      assert.deepEqual(placed, [nodes[0]!.id, nodes[0]!.id, nodes[1]!.id, nodes[1]!.id], 'two reservations fill a node of capacity 2');
      assert.equal(directory.overCapacityPlacements(), 0);
      // every node full: the least-loaded anyway, counted
      await place(rooms[4]!, 'user-1');
      assert.equal(directory.overCapacityPlacements(), 1);
      assert.deepEqual(errors, []);
    });
  }

  it('opens a full live room on another node only with spill on; without, keeps it on its node over capacity', async () => {
    for (const spill of [false, true]) {
      const { directory, nodes, place } = await deployment({ capacity: 2, spill });
      const room = `big-${spill}`;
      const first = await place(room, 'u-0');
      const placed = [first];
      for (let i = 1; i < 5; i++) placed.push(await place(room, `u-${i}`));
      const other = nodes.find((n) => n.id !== first)!.id;
      if (spill) {
        assert.deepEqual(placed.slice(0, 4), [first, first, other, other], 'the room opens on the second node when its first is full');
        assert.equal(directory.overCapacityPlacements(), 1, 'the fifth user finds every node full');
      } else {
        assert.deepEqual(placed, [first, first, first, first, first], 'a room stays on its one node');
        assert.equal(directory.overCapacityPlacements(), 3);
      }
    }
  });

  it('counts a node\'s reported sessions, and a reservation only until its session joins', async () => {
    const { nodes, loads, announce, place } = await deployment({ capacity: 2, spill: true });
    const [a, b] = [nodes[0]!.id, nodes[1]!.id];
    const rooms = roomsPreferring(nodes[0]!, nodes, 4, 'load');
    assert.equal(await place(rooms[0]!, 'joiner'), a);
    // the session joined: the node reports it, and its reservation ends (no double count)
    loads.set(a, { sessions: 1, users: [`prj_1\n${rooms[0]}\njoiner`] });
    await announce();
    assert.equal(await place(rooms[1]!, 'user-1'), a, 'one joined session and one reservation: full only now');
    assert.equal(await place(rooms[2]!, 'user-1'), b, 'node a holds 2 of 2');
    // node a reports two sessions of other apps: full whatever the reservations
    loads.set(a, { sessions: 2, users: [] });
    await announce();
    assert.equal(await place(rooms[3]!, 'user-1'), b);
  });

  it('lets a reservation count for 30 s, then frees its place', async () => {
    const { nodes, announce, place } = await deployment({ capacity: 1, spill: true });
    const [a, b] = [nodes[0]!.id, nodes[1]!.id];
    const rooms = roomsPreferring(nodes[0]!, nodes, 3, 'expiry');
    assert.equal(await place(rooms[0]!, 'never-joins'), a);
    now += RESERVATION_MS - 1000;
    await announce();
    assert.equal(await place(rooms[1]!, 'user-1'), b, 'still reserved 29 s later');
    now += 1001;
    await announce();
    assert.equal(await place(rooms[2]!, 'user-1'), a, 'the reservation ran out');
  });

  it('sends a user whose session is live (or reserved) back to its node, whatever the loads', async () => {
    const { directory, nodes, loads, announce, place } = await deployment({ capacity: 1, spill: true });
    const room = 'back';
    const first = await place(room, 'alice');
    const other = nodes.find((n) => n.id !== first)!.id;
    assert.equal(await place(room, 'bob'), other, 'spilled: the first node is full');
    assert.equal(await place(room, 'bob'), other, 'bob\'s reservation sends him back');
    loads.set(first, { sessions: 1, users: [`prj_1\n${room}\nalice`] });
    loads.set(other, { sessions: 1, users: [`prj_1\n${room}\nbob`] });
    await announce();
    now += RESERVATION_MS;
    await announce();
    for (let i = 0; i < 3; i++) {
      assert.equal(await place(room, 'alice'), first, 'alice is live there: a renewal token names her node');
      assert.equal(await place(room, 'bob'), other);
    }
    assert.equal(directory.overCapacityPlacements(), 0, 'a user going back to its node is not a placement over capacity');
  });
}
