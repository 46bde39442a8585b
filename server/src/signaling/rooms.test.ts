import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ApiError } from '../core/errors.ts';
import { createRoomRegistry, type EventSink, type RoomSettings } from './rooms.ts';
import type { SessionIdentity } from './verify-token.ts';

const T0 = 1_700_000_000_000;

function testClock(): { nowMs(): number; advance(ms: number): void } {
  let now = T0;
  return { nowMs: () => now, advance: (ms) => { now += ms; } };
}

const SETTINGS: RoomSettings = {
  retention: { ms: 60_000, events: 100 }, presenceGraceMs: 30_000, maxStreamsPerSession: 4, maxSessionsPerRoom: 100,
};

interface Frame {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

class Sink implements EventSink {
  readonly raw: string[] = [];
  ended = false;
  healthy = true;

  write(frame: string): boolean {
    if (!this.healthy) return false;
    this.raw.push(frame);
    return true;
  }

  end(): void {
    this.ended = true;
  }

  get frames(): Frame[] {
    return this.raw.map((text) => ({
      id: /^id: (.*)$/m.exec(text)?.[1],
      event: /^event: (.*)$/m.exec(text)![1]!,
      data: JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as Record<string, unknown>,
    }));
  }

  events(): string[] {
    return this.frames.map((f) => f.event);
  }
}

let grantCounter = 0;
function identity(user: string, extra: Partial<SessionIdentity> = {}): SessionIdentity {
  grantCounter += 1;
  return { grantId: `g${grantCounter}`, projectId: 'prj_a', roomId: 'room', userId: user, role: 'participant',
    issuedAt: Math.floor(T0 / 1000), expiresAt: Math.floor(T0 / 1000) + 600, ...extra };
}

function expectApiError(fn: () => unknown, code: string): void {
  assert.throws(fn, (err: unknown) => err instanceof ApiError && err.code === code);
}

describe('room registry', () => {
  it('orders joins, messages and leaves in one log that every stream sees alike', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const alice = identity('alice');
    const bob = identity('bob');
    const a = rooms.join(alice);
    assert.deepEqual(a.participants.map((p) => p.user_id), ['alice']);
    const aliceSink = new Sink();
    rooms.openStream(alice.grantId, a.last_event_id, aliceSink);
    const b = rooms.join(bob);
    const bobSink = new Sink();
    rooms.openStream(bob.grantId, b.last_event_id, bobSink);
    rooms.send(alice.grantId, '{"n":1}', undefined);
    rooms.send(bob.grantId, '"hi"', 'alice');
    rooms.leave(bob.grantId);

    assert.deepEqual(aliceSink.events(), ['ready', 'join', 'message', 'leave']);
    assert.deepEqual(bobSink.events(), ['ready', 'message', 'leave']);
    assert.equal(bobSink.ended, true);
    const seqs = aliceSink.frames.filter((f) => f.id).map((f) => Number(f.id!.split('.')[1]));
    assert.deepEqual(seqs, [2, 4, 5]);
    assert.deepEqual(aliceSink.frames[2]!.data, { from: 'bob', to: 'alice', data: 'hi', at_ms: T0 });
    assert.deepEqual(bobSink.frames[1]!.data, { from: 'alice', data: { n: 1 }, at_ms: T0 });
    assert.deepEqual(aliceSink.frames[3]!.data, { user_id: 'bob', reason: 'left', at_ms: T0 });
  });

  it('joins idempotently and refuses a full room', () => {
    const rooms = createRoomRegistry({ ...SETTINGS, maxSessionsPerRoom: 2 }, testClock());
    const alice = identity('alice');
    const first = rooms.join(alice);
    assert.deepEqual(rooms.join(alice), first);
    rooms.join(identity('bob'));
    expectApiError(() => rooms.join(identity('carol')), 'conflict');
    // another project's room of the same id is another room
    rooms.join(identity('carol', { projectId: 'prj_b' }));
    assert.deepEqual(rooms.participants('prj_b', 'room').map((p) => p.user_id), ['carol']);
    assert.deepEqual(rooms.stats(), { rooms: 2, sessions: 3, streams: 0 });
  });

  it('needs a joined session to send or stream, and a present recipient', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const alice = identity('alice');
    expectApiError(() => rooms.send(alice.grantId, '1', undefined), 'conflict');
    expectApiError(() => rooms.openStream(alice.grantId, undefined, new Sink()), 'conflict');
    rooms.join(alice);
    expectApiError(() => rooms.send(alice.grantId, '1', 'bob'), 'not_found');
  });

  it('resumes from the last event id, or sends a reset snapshot once the log has moved past it', () => {
    const clock = testClock();
    const rooms = createRoomRegistry({ ...SETTINGS, retention: { ms: 60_000, events: 3 } }, clock);
    const alice = identity('alice');
    const bob = identity('bob');
    rooms.join(alice);
    const { last_event_id: since } = rooms.join(bob);
    const ids = [1, 2, 3].map((n) => rooms.send(alice.grantId, String(n), undefined).id);

    const resumed = new Sink();
    rooms.openStream(bob.grantId, ids[0], resumed);
    assert.deepEqual(resumed.frames.map((f) => f.id), [ids[1], ids[2], undefined]);
    assert.deepEqual(resumed.frames.at(-1)!.data, { room_id: 'room', replayed: 2, at_ms: T0 });

    // four more events: the three kept no longer reach back to `since`
    rooms.send(alice.grantId, '4', undefined);
    const tooOld = new Sink();
    rooms.openStream(bob.grantId, since, tooOld);
    assert.deepEqual(tooOld.events(), ['snapshot', 'ready']);
    assert.equal(tooOld.frames[0]!.data['reset'], true);

    // and by age: the retention window is also a time
    const latest = rooms.send(alice.grantId, '5', undefined).id;
    const recent = new Sink();
    rooms.openStream(bob.grantId, ids[2], recent);
    assert.deepEqual(recent.events(), ['message', 'message', 'ready']);
    clock.advance(60_001);
    rooms.send(alice.grantId, '6', undefined);
    const aged = new Sink();
    rooms.openStream(bob.grantId, latest, aged);
    assert.deepEqual(aged.events(), ['message', 'ready'], 'the event after `latest` is recent');
    const agedOut = new Sink();
    rooms.openStream(bob.grantId, ids[2], agedOut);
    assert.deepEqual(agedOut.events(), ['snapshot', 'ready']);
  });

  it('answers an id from before the user\'s current presence with a reset snapshot', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const alice = identity('alice');
    const carol = identity('carol');
    const bob = identity('bob');
    rooms.join(alice);
    rooms.join(carol);
    const seen = rooms.join(bob).last_event_id;
    rooms.leave(bob.grantId);
    // while bob is away: a message and carol leaving
    rooms.send(alice.grantId, '"while away"', undefined);
    rooms.leave(carol.grantId);
    const again = identity('bob');
    rooms.join(again);
    const sink = new Sink();
    rooms.openStream(again.grantId, seen, sink);
    assert.deepEqual(sink.events(), ['snapshot', 'ready']);
    assert.equal(sink.frames[0]!.data['reset'], true);
    assert.deepEqual((sink.frames[0]!.data['participants'] as { user_id: string }[]).map((p) => p.user_id), ['alice', 'bob']);
  });

  it('ends the oldest stream beyond the per-session cap', () => {
    const rooms = createRoomRegistry({ ...SETTINGS, maxStreamsPerSession: 2 }, testClock());
    const alice = identity('alice');
    rooms.join(alice);
    const sinks = [new Sink(), new Sink(), new Sink()];
    for (const sink of sinks) rooms.openStream(alice.grantId, undefined, sink);
    assert.deepEqual(sinks.map((s) => s.ended), [true, false, false]);
    assert.equal(rooms.stats().streams, 2);
  });

  it('ends a stream whose reader fell behind, and lets it resume', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const alice = identity('alice');
    const bob = identity('bob');
    rooms.join(alice);
    rooms.join(bob);
    const slow = new Sink();
    rooms.openStream(bob.grantId, undefined, slow);
    const seen = slow.frames[0]!.id;
    slow.healthy = false;
    const missed = rooms.send(alice.grantId, '1', undefined).id;
    assert.equal(slow.ended, true);
    assert.deepEqual(rooms.participants('prj_a', 'room').map((p) => p.user_id), ['alice', 'bob']);
    const again = new Sink();
    rooms.openStream(bob.grantId, seen, again);
    assert.deepEqual(again.frames.map((f) => f.id), [missed, undefined]);
  });

  it('removes a session left without a stream for the grace period', async () => {
    const rooms = createRoomRegistry({ ...SETTINGS, presenceGraceMs: 30 }, testClock());
    const alice = identity('alice');
    const bob = identity('bob');
    rooms.join(alice);
    const aliceSink = new Sink();
    rooms.openStream(alice.grantId, undefined, aliceSink);
    rooms.join(bob);
    await delay(80);
    assert.deepEqual(aliceSink.events(), ['snapshot', 'ready', 'join', 'leave']);
    assert.equal(aliceSink.frames[3]!.data['reason'], 'timeout');
    // alice's open stream kept her present
    assert.deepEqual(rooms.participants('prj_a', 'room').map((p) => p.user_id), ['alice']);
    expectApiError(() => rooms.send(bob.grantId, '1', undefined), 'conflict');
  });

  it('ends a session at its expiry with an expired event', async () => {
    const clock = testClock();
    const rooms = createRoomRegistry(SETTINGS, clock);
    const alice = identity('alice');
    // expires 40 ms from the clock's now
    const bob = identity('bob', { expiresAt: Math.floor(T0 / 1000) + 1 });
    clock.advance(1000 - 40);
    rooms.join(alice);
    const aliceSink = new Sink();
    rooms.openStream(alice.grantId, undefined, aliceSink);
    rooms.join(bob);
    const bobSink = new Sink();
    rooms.openStream(bob.grantId, undefined, bobSink);
    await delay(100);
    assert.deepEqual(bobSink.events(), ['snapshot', 'ready', 'expired']);
    assert.equal(bobSink.ended, true);
    assert.deepEqual(aliceSink.events().slice(-1), ['leave']);
    assert.equal(aliceSink.frames.at(-1)!.data['reason'], 'expired');
  });

  it('ends a revoked session: its streams learn why, the room sees a leave, other sessions stay', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const alice = identity('alice');
    const phone = identity('bob');
    const laptop = identity('bob');
    rooms.join(alice);
    const aliceSink = new Sink();
    rooms.openStream(alice.grantId, undefined, aliceSink);
    rooms.join(phone);
    rooms.join(laptop);
    const phoneSink = new Sink();
    rooms.openStream(phone.grantId, undefined, phoneSink);
    rooms.revoke(phone.grantId);
    assert.deepEqual(phoneSink.events().slice(-1), ['revoked']);
    assert.equal(phoneSink.ended, true);
    // bob is still present through the laptop
    assert.deepEqual(aliceSink.events(), ['snapshot', 'ready', 'join']);
    rooms.revoke(laptop.grantId);
    assert.deepEqual(aliceSink.events().slice(-1), ['leave']);
    assert.equal(aliceSink.frames.at(-1)!.data['reason'], 'revoked');
    rooms.revoke('unknown-grant');
  });

  it('ends, on an archive cut-off, the project\'s sessions issued up to it and no other', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const cutAt = Math.floor(T0 / 1000);
    const old = identity('alice', { issuedAt: cutAt - 30 });
    const atCut = identity('bob', { issuedAt: cutAt, roomId: 'other-room' });
    const fresh = identity('carol', { issuedAt: cutAt + 1 });
    const elsewhere = identity('dave', { projectId: 'prj_b', issuedAt: cutAt - 30 });
    const sinks = [old, atCut, fresh, elsewhere].map((who) => {
      rooms.join(who);
      const sink = new Sink();
      rooms.openStream(who.grantId, undefined, sink);
      return sink;
    });
    rooms.cutOff('prj_a', cutAt);
    const [oldSink, atCutSink, freshSink, elsewhereSink] = sinks;
    assert.deepEqual(oldSink!.events().slice(-1), ['revoked']);
    assert.equal(oldSink!.ended, true);
    assert.deepEqual(atCutSink!.events().slice(-1), ['revoked']);
    assert.equal(freshSink!.ended, false);
    assert.deepEqual(freshSink!.frames.at(-1)!.data, { user_id: 'alice', reason: 'revoked', at_ms: T0 });
    assert.equal(elsewhereSink!.ended, false);
    assert.deepEqual(rooms.stats(), { rooms: 2, sessions: 2, streams: 2 });
  });

  it('forgets an empty room and starts a new log when it fills again', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const alice = identity('alice');
    const first = rooms.join(alice).last_event_id;
    rooms.leave(alice.grantId);
    assert.deepEqual(rooms.stats(), { rooms: 0, sessions: 0, streams: 0 });
    const bob = identity('bob');
    const second = rooms.join(bob).last_event_id;
    assert.notEqual(first.split('.')[0], second.split('.')[0]);
    const sink = new Sink();
    rooms.openStream(bob.grantId, first, sink);
    assert.deepEqual(sink.events(), ['snapshot', 'ready']);
    assert.equal(sink.frames[0]!.data['reset'], true);
  });

  it('ends every stream on close', () => {
    const rooms = createRoomRegistry(SETTINGS, testClock());
    const alice = identity('alice');
    rooms.join(alice);
    const sink = new Sink();
    rooms.openStream(alice.grantId, undefined, sink);
    rooms.close();
    assert.equal(sink.ended, true);
    assert.deepEqual(rooms.stats(), { rooms: 0, sessions: 0, streams: 0 });
  });
});
