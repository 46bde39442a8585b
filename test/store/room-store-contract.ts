import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { LiveQuality, LiveStream, RoomRecord } from '../../server/src/rooms/store.ts';
import type { Store } from '../../server/src/store/port.ts';

const uid = (prefix: string): string => `${prefix}_${randomBytes(11).toString('hex')}`;

/**
 * The room module's part of the store contract (store-contract.ts): live participants on the media
 * nodes seen recently, their published streams, quality and metadata, room settings and occupancy,
 * and room cut-offs (removals and ended rooms).
 */
export function describeRoomStoreContract(stores: () => { readonly store: Store; readonly other: Store }): void {
  describe('live participants', () => {
    const participant = (projectId: string, roomId: string, mediaNode: string, joinedAt: number) => ({
      participantId: uid('pa'), projectId, roomId, userId: uid('u'), role: 'speaker', publishStreams: [1, 2],
      subscribeStreams: [], subscribeRoom: true, joinedAt, roomStartedAt: joinedAt - 5, mediaNode,
      grants: [{ grantId: uid('g'), expiresAt: joinedAt + 600 }], metadata: '', attributes: {}, streams: [] as LiveStream[],
      quality: null as LiveQuality | null,
    });
    /** A participant of a new project's room-1 on a media node seen at `now`, recorded in `store`. */
    const joined = async (store: Store, now: number) => {
      const node = `${uid('n')}:443`;
      await store.heartbeatMediaNode(node, now);
      const p = participant(uid('prj'), 'room-1', node, now);
      await store.upsertLiveParticipant(p);
      return { p, node };
    };

    it('lists the participants of nodes seen recently, oldest join first, and forgets a node cleared or not seen', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const projectId = uid('prj');
      const [nodeA, nodeB] = [`${uid('a')}:443`, `${uid('b')}:443`];
      await store.heartbeatMediaNode(nodeA, now);
      await other.heartbeatMediaNode(nodeB, now - 100);
      const late = participant(projectId, 'room-1', nodeA, now + 2);
      const early = participant(projectId, 'room-2', nodeA, now + 1);
      const stale = participant(projectId, 'room-1', nodeB, now);
      for (const p of [late, early, stale]) await store.upsertLiveParticipant(p);
      await store.upsertLiveParticipant(participant(uid('prj'), 'room-1', nodeA, now));
      assert.deepEqual(await other.listLiveParticipants(projectId, undefined, now - 30), [early, late]);
      assert.deepEqual(await other.listLiveParticipants(projectId, 'room-1', now - 30), [late]);
      assert.deepEqual(await other.listLiveParticipants(projectId, 'room-1', now - 100), [stale, late]);
      // a renewal replaces the grants and permissions, never who or where
      const renewed = { ...late, publishStreams: [1], grants: [...late.grants, { grantId: uid('g'), expiresAt: now + 900 }] };
      await store.upsertLiveParticipant({ ...renewed, userId: 'other', joinedAt: 1 });
      assert.deepEqual(await other.listLiveParticipants(projectId, 'room-1', now - 30), [renewed]);
      assert.equal(await store.purgeMediaNodes(now - 30), 1);
      assert.deepEqual(await other.listLiveParticipants(projectId, 'room-1', 0), [renewed]);
      await store.clearMediaNode(nodeA);
      await store.heartbeatMediaNode(nodeA, now);
      assert.deepEqual(await other.listLiveParticipants(projectId, undefined, 0), []);
    });

    it('agrees once on a room\'s start and finish over the nodes that open and close it, ignoring a node not seen or cleared', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const projectId = uid('prj');
      const [a, b, dead] = [`${uid('a')}:443`, `${uid('b')}:443`, `${uid('d')}:443`];
      for (const node of [a, b]) await store.heartbeatMediaNode(node, now);
      await store.heartbeatMediaNode(dead, now - 100);
      assert.equal(await other.openRoomOnNode(projectId, 'span', dead, now - 100), true);
      // two nodes open the room at once: one starts it
      const opened = await Promise.all([store.openRoomOnNode(projectId, 'span', a, now - 30), other.openRoomOnNode(projectId, 'span', b, now - 30)]);
      assert.deepEqual(opened.filter(Boolean).length, 1, 'a node not seen since the bound holds nothing');
      assert.equal(await store.openRoomOnNode(projectId, 'span', a, now - 30), false, 'opened again while b holds it');
      assert.equal(await store.openRoomOnNode(uid('prj'), 'span', a, now - 30), true, 'the same room id in another project');
      // both close at once: one finishes it
      const closed = await Promise.all([store.closeRoomOnNode(projectId, 'span', a, now - 30), other.closeRoomOnNode(projectId, 'span', b, now - 30)]);
      assert.deepEqual(closed.filter(Boolean).length, 1);
      await other.openRoomOnNode(projectId, 'again', b, now - 30);
      await store.clearMediaNode(b);
      assert.equal(await store.openRoomOnNode(projectId, 'again', a, now - 30), true, 'a cleared node holds no room');
    });

    it('changes the permissions of a row and deletes it; both do nothing for a participant without a row', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const { p } = await joined(store, now);
      const permissions = { publishStreams: [], subscribeStreams: [7], subscribeRoom: false };
      const updated = { ...p, ...permissions };
      assert.deepEqual(await other.updateLiveParticipant(p.participantId, permissions), updated);
      assert.deepEqual(await store.listLiveParticipants(p.projectId, undefined, now), [updated]);
      await other.deleteLiveParticipant(p.participantId);
      assert.equal(await store.updateLiveParticipant(p.participantId, permissions), undefined);
      await other.deleteLiveParticipant(p.participantId);
      assert.deepEqual(await store.listLiveParticipants(p.projectId, undefined, 0), []);
    });

    it('records what a participant publishes, mutes one stream of it, and does nothing for a row or stream that is not there', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const { p } = await joined(store, now);
      const streams: LiveStream[] = [
        { streamId: 2, kind: 'video', source: 'camera', muted: false, layers: [
          { rid: 'q', width: 320, height: 180, bitrate: 150_000 }, { rid: 'h', width: null, height: null, bitrate: null }] },
        { streamId: 1, kind: 'audio', source: 'unknown', muted: false, layers: [] },
      ];
      await other.setLiveStreams(p.participantId, streams);
      assert.deepEqual(await store.listLiveParticipants(p.projectId, undefined, now), [{ ...p, streams }]);
      const muted = { ...p, streams: [streams[0]!, { ...streams[1]!, muted: true }] };
      assert.deepEqual(await store.muteLiveStream(p.participantId, 1, true), muted);
      assert.deepEqual(await other.listLiveParticipants(p.projectId, undefined, now), [muted]);
      assert.equal(await store.muteLiveStream(p.participantId, 3, true), undefined);
      // a renewal's upsert carries the streams the media node holds
      await store.upsertLiveParticipant({ ...p, streams: [streams[0]!] });
      assert.deepEqual((await other.listLiveParticipants(p.projectId, undefined, now))[0]?.streams, [streams[0]]);
      await other.deleteLiveParticipant(p.participantId);
      await store.setLiveStreams(p.participantId, streams);
      assert.equal(await other.muteLiveStream(p.participantId, 2, true), undefined);
      assert.deepEqual(await store.listLiveParticipants(p.projectId, undefined, 0), []);
    });

    it('records a participant\'s quality, null until set, which a media node\'s upsert (a renewal) keeps', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const { p } = await joined(store, now);
      assert.equal((await other.listLiveParticipants(p.projectId, undefined, now))[0]?.quality, null);
      const quality: LiveQuality = {
        bitrateIn: 1_200_000, bitrateOut: 56_000, packetLossIn: 0.012, packetLossOut: null, rttMs: 40, layers: { 2: 'h' }, updatedAt: now,
      };
      await other.setLiveQuality(p.participantId, quality);
      assert.deepEqual(await store.listLiveParticipants(p.projectId, undefined, now), [{ ...p, quality }]);
      await store.upsertLiveParticipant({ ...p, publishStreams: [1] });
      assert.deepEqual((await other.listLiveParticipants(p.projectId, undefined, now))[0]?.quality, quality);
      const next = { ...quality, bitrateIn: 0, packetLossIn: null, rttMs: null, layers: {}, updatedAt: now + 10 };
      await store.setLiveQuality(p.participantId, next);
      assert.deepEqual((await other.updateLiveParticipant(p.participantId, { publishStreams: [], subscribeStreams: [], subscribeRoom: true }))?.quality, next);
      await other.deleteLiveParticipant(p.participantId);
      await store.setLiveQuality(p.participantId, quality);
      assert.deepEqual(await store.listLiveParticipants(p.projectId, undefined, 0), []);
    });

    it('replaces metadata and merges attributes, which a media node\'s upsert (a renewal) keeps', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const { p } = await joined(store, now);
      const first = await other.updateLiveParticipantMetadata(p.participantId, { metadata: '{"seat":3}', attributes: { hand: 'up', mood: 'ok' } });
      assert.deepEqual(first, { ...p, metadata: '{"seat":3}', attributes: { hand: 'up', mood: 'ok' } });
      // null and '' delete; a new key joins; metadata left out stays
      const second = await store.updateLiveParticipantMetadata(p.participantId, { attributes: { hand: null, mood: '', lang: 'fr' } });
      assert.deepEqual(second, { ...p, metadata: '{"seat":3}', attributes: { lang: 'fr' } });
      await store.upsertLiveParticipant({ ...p, publishStreams: [1] });
      assert.deepEqual(await other.listLiveParticipants(p.projectId, undefined, now),
        [{ ...p, publishStreams: [1], metadata: '{"seat":3}', attributes: { lang: 'fr' } }]);
      await Promise.all([
        store.updateLiveParticipantMetadata(p.participantId, { attributes: { a: '1' } }),
        other.updateLiveParticipantMetadata(p.participantId, { attributes: { b: '2' } }),
      ]);
      assert.deepEqual((await store.listLiveParticipants(p.projectId, undefined, now))[0]?.attributes, { lang: 'fr', a: '1', b: '2' });
      await store.deleteLiveParticipant(p.participantId);
      assert.equal(await other.updateLiveParticipantMetadata(p.participantId, { metadata: 'x' }), undefined);
    });
  });

  describe('room settings', () => {
    const room = (projectId: string, roomId: string, fields: Partial<RoomRecord> = {}): RoomRecord => ({
      projectId, roomId, metadata: '', maxParticipants: 0, emptyTimeout: 60, createdAt: 1_000, emptiedAt: 1_000, ...fields,
    });

    it('creates a room once, lists the live ones by room id, and replaces an expired one', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const a = room(projectId, 'b-room', { metadata: 'm', maxParticipants: 4 });
      assert.deepEqual(await store.createRoom(a, 1_000), { room: a, created: true });
      assert.deepEqual(await other.createRoom({ ...a, metadata: 'other' }, 1_010), { room: a, created: false });
      const b = room(projectId, 'a-room', { emptiedAt: null });
      await other.createRoom(b, 1_000);
      await store.createRoom(room(uid('prj'), 'a-room'), 1_000);
      assert.deepEqual(await store.listRoomRecords(projectId, undefined, 1_059), [b, a]);
      assert.deepEqual(await store.listRoomRecords(projectId, ['b-room', 'nope'], 1_059), [a]);
      assert.deepEqual(await other.getRoomRecord(projectId, 'b-room', 1_059), a);
      // empty for its whole empty_timeout: expired, gone from every read, replaced by a new room
      assert.deepEqual(await store.listRoomRecords(projectId, undefined, 1_060), [b]);
      assert.equal(await other.getRoomRecord(projectId, 'b-room', 1_060), undefined);
      assert.equal(await other.updateRoom(projectId, 'b-room', { metadata: 'late' }, 1_060), undefined);
      const again = room(projectId, 'b-room', { createdAt: 1_100, emptiedAt: 1_100, metadata: 'new' });
      assert.deepEqual(await store.createRoom(again, 1_100), { room: again, created: true });
    });

    it('changes settings, follows occupancy and purges expired rooms', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const r = room(projectId, 'r', { emptyTimeout: 10 });
      await store.createRoom(r, 1_000);
      assert.deepEqual(await other.updateRoom(projectId, 'r', { metadata: 'x', maxParticipants: 2 }, 1_005),
        { ...r, metadata: 'x', maxParticipants: 2 });
      assert.deepEqual(await other.updateRoom(projectId, 'r', { emptyTimeout: 30 }, 1_005),
        { ...r, metadata: 'x', maxParticipants: 2, emptyTimeout: 30 });
      // occupied: live however long ago it was created
      await store.setRoomEmptiedAt(projectId, 'r', null, 1_020);
      assert.equal((await other.getRoomRecord(projectId, 'r', 5_000))?.emptiedAt, null);
      await store.setRoomEmptiedAt(projectId, 'r', 5_000, 5_000);
      assert.equal((await other.getRoomRecord(projectId, 'r', 5_029))?.emptiedAt, 5_000);
      assert.equal(await store.purgeRoomRecords(5_029) >= 0, true);
      assert.notEqual(await other.getRoomRecord(projectId, 'r', 5_029), undefined);
      assert.equal(await store.purgeRoomRecords(5_030) >= 1, true);
      assert.equal(await other.getRoomRecord(projectId, 'r', 0), undefined);
      // an expired room is not brought back by a late occupancy write
      await store.createRoom(room(projectId, 's', { emptyTimeout: 1 }), 1_000);
      await store.setRoomEmptiedAt(projectId, 's', null, 2_000);
      assert.equal(await other.getRoomRecord(projectId, 's', 2_000), undefined);
    });
  });

  describe('rooms created ahead and room pages', () => {
    const room = (projectId: string, roomId: string, fields: Partial<RoomRecord> = {}): RoomRecord => ({
      projectId, roomId, metadata: '', maxParticipants: 0, emptyTimeout: 600, createdAt: 1_000, emptiedAt: 1_000, ...fields,
    });

    it('caps a project\'s rooms created ahead that have not started nor expired, and purges those that expired', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const a = room(projectId, 'a', { emptyTimeout: 10 });
      assert.deepEqual(await store.createRoom(a, 1_000, 2), { room: a, created: true });
      assert.deepEqual(await other.createRoom(room(projectId, 'b'), 1_000, 2), { room: room(projectId, 'b'), created: true });
      assert.equal(await store.createRoom(room(projectId, 'c'), 1_000, 2), undefined, 'at the cap');
      // a room already stored is answered, the cap notwithstanding; another project has its own cap; an occupied room is not ahead
      assert.deepEqual(await other.createRoom(room(projectId, 'b', { metadata: 'x' }), 1_001, 2), { room: room(projectId, 'b'), created: false });
      assert.equal((await store.createRoom(room(uid('prj'), 'c'), 1_000, 2))?.created, true);
      assert.equal((await store.createRoom(room(projectId, 'live', { emptiedAt: null }), 1_000, 2))?.created, true);
      // a room somebody joined has started: it no longer counts, even once empty again
      await other.setRoomEmptiedAt(projectId, 'b', null, 1_002);
      await other.setRoomEmptiedAt(projectId, 'b', 1_003, 1_003);
      assert.equal((await store.createRoom(room(projectId, 'c'), 1_004, 2))?.created, true);
      assert.equal(await store.createRoom(room(projectId, 'd'), 1_004, 2), undefined);
      // one that expired no longer counts, and is purged
      assert.equal((await other.createRoom(room(projectId, 'd', { createdAt: 1_010, emptiedAt: 1_010 }), 1_010, 2))?.created, true);
      assert.equal(await store.purgeRoomRecords(1_010) >= 1, true);
      assert.equal(await other.getRoomRecord(projectId, 'a', 0), undefined);
      assert.deepEqual((await store.listRoomRecords(projectId, undefined, 1_010)).map((r) => r.roomId), ['b', 'c', 'd', 'live']);
    });

    it('reads one page of room ids (participants on nodes seen, and rooms kept empty), by room id, never more than asked', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const projectId = uid('prj');
      const [node, gone] = [`${uid('n')}:443`, `${uid('g')}:443`];
      await store.heartbeatMediaNode(node, now);
      await store.heartbeatMediaNode(gone, now - 100);
      const enter = (roomId: string, mediaNode = node) => other.upsertLiveParticipant({
        participantId: uid('pa'), projectId, roomId, userId: uid('u'), role: 'speaker', publishStreams: [], subscribeStreams: [],
        subscribeRoom: true, joinedAt: now, roomStartedAt: now, mediaNode, grants: [], metadata: '', attributes: {}, streams: [],
      });
      // even rooms have a participant (r00 two), rooms 3 to 8 are stored empty too
      const expected = ['r00', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07', 'r08', 'r10'];
      for (let i = 0; i < 12; i++) {
        const roomId = `r${String(i).padStart(2, '0')}`;
        if (i % 2 === 0) await enter(roomId);
        if (i >= 3 && i <= 8) await store.createRoom(room(projectId, roomId, { createdAt: now, emptiedAt: now }), now);
      }
      await enter('r00');
      // not listed: a participant on a node not seen, a room marked occupied without a participant, an expired room, another project's
      await enter('a-stale', gone);
      await store.createRoom(room(projectId, 'a-between', { emptiedAt: null }), now);
      await store.createRoom(room(projectId, 'a-expired', { createdAt: now - 700, emptiedAt: now - 700 }), now - 700);
      await store.createRoom(room(uid('prj'), 'a-other', { createdAt: now, emptiedAt: now }), now);
      const seenSince = now - 30;
      const walk: string[] = [];
      for (let afterId: string | undefined; ;) {
        const page = await other.listRoomIds(projectId, { afterId, limit: 4, seenSince }, now);
        assert.ok(page.length <= 4);
        walk.push(...page);
        if (page.length < 4) break;
        afterId = page[page.length - 1];
      }
      assert.deepEqual(walk, expected);
      assert.deepEqual(await store.listRoomIds(projectId, { limit: 3, seenSince }, now), expected.slice(0, 3));
      assert.deepEqual(await store.listRoomIds(projectId, { afterId: 'r05', roomIds: ['r01', 'r06', 'r07', 'a-stale', 'nope'], limit: 10, seenSince }, now),
        ['r06', 'r07']);
      // the participants of the rooms of a page, and of those only
      const participants = await store.listLiveParticipants(projectId, ['r00', 'r02', 'r03'], seenSince);
      assert.deepEqual(participants.map((p) => p.roomId).sort(), ['r00', 'r00', 'r02']);
    });
  });

  describe('permissions set on grants', () => {
    it('keeps each grant\'s permissions until it expires, for its own project only, the newest change winning', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const [g1, g2] = [uid('g'), uid('g')];
      const none = { publishStreams: [], subscribeStreams: [3], subscribeRoom: false, setAt: 5_000 };
      await store.putGrantPermissions([
        { grantId: g1, projectId, expiresAt: 1_100, ...none },
        { grantId: g2, projectId, expiresAt: 1_200, publishStreams: [1], subscribeStreams: [], subscribeRoom: true, setAt: 5_000 },
      ]);
      await store.putGrantPermissions([]);
      assert.deepEqual(await other.grantPermissions(projectId, g1, 1_099), none);
      assert.equal(await other.grantPermissions(projectId, g1, 1_100), undefined, 'expired with its grant');
      assert.equal(await other.grantPermissions(uid('prj'), g2, 1_000), undefined, 'another project\'s');
      const again = { publishStreams: [], subscribeStreams: [], subscribeRoom: true, setAt: 1_700_000_000_000 };
      await other.putGrantPermissions([{ grantId: g2, projectId, expiresAt: 1_200, ...again }]);
      // another project cannot overwrite them, nor an older change stored late
      await other.putGrantPermissions([{
        grantId: g2, projectId: uid('prj'), expiresAt: 9_999, publishStreams: [9], subscribeStreams: [], subscribeRoom: true, setAt: 1_800_000_000_000,
      }]);
      await store.putGrantPermissions([{ grantId: g2, projectId, expiresAt: 1_200, publishStreams: [1], subscribeStreams: [], subscribeRoom: true, setAt: 6_000 }]);
      assert.deepEqual(await store.grantPermissions(projectId, g2, 1_000), again);
      assert.ok(await store.purgeGrantPermissions(1_100) >= 1);
      assert.deepEqual(await store.grantPermissions(projectId, g2, 1_000), again);
    });
  });

  describe('room cut-offs (removals and ended rooms)', () => {
    it('keeps the later cut-off per user and per room, answers the latest covering a user, lists and purges by expiry', async () => {
      const { store, other } = stores();
      const now = 2_000_000_000;
      const projectId = uid('prj');
      const cut = (userId: string | null, cutAt: number, expiresAt = cutAt + 3660) => ({ projectId, roomId: 'r1', userId, cutAt, expiresAt });
      assert.deepEqual(await store.insertRoomCutoff(cut('carol', now + 600)), cut('carol', now + 600));
      // a later removal without a ban does not shorten the ban: the stored cut-off is answered
      assert.deepEqual(await other.insertRoomCutoff(cut('carol', now)), cut('carol', now + 600));
      assert.equal(await other.roomCutoff(projectId, 'r1', 'carol'), now + 600);
      assert.equal(await store.roomCutoff(projectId, 'r1', 'dave'), undefined);
      assert.equal(await store.roomCutoff(projectId, 'r2', 'carol'), undefined);
      await store.insertRoomCutoff(cut(null, now + 700));
      assert.equal(await store.roomCutoff(projectId, 'r1', 'dave'), now + 700, 'the room\'s cut-off covers every user');
      assert.equal(await store.roomCutoff(projectId, 'r1', 'carol'), now + 700, 'the later of the user\'s and the room\'s');
      const expired = { ...cut('erin', now - 4000), expiresAt: now - 1 };
      await store.insertRoomCutoff(expired);
      const listed = (await store.listRoomCutoffs(now)).filter((c) => c.projectId === projectId);
      assert.deepEqual(listed.sort((a, b) => a.cutAt - b.cutAt), [cut('carol', now + 600), cut(null, now + 700)]);
      assert.equal(await store.purgeRoomCutoffs(now), 1);
      assert.equal(await store.roomCutoff(projectId, 'r1', 'erin'), now + 700);
    });
  });
}
