/**
 * The media hub's own bookkeeping, on a fake store and fake members: rooms keyed by project and
 * room id, the live counts the metrics read, and plain HTTP on a path that is not the media path.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { createMemoryBus } from '../../bus/memory.ts';
import type { Member } from '../room/member.ts';
import { MediaHub, type MediaHubOptions } from './hub.ts';

const none = async (): Promise<undefined> => undefined;
const nothing = async (): Promise<never[]> => [];
const done = async (): Promise<void> => undefined;

const store: MediaHubOptions['store'] = {
  isRevoked: async () => false, listRevocations: nothing, projectCutoff: none, listProjectCutoffs: nothing,
  roomCutoff: none, listRoomCutoffs: nothing, getRoomRecord: none, grantPermissions: none,
  upsertLiveParticipant: done, deleteLiveParticipant: done, setLiveStreams: done, setLiveQuality: done,
  heartbeatMediaNode: done, clearMediaNode: done, purgeMediaNodes: async () => 0, openRoomOnNode: async () => true, closeRoomOnNode: async () => true,
  listLiveParticipants: nothing,
  setRoomEmptiedAt: done, purgeRoomRecords: async () => 0, putGrantPermissions: done, purgeGrantPermissions: async () => 0,
  openMediaSession: done, closeMediaSession: done,
};

async function hub(): Promise<MediaHub> {
  return MediaHub.create({
    keys: { verifying: new Map(), masters: new Map(), issuer: 'test' },
    store,
    bus: createMemoryBus(() => undefined),
    clock: { nowMs: () => 1_000_000 },
    logger: pino({ level: 'silent' }),
  });
}

function member(userId: string, subscribes: boolean): Member {
  return {
    participantId: `pa_${userId}`, userId, role: 'speaker', metadata: '', attributes: {}, published: new Map(),
    account: { rtpIn: () => undefined, rtpOut: () => undefined }, keyFrames: undefined,
    canSubscribe: () => subscribes, sendControl: () => undefined, pushMedia: () => undefined, downTrack: () => undefined,
  };
}

describe('the media hub', () => {
  it('keys rooms by project and room id, and drops a room once empty', async () => {
    const h = await hub();
    try {
      const room = h.roomFor('prj_a', 'r1');
      assert.equal(h.roomFor('prj_a', 'r1'), room);
      assert.notEqual(h.roomFor('prj_b', 'r1'), room, 'the same room id in another project is another room');
      assert.equal(h.roomCount, 2);
      room.add(member('u1', true));
      h.dropIfEmpty(room);
      assert.equal(h.roomCount, 2, 'a room with a member stays');
      room.remove([...room.members.values()][0]!);
      h.dropIfEmpty(room);
      assert.equal(h.roomCount, 1);
    } finally {
      await h.close();
    }
  });

  it('counts participants, publishers, subscribers and streams over every room', async () => {
    const h = await hub();
    try {
      const one = h.roomFor('prj_a', 'r1');
      const publisher = member('pub', false);
      const viewer = member('viewer', true);
      one.add(publisher);
      one.add(viewer);
      one.add(member('idle', false));
      assert.equal(one.publish(publisher, 1, 'video').ok, true);
      assert.equal(one.publish(publisher, 2, 'audio').ok, true);
      const two = h.roomFor('prj_a', 'r2');
      const other = member('pub2', true);
      two.add(other);
      two.publish(other, 1, 'audio');
      assert.deepEqual(h.liveCounts(), { participants: 4, publishers: 2, subscribers: 1, streams: 3 });
    } finally {
      await h.close();
    }
  });

  it('answers an upgrade on another path with a plain 404', async () => {
    const h = await hub();
    try {
      const written: string[] = [];
      const socket = Object.assign(new EventEmitter(), { end: (text: string) => written.push(text), destroy: () => undefined });
      h.handleUpgrade({ url: '/elsewhere?x=1' } as IncomingMessage, socket as unknown as Duplex, Buffer.alloc(0));
      assert.match(written[0] ?? '', /^HTTP\/1\.1 404 Not Found\r\n/);
      assert.equal(h.sessionCount, 0);
    } finally {
      await h.close();
    }
  });
});
