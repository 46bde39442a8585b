import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { MediaSessionRecord } from '../../server/src/sessions/store.ts';
import type { Store } from '../../server/src/store/port.ts';

const uid = (prefix: string): string => `${prefix}_${randomBytes(11).toString('hex')}`;
const DAY = 86_400;
// a UTC midnight; seconds beyond 32 bits would not matter here, the schema keeps them as the other tables do
const DAY0 = 1_800_057_600;

/**
 * The session history's part of the store contract (store-contract.ts): sessions opened and closed
 * once, listed newest first a page at a time, seconds per UTC day, closed with their media node, purged.
 */
export function describeSessionStoreContract(stores: () => { readonly store: Store; readonly other: Store }): void {
  describe('media sessions', () => {
    const opened = (projectId: string, fields: Partial<MediaSessionRecord> = {}): Omit<MediaSessionRecord, 'leftAt' | 'reason' | 'usageKind' | 'relayed'> => ({
      participantId: uid('pa'), projectId, roomId: 'room-1', userId: uid('u'), role: 'speaker', mediaNode: 'media-1:7880',
      joinedAt: DAY0 + 100, ...fields,
    });

    it('opens a session once, ends it once, and lists the project\'s newest first with a room filter and pages', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const a = opened(projectId, { joinedAt: DAY0 + 10 });
      const b = opened(projectId, { roomId: 'room-2', joinedAt: DAY0 + 20, mediaNode: null });
      const c = opened(projectId, { joinedAt: DAY0 + 30 });
      for (const s of [a, b, c]) await store.openMediaSession(s);
      await other.openMediaSession({ ...a, joinedAt: 1 });
      await store.openMediaSession(opened(uid('prj')));
      await store.closeMediaSession(a.participantId, DAY0 + 70, 'removed');
      await other.closeMediaSession(a.participantId, DAY0 + 90, 'timeout');
      // a leave stamped before the join (clocks of two processes) ends at the join
      await other.closeMediaSession(b.participantId, DAY0 + 5, 'left');
      assert.deepEqual(await other.getMediaSession(projectId, a.participantId), { ...a, leftAt: DAY0 + 70, reason: 'removed', usageKind: null, relayed: false });
      assert.equal(await other.getMediaSession(uid('prj'), a.participantId), undefined);
      const all = await other.listMediaSessions(projectId, { limit: 10 });
      assert.deepEqual(all, [{ ...c, leftAt: null, reason: null, usageKind: null, relayed: false }, { ...b, leftAt: DAY0 + 20, reason: 'left', usageKind: null, relayed: false }, { ...a, leftAt: DAY0 + 70, reason: 'removed', usageKind: null, relayed: false }]);
      assert.deepEqual((await store.listMediaSessions(projectId, { limit: 1, afterId: c.participantId })).map((s) => s.participantId), [b.participantId]);
      assert.deepEqual((await store.listMediaSessions(projectId, { roomId: 'room-1', limit: 10 })).map((s) => s.participantId),
        [c.participantId, a.participantId]);
      assert.deepEqual(await store.listMediaSessions(projectId, { roomId: 'room-1', afterId: a.participantId, limit: 10 }), []);
    });

    it('adds the seconds of each UTC day, splitting a session over midnight and counting an open one up to now', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const within = opened(projectId, { joinedAt: DAY0 + 100 });
      const overMidnight = opened(projectId, { joinedAt: DAY0 + DAY - 30 });
      const open = opened(projectId, { joinedAt: DAY0 + 2 * DAY + 50 });
      const before = opened(projectId, { joinedAt: DAY0 - 500 });
      for (const s of [within, overMidnight, open, before]) await store.openMediaSession(s);
      await store.closeMediaSession(within.participantId, DAY0 + 160, 'left');
      await store.closeMediaSession(overMidnight.participantId, DAY0 + DAY + 45, 'disconnected');
      await store.closeMediaSession(before.participantId, DAY0 + 20, 'left');
      await store.openMediaSession(opened(uid('prj'), { joinedAt: DAY0 }));
      assert.deepEqual(await other.mediaSecondsPerDay(projectId, DAY0, 4, DAY0 + 2 * DAY + 80), [20 + 60 + 30, 45, 30, 0]);
      assert.deepEqual(await other.mediaSecondsPerDay(uid('prj'), DAY0, 2, DAY0 + DAY), [0, 0]);
      assert.deepEqual(await other.mediaSecondsPerDay(projectId, DAY0, 0, DAY0), []);
    });

    it('keeps the usage kind a session ended with and adds its seconds per day, kind and relay', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const video = opened(projectId, { joinedAt: DAY0 + 100 });
      const relayed = opened(projectId, { joinedAt: DAY0 + DAY - 30 });
      const open = opened(projectId, { joinedAt: DAY0 + 200 });
      const audio = opened(projectId, { joinedAt: DAY0 + 300 });
      for (const s of [video, relayed, open, audio]) await store.openMediaSession(s);
      await store.closeMediaSession(video.participantId, DAY0 + 160, 'left', { usageKind: 'video_hd', relayed: false });
      await store.closeMediaSession(relayed.participantId, DAY0 + DAY + 45, 'left', { usageKind: 'video_hd', relayed: true });
      await store.closeMediaSession(audio.participantId, DAY0 + 310, 'left', { usageKind: 'audio', relayed: false });
      // a session ended already keeps the kind it ended with
      await other.closeMediaSession(video.participantId, DAY0 + 170, 'timeout', { usageKind: 'audio', relayed: true });
      assert.deepEqual(await other.getMediaSession(projectId, video.participantId),
        { ...video, leftAt: DAY0 + 160, reason: 'left', usageKind: 'video_hd', relayed: false });
      assert.deepEqual((await other.getMediaSession(projectId, relayed.participantId))?.relayed, true);
      const rows = await other.mediaSecondsPerDayByKind(projectId, DAY0, 3, DAY0 + 400);
      const key = (r: { dayStart: number; usageKind: string | null; relayed: boolean }): string => `${r.dayStart - DAY0} ${r.usageKind} ${r.relayed}`;
      const found = Object.fromEntries(rows.filter((r) => r.seconds > 0).map((r) => [key(r), r.seconds]));
      assert.deepEqual(found, {
        '0 video_hd false': 60, [`0 video_hd true`]: 30, '0 null false': 200, '0 audio false': 10, [`${DAY} video_hd true`]: 45,
      });
      assert.deepEqual(await other.mediaSecondsPerDayByKind(projectId, DAY0, 0, DAY0), []);
    });

    it('ends the open sessions of a media node cleared or purged as stale at its last heartbeat, and purges ended sessions by age', async () => {
      const { store, other } = stores();
      const projectId = uid('prj');
      const [crashed, restarted, alive] = [`${uid('a')}:443`, `${uid('b')}:443`, `${uid('c')}:443`];
      const lost = opened(projectId, { mediaNode: crashed, joinedAt: DAY0 + 10 });
      const afterBeat = opened(projectId, { mediaNode: crashed, joinedAt: DAY0 + 50 });
      const ended = opened(projectId, { mediaNode: crashed, joinedAt: DAY0 + 5 });
      const onRestarted = opened(projectId, { mediaNode: restarted, joinedAt: DAY0 + 10 });
      const live = opened(projectId, { mediaNode: alive, joinedAt: DAY0 + 10 });
      for (const s of [lost, afterBeat, ended, onRestarted, live]) await store.openMediaSession(s);
      await store.closeMediaSession(ended.participantId, DAY0 + 8, 'left');
      await store.heartbeatMediaNode(crashed, DAY0 + 40);
      await store.heartbeatMediaNode(restarted, DAY0 + 30);
      await store.heartbeatMediaNode(alive, DAY0 + 1000);
      assert.equal(await other.purgeMediaNodes(DAY0 + 500), 2);
      const get = async (s: { participantId: string }) => other.getMediaSession(projectId, s.participantId);
      assert.deepEqual(await get(lost), { ...lost, leftAt: DAY0 + 40, reason: 'node_lost', usageKind: null, relayed: false });
      assert.deepEqual(await get(afterBeat), { ...afterBeat, leftAt: DAY0 + 50, reason: 'node_lost', usageKind: null, relayed: false });
      assert.deepEqual(await get(ended), { ...ended, leftAt: DAY0 + 8, reason: 'left', usageKind: null, relayed: false });
      assert.deepEqual(await get(onRestarted), { ...onRestarted, leftAt: DAY0 + 30, reason: 'node_lost', usageKind: null, relayed: false });
      assert.deepEqual(await get(live), { ...live, leftAt: null, reason: null, usageKind: null, relayed: false });
      // a node that starts again clears what its earlier run left open
      await store.heartbeatMediaNode(alive, DAY0 + 1200);
      await other.clearMediaNode(alive);
      assert.deepEqual(await get(live), { ...live, leftAt: DAY0 + 1200, reason: 'node_lost', usageKind: null, relayed: false });
      const openOne = opened(projectId, { joinedAt: DAY0 });
      await store.openMediaSession(openOne);
      assert.ok(await store.purgeMediaSessions(DAY0 + 41) >= 2);
      assert.equal(await get(ended), undefined);
      assert.equal(await get(lost), undefined);
      assert.ok(await get(afterBeat));
      assert.ok(await get(openOne), 'an open session is never purged');
    });
  });
}
