import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import type { ServerControl } from '@rtc/protocol';
import { createMemoryBus } from '../../bus/memory.ts';
import type { EventBus } from '../../core/ports.ts';
import { Room, type Member } from '../room/room.ts';
import { RoomSpan, SPAN_SWEEP_AFTER_MS } from './room-span.ts';

interface Local extends Member {
  readonly got: ServerControl[];
}

function member(userId: string): Local {
  const got: ServerControl[] = [];
  return {
    got, participantId: `pa_${userId}`, userId, role: 'speaker', metadata: '', attributes: {}, published: new Map(),
    account: { rtpIn: () => undefined, rtpOut: () => undefined }, keyFrames: undefined,
    canSubscribe: () => true, sendControl: (m) => got.push(m), pushMedia: () => undefined, downTrack: () => undefined,
  };
}

/** Resolves once `check` holds, looked at after each turn of the event loop (the memory bus delivers at once). */
async function settled(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; !check(); i++) {
    assert.ok(i < 10_000, what);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('a room\'s members over several media nodes (RoomSpan)', () => {
  const spans: RoomSpan[] = [];
  after(() => {
    for (const s of spans) s.close();
  });
  let now = 1_000_000;
  /** A node holding `room` (or nothing) on `bus`. */
  const node = (bus: EventBus, id: string, room: Room | undefined, listed: ReadonlySet<string> = new Set(), confirmMs?: number): RoomSpan => {
    const span = new RoomSpan({
      bus, nodeId: id, logger: pino({ level: 'silent' }), now: () => now, confirmMs,
      room: (projectId, roomId) => (room && room.projectId === projectId && room.roomId === roomId ? room : undefined),
      rooms: () => (room ? [room] : []), listed: async () => listed,
    });
    spans.push(span);
    return span;
  };
  const types = (m: Local): string[] => m.got.map((c) => c.type);

  it('shows each node\'s members to the other\'s as they join, change and leave; a node the room opens on learns the others\'', async () => {
    const bus = createMemoryBus((err) => assert.fail(String(err)));
    const [roomA, roomB] = [new Room('prj_1', 'r', () => now), new Room('prj_1', 'r', () => now)];
    const spanB = node(bus, 'b:1', roomB);
    node(bus, 'c:1', undefined);
    const b1 = member('b1');
    roomB.add(b1);
    spanB.joined(roomB, b1);
    // the room opens on A after B's announcement: A learns B's members by asking
    const spanA = node(bus, 'a:1', roomA);
    const a1 = member('a1');
    roomA.add(a1);
    spanA.joined(roomA, a1);
    // B hears A's first member, and answers A's ask with its own; C holds no room and stays silent
    await settled(() => roomA.remote.has('pa_b1') && roomB.remote.has('pa_a1'), 'each node knows the other\'s member');
    assert.deepEqual(b1.got, [{ type: 'participant_joined', participant: { participant_id: 'pa_a1', user_id: 'a1', role: 'speaker', metadata: '', attributes: {} } }]);
    assert.deepEqual(types(a1), ['participant_joined']);
    assert.deepEqual(roomA.snapshot(member('a2')).participants.map((p) => p.user_id).sort(), ['a1', 'b1'], 'a `joined` lists both nodes\' members');
    assert.equal(roomA.participantCount, 2);

    a1.metadata = 'host';
    a1.attributes = { hand: 'up' };
    spanA.changed(roomA, a1);
    await settled(() => b1.got.length === 2, 'the change crossed');
    assert.deepEqual(b1.got[1], { type: 'participant_metadata', participant_id: 'pa_a1', user_id: 'a1', metadata: 'host', attributes: { hand: 'up' } });
    // the same values again tell nobody anything
    spanA.changed(roomA, a1);
    roomA.remove(a1);
    spanA.left(roomA, a1);
    await settled(() => b1.got.length === 3, 'the leave crossed');
    assert.deepEqual(b1.got[2], { type: 'participant_left', participant_id: 'pa_a1', user_id: 'a1' });
    assert.equal(roomB.remote.size, 0);
  });

  it('counts the whole room against max_participants, and the node\'s own bound against its members', () => {
    const room = new Room('prj_1', 'full', () => now, { metadata: '', maxParticipants: 2, emptyTimeout: 0 });
    room.add(member('x'));
    assert.equal(room.isFull(), false);
    room.remote.set('pa_y', { participantId: 'pa_y', userId: 'y', role: 'speaker', metadata: '', attributes: {}, node: 'b:1' });
    assert.equal(room.isFull(), true);
  });

  it('drops a member read from the store that its node does not confirm, and keeps one it does', async () => {
    const bus = createMemoryBus((err) => assert.fail(String(err)));
    const room = new Room('prj_1', 'seeded', () => now);
    const span = node(bus, 'a:1', room, new Set(), 20);
    const seeded = (id: string, n: string) => ({ participantId: `pa_${id}`, userId: id, role: 'speaker' as const, metadata: '', attributes: {}, node: n });
    span.seed(room, [seeded('gone', 'b:1'), seeded('here', 'c:1'), seeded('self', 'a:1')]);
    assert.deepEqual([...room.remote.keys()], ['pa_gone', 'pa_here'], 'this node\'s own rows are its members, not others');
    const a1 = member('a1');
    room.add(a1);
    span.joined(room, a1);
    await bus.publish({ type: 'media.members', projectId: 'prj_1', roomId: 'seeded', node: 'c:1', members: [seeded('here', 'c:1')], left: [], whole: true, ask: false });
    await settled(() => !room.remote.has('pa_gone'), 'the unconfirmed member dropped');
    assert.deepEqual([...room.remote.keys()], ['pa_here']);
    assert.deepEqual(a1.got, [{ type: 'participant_left', participant_id: 'pa_gone', user_id: 'gone' }]);
  });

  it('drops a member of another node once the store no longer lists it and it was known long enough (its node died)', () => {
    const bus = createMemoryBus((err) => assert.fail(String(err)));
    const room = new Room('prj_1', 'died', () => now);
    const span = node(bus, 'a:1', room);
    const a1 = member('a1');
    room.add(a1);
    const other = (id: string) => ({ participantId: `pa_${id}`, userId: id, role: 'speaker' as const, metadata: '', attributes: {} });
    void bus.publish({ type: 'media.members', projectId: 'prj_1', roomId: 'died', node: 'b:1', members: [other('dead'), other('alive')], left: [], whole: false, ask: false });
    assert.equal(room.remote.size, 2);
    now += SPAN_SWEEP_AFTER_MS - 1;
    span.sweep(room, new Set(['pa_alive']));
    assert.equal(room.remote.size, 2, 'a row not written yet is no proof');
    now += 1;
    span.sweep(room, new Set(['pa_alive']));
    assert.deepEqual([...room.remote.keys()], ['pa_alive']);
    assert.deepEqual(a1.got.at(-1), { type: 'participant_left', participant_id: 'pa_dead', user_id: 'dead' });
  });
});
