import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KIND_CODE } from '@rtc/protocol';
import { SendQueue } from './send-queue.ts';

/** A socket stand-in whose backlog the test controls: written messages are recorded. */
function sink(): { written: Buffer[]; backlog: number; queueSink: { write(m: Buffer): void; backlog(): number } } {
  const state = { written: [] as Buffer[], backlog: 0 };
  return Object.assign(state, {
    queueSink: { write: (m: Buffer) => void state.written.push(m), backlog: () => state.backlog },
  });
}

const LIMITS = { highWaterBytes: 100, mediaMaxBytes: 50, mediaMaxFrames: 4, controlMaxBytes: 30 };
const frame = (tag: string): Buffer => Buffer.from(tag.padEnd(10, '.'));
const names = (list: Buffer[]): string[] => list.map((b) => b.toString().replace(/\.+$/, ''));

describe('SendQueue', () => {
  it('writes at once while the socket has room', () => {
    const s = sink();
    const q = new SendQueue(s.queueSink, LIMITS);
    q.pushMedia(KIND_CODE.video, frame('v1'));
    q.pushControl(frame('c1'));
    assert.deepEqual(names(s.written), ['v1', 'c1']);
  });

  it('when the socket is full: control first, media in arrival order after a drain', () => {
    const s = sink();
    const q = new SendQueue(s.queueSink, LIMITS);
    s.backlog = 1000;
    q.pushMedia(KIND_CODE.audio, frame('a1'));
    q.pushMedia(KIND_CODE.video, frame('v1'));
    q.pushControl(frame('c1'));
    q.pushMedia(KIND_CODE.data, frame('d1'));
    assert.equal(s.written.length, 0);
    s.backlog = 0;
    q.flush();
    assert.deepEqual(names(s.written), ['c1', 'a1', 'v1', 'd1']);
  });

  it('over its bounds drops the oldest video first, then data, and audio last', () => {
    const s = sink();
    const q = new SendQueue(s.queueSink, LIMITS);
    s.backlog = 1000;
    for (const f of ['a1', 'v1', 'v2', 'd1', 'a2', 'v3']) {
      q.pushMedia(f.startsWith('a') ? KIND_CODE.audio : f.startsWith('v') ? KIND_CODE.video : KIND_CODE.data, frame(f));
    }
    // six frames, at most four: v1 then v2 went
    assert.deepEqual(q.dropped, { audio: 0, video: 2, data: 0 });
    q.pushMedia(KIND_CODE.audio, frame('a3'));
    q.pushMedia(KIND_CODE.audio, frame('a4'));
    assert.deepEqual(q.dropped, { audio: 0, video: 3, data: 1 });
    q.pushMedia(KIND_CODE.audio, frame('a5'));
    assert.deepEqual(q.dropped, { audio: 1, video: 3, data: 1 });
    s.backlog = 0;
    q.flush();
    assert.deepEqual(names(s.written), ['a2', 'a3', 'a4', 'a5']);
  });

  it('never drops control messages and reports a control backlog over its bound', () => {
    const s = sink();
    const q = new SendQueue(s.queueSink, LIMITS);
    s.backlog = 1000;
    assert.equal(q.pushControl(frame('c1')), true);
    assert.equal(q.pushControl(frame('c2')), true);
    assert.equal(q.pushControl(frame('c3')), true);
    assert.equal(q.pushControl(frame('c4')), false);
    s.backlog = 0;
    q.flush();
    assert.deepEqual(names(s.written), ['c1', 'c2', 'c3', 'c4']);
  });

  it('stops writing when the socket fills again during a flush', () => {
    const s = sink();
    const q = new SendQueue(s.queueSink, LIMITS);
    s.backlog = 1000;
    q.pushMedia(KIND_CODE.audio, frame('a1'));
    q.pushMedia(KIND_CODE.audio, frame('a2'));
    s.backlog = 0;
    s.queueSink.write = (m) => {
      s.written.push(m);
      s.backlog = 1000;
    };
    q.flush();
    assert.deepEqual(names(s.written), ['a1']);
    assert.equal(q.isEmpty(), false);
  });
});
