/**
 * The Redis room state (server/src/signaling/redis-rooms.ts) driven directly, on one real Redis and
 * a clock the test moves: expiry at a session's exp, and replay within the retention window.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRedisRoomState } from '../../server/src/signaling/redis-rooms.ts';
import { defaultSignalingSettings, type SignalingSettings } from '../../server/src/signaling/settings.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

const ISSUER = 'rtc-platform';
const PROJECT = `prj_${'A'.repeat(22)}`;
const GRACE_MS = 1000;
const SETTINGS: SignalingSettings = { ...defaultSignalingSettings(ISSUER), presenceGraceMs: GRACE_MS, maxSessionsPerRoom: 3 };

describe('the Redis room state on a clock the test moves', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis.dispose();
  });

  class Sink {
    readonly frames: string[] = [];
    ended = false;
    readonly #waiters = new Set<() => void>();
    write(frame: string): boolean {
      this.frames.push(frame);
      for (const w of [...this.#waiters]) w();
      return true;
    }
    end(): void {
      this.ended = true;
      for (const w of [...this.#waiters]) w();
    }
    events(): string[] {
      return this.frames.map((f) => /^event: (.*)$/m.exec(f)![1]!);
    }
    /** Resolves once `done()` holds after a write or the end; rejects after 5 s. */
    until(done: () => boolean, what: string): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          this.#waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.frames)}`));
        }, 5000);
        const check = (): void => {
          if (!done()) return;
          clearTimeout(timer);
          this.#waiters.delete(check);
          resolve();
        };
        this.#waiters.add(check);
        check();
      });
    }
  }

  it('ends an expired session\'s streams on every node at its exp, and the room sees it leave once', async () => {
    let nowMs = Date.now();
    const clock = { nowMs: () => nowMs };
    // a grace longer than the clock's jump: only the token's expiry ends a session here
    const settings = { ...SETTINGS, presenceGraceMs: 60_000 };
    const open = () => createRedisRoomState({ target: redis.url, settings, clock, onError: () => {}, sweepMs: 20, prefix: 'expiry' });
    const [roomsA, roomsB] = [open(), open()];
    try {
      await Promise.all([roomsA.ready(), roomsB.ready()]);
      const identity = (user: string, ttlSec: number) => ({ grantId: `x-${user}`, projectId: PROJECT, roomId: 'r', userId: user,
        role: 'participant' as const, issuedAt: Math.floor(nowMs / 1000), expiresAt: Math.floor(nowMs / 1000) + ttlSec });
      const alice = identity('alice', 5);
      const bob = identity('bob', 3600);
      const carol = identity('carol', 3600);
      for (const who of [alice, bob, carol]) await roomsA.join(who);
      const aliceOnA = new Sink();
      const aliceOnB = new Sink();
      const carolOnB = new Sink();
      await roomsA.openStream(alice, undefined, aliceOnA);
      await roomsB.openStream(alice, undefined, aliceOnB);
      await roomsB.openStream(carol, undefined, carolOnB);

      nowMs += 6000;
      for (const sink of [aliceOnA, aliceOnB]) {
        await sink.until(() => sink.ended, 'the end of the stream');
        assert.equal(sink.events().at(-1), 'expired');
      }
      await carolOnB.until(() => carolOnB.events().includes('leave'), 'alice leaving');
      // whatever either node's sweep did, the log holds one leave before this message
      await roomsA.send(bob, '{"n":1}', undefined);
      await carolOnB.until(() => carolOnB.events().includes('message'), 'the message after');
      const leaves = carolOnB.frames.filter((f) => f.includes('event: leave'));
      assert.equal(leaves.length, 1);
      assert.match(leaves[0]!, /"user_id":"alice","reason":"expired"/);
      assert.deepEqual((await roomsA.participants(PROJECT, 'r')).map((p) => p.user_id), ['bob', 'carol']);
    } finally {
      roomsA.close();
      roomsB.close();
    }
  });

  it('replays within the last events and the last milliseconds, and answers a reset snapshot beyond them', async () => {
    let nowMs = 1_700_000_000_000;
    const clock = { nowMs: () => nowMs };
    const settings = { ...SETTINGS, retention: { events: 3, ms: 10_000 } };
    const rooms = createRedisRoomState({ target: redis.url, settings, clock, onError: () => {}, sweepMs: 60_000 });
    await rooms.ready();
    try {
      const identity = (user: string) => ({ grantId: `g-${user}`, projectId: PROJECT, roomId: 'r', userId: user, role: 'participant' as const,
        issuedAt: Math.floor(nowMs / 1000), expiresAt: Math.floor(nowMs / 1000) + 3600 });
      const alice = identity('alice');
      const bob = identity('bob');
      await rooms.join(alice);
      const joined = await rooms.join(bob);
      const ids: string[] = [];
      for (let n = 0; n < 4; n++) ids.push((await rooms.send(alice, `{"n":${n}}`, undefined)).id);

      // the last 3 events are kept: resuming from the first message's id misses nothing kept
      const inWindow = new Sink();
      (await rooms.openStream(bob, ids[0], inWindow))();
      assert.deepEqual(inWindow.events(), ['message', 'message', 'message', 'ready']);
      const beyond = new Sink();
      (await rooms.openStream(bob, joined.last_event_id, beyond))();
      assert.deepEqual(beyond.events(), ['snapshot', 'ready']);
      assert.match(beyond.frames[0]!, /"reset":true/);

      // 10 s later the same events have aged out
      nowMs += 10_001;
      const aged = new Sink();
      (await rooms.openStream(bob, ids[2], aged))();
      assert.deepEqual(aged.events(), ['snapshot', 'ready']);
      const head = new Sink();
      (await rooms.openStream(bob, ids[3], head))();
      assert.deepEqual(head.events(), ['ready']);
    } finally {
      rooms.close();
    }
  });
});
