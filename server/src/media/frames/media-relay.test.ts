import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { KINDS, WireClient, sealWire } from '../../../../test/helpers/media-wire.ts';
import {
  MediaError, type MediaSession, type RemoteStream, type WebSocketEventLike, type WebSocketLike,
} from '../../../../sdk/app/src/index.ts';
import type { ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { TcpProxy, TokenIssuer, collectFrames, join, nextEvent, sleep, text, until } from '../../../../test/helpers/media-session.ts';
import { serveMedia } from '../../../../test/helpers/media-platform.ts';

const ROOM = 'relay-room';

/** A WebSocket for the SDK that hands every received media frame to it twice (a replay on the wire). */
class DuplicatingWebSocket implements WebSocketLike {
  private readonly inner: WebSocket;

  constructor(url: string) {
    this.inner = new WebSocket(url);
  }

  get binaryType(): string {
    return this.inner.binaryType;
  }

  set binaryType(value: string) {
    this.inner.binaryType = value as 'arraybuffer';
  }

  get readyState(): number {
    return this.inner.readyState;
  }

  get bufferedAmount(): number {
    return this.inner.bufferedAmount;
  }

  send(data: Uint8Array | string): void {
    this.inner.send(data);
  }

  close(code?: number, reason?: string): void {
    this.inner.close(code, reason);
  }

  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: WebSocketEventLike) => void): void {
    this.inner.addEventListener(type, (event) => {
      listener(event);
      const data = 'data' in event ? event.data : undefined;
      if (type === 'message' && data instanceof ArrayBuffer && new Uint8Array(data)[1] !== KINDS.control) listener(event);
    });
  }
}

describe('media relay', () => {
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  let mediaUrl: string;
  const sessions: MediaSession[] = [];

  const session = async (user: string, body: Record<string, unknown>, room = ROOM, via = issuer): Promise<MediaSession> => {
    const s = await join(await via.issue({ room_id: room, user_id: user, role: 'speaker', ...body }));
    sessions.push(s);
    return s;
  };

  before(async () => {
    server = await serveMedia();
    issuer = await TokenIssuer.create(() => server.api);
    mediaUrl = server.urls['media']!;
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await server?.stop();
  });

  it('carries audio, video and data frames among three participants, each to everyone else', async () => {
    const alice = await session('alice', { publish_streams: [1, 2], subscribe_room: true });
    const bob = await session('bob', { publish_streams: [3], subscribe_room: true });
    const carol = await session('carol', { role: 'audience', subscribe_room: true });
    const got = { alice: collectFrames(alice), bob: collectFrames(bob), carol: collectFrames(carol) };
    const mic = await alice.publish(1, 'audio');
    const cam = await alice.publish(2, 'video');
    const chat = await bob.publish(3, 'data');
    await until(() => carol.streams().length === 3 && bob.streams().length === 2 && alice.streams().length === 1, 3000, 'streams seen');
    for (let i = 0; i < 20; i++) {
      await mic.send(text(`a${i}`));
      await cam.send(text(`v${i}`));
      await chat.send(text(`d${i}`));
    }
    const expectFrom = (streams: number[]): string[] => streams.flatMap((s) =>
      Array.from({ length: 20 }, (_, i) => `${s}:${{ 1: 'a', 2: 'v', 3: 'd' }[s]}${i}`));
    await until(() => got.carol.frames.length === 60 && got.bob.frames.length === 40 && got.alice.frames.length === 20, 5000, 'every frame');
    assert.deepEqual(got.carol.texts().sort(), expectFrom([1, 2, 3]).sort());
    assert.deepEqual(got.bob.texts().sort(), expectFrom([1, 2]).sort());
    assert.deepEqual(got.alice.texts(), expectFrom([3]));
    const first = got.carol.frames.find((f) => f.streamId === 2)!;
    assert.equal(first.kind, 'video');
    assert.equal(first.userId, 'alice');
    assert.equal(first.participantId, alice.participantId);
    assert.equal(first.sequence, 1);
    // per stream, frames arrive in the order they were sent
    assert.deepEqual(got.carol.frames.filter((f) => f.streamId === 3).map((f) => f.sequence), Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('tells participants who joins and leaves and which streams each publishes', async () => {
    const watcher = await session('watcher', { role: 'audience', subscribe_room: true });
    assert.ok(watcher.participants().some((p) => p.userId === 'alice' && p.role === 'speaker'));
    assert.deepEqual(watcher.streams().map((s) => [s.streamId, s.kind, s.userId, s.subscribed]).sort(),
      [[1, 'audio', 'alice', true], [2, 'video', 'alice', true], [3, 'data', 'bob', true]]);
    const joined = nextEvent(watcher, 'participantJoined');
    const dave = await session('dave', { publish_streams: [4] });
    assert.equal((await joined).userId, 'dave');
    const added = nextEvent(watcher, 'streamAdded');
    const stream = await dave.publish(4, 'video');
    assert.deepEqual(await added, { streamId: 4, kind: 'video', participantId: dave.participantId, userId: 'dave', subscribed: true });
    const removed = nextEvent(watcher, 'streamRemoved');
    await stream.close();
    assert.equal((await removed).streamId, 4);
    const left = nextEvent(watcher, 'participantLeft');
    const removedOnLeave = nextEvent(watcher, 'streamRemoved', 3000, (s) => s.streamId === 4);
    await dave.publish(4, 'audio');
    await dave.close();
    assert.equal((await left).userId, 'dave');
    assert.equal((await removedOnLeave).kind, 'audio');
  });

  it('delivers to a grant with subscribe_streams only the streams it lists', async () => {
    const publisher = await session('two-streams', { publish_streams: [1, 2] }, 'subs-room');
    const only1 = await session('only1', { role: 'audience', subscribe_streams: [1] }, 'subs-room');
    const got = collectFrames(only1);
    const one = await publisher.publish(1, 'audio');
    const two = await publisher.publish(2, 'video');
    await until(() => only1.streams().length === 2, 3000, 'streams seen');
    assert.deepEqual(only1.streams().map((s: RemoteStream) => [s.streamId, s.subscribed]).sort(), [[1, true], [2, false]]);
    for (let i = 0; i < 5; i++) {
      await two.send(text(`two${i}`));
      await one.send(text(`one${i}`));
    }
    // a frame on stream 1 sent after every frame of stream 2: one relayed to only1 would arrive before it
    await one.send(text('barrier'));
    await until(() => got.frames.length === 6, 3000, 'stream 1 frames and the barrier');
    assert.deepEqual(got.texts(), ['1:one0', '1:one1', '1:one2', '1:one3', '1:one4', '1:barrier']);
  });

  it('keeps rooms of two projects with the same room id apart: no frame crosses', async () => {
    const other = await TokenIssuer.create(() => server.api);
    const mine = await session('p1-user', { publish_streams: [9], subscribe_room: true }, 'shared-id');
    const theirs = await session('p2-user', { publish_streams: [9], subscribe_room: true }, 'shared-id', other);
    const mineListener = await session('p1-listener', { role: 'audience', subscribe_room: true }, 'shared-id');
    const theirsListener = await session('p2-listener', { role: 'audience', subscribe_room: true }, 'shared-id', other);
    const got = { mine: collectFrames(mine), theirs: collectFrames(theirs), mineListener: collectFrames(mineListener), theirsListener: collectFrames(theirsListener) };
    // the listener's join reaches the other member on its own socket: wait for it
    await until(() => theirs.participants().length === 1, 3000, 'the listener seen by its project\'s member');
    assert.deepEqual(theirs.participants().map((p) => p.userId), ['p2-listener']);
    assert.equal(theirs.projectId, other.customer.projectId);
    // the same stream id in each project: no conflict, they are different rooms
    const a = await mine.publish(9, 'audio');
    const b = await theirs.publish(9, 'audio');
    await until(() => mineListener.streams().length === 1 && theirsListener.streams().length === 1, 3000, 'streams');
    for (let i = 0; i < 5; i++) {
      await a.send(text(`project-1 ${i}`));
      await b.send(text(`project-2 ${i}`));
    }
    await until(() => got.mineListener.frames.length === 5 && got.theirsListener.frames.length === 5, 3000, 'frames');
    // Every frame was relayed when its listener got it; what either side sends from now on reaches a
    // socket after any frame wrongly relayed to it: a barrier frame for the listeners, and the
    // answer to an unpublish request for the publishers.
    await a.send(text('project-1 barrier'));
    await b.send(text('project-2 barrier'));
    await until(() => got.mineListener.frames.length === 6 && got.theirsListener.frames.length === 6, 3000, 'the barriers');
    await Promise.all([a.close(), b.close()]);
    assert.ok(got.mineListener.texts().every((t) => t.includes('project-1')));
    assert.ok(got.theirsListener.texts().every((t) => t.includes('project-2')));
    assert.equal(got.mine.frames.length + got.theirs.frames.length, 0);
    assert.deepEqual(mineListener.participants().map((p) => p.userId).sort(), ['p1-user']);
  });

  it('never lets an audience member publish, even with a stream key it holds (4004)', async () => {
    const host = await session('host', { publish_streams: [1], subscribe_room: true }, 'audience-room');
    const listener = await session('listener', { role: 'audience', subscribe_room: true }, 'audience-room');
    const got = collectFrames(listener);
    const err = await session('viewer', { role: 'audience', subscribe_room: true }, 'audience-room')
      .then((viewer) => viewer.publish(1, 'audio')).catch((e: unknown) => e);
    assert.ok(err instanceof MediaError);
    assert.equal(err.code, 'stream_not_allowed');
    const stream = await host.publish(1, 'audio');
    const intruder = await WireClient.join(mediaUrl,
      (await issuer.issue({ room_id: 'audience-room', user_id: 'intruder', role: 'audience', subscribe_room: true })).media);
    await until(() => intruder.streamKeys.has(1), 3000, 'the intruder receives stream 1 and its key');
    const [epoch, key] = [...intruder.streamKeys.get(1)!.entries()][0]!;
    intruder.ws.send(sealWire(key, 3, { kind: KINDS.audio, epoch, streamId: 1, seq: 1000 }, Buffer.from('forged')));
    assert.equal((await intruder.closed).code, 4004);
    await stream.send(text('genuine'));
    await until(() => got.frames.length === 1, 3000, 'the genuine frame');
    assert.deepEqual(got.texts(), ['1:genuine']);
  });

  it('refuses a stream id outside the grant: publish is refused, a frame closes with 4004', async () => {
    const speaker = await session('narrow', { publish_streams: [1] }, 'narrow-room');
    const refused = await speaker.publish(2, 'video').catch((e: unknown) => e);
    assert.ok(refused instanceof MediaError && refused.code === 'stream_not_allowed');
    const taken = await session('taker', { publish_streams: [1] }, 'narrow-room');
    await speaker.publish(1, 'audio');
    const inUse = await taken.publish(1, 'audio').catch((e: unknown) => e);
    assert.ok(inUse instanceof MediaError && inUse.code === 'stream_in_use');
    const raw = await WireClient.join(mediaUrl, (await issuer.issue({ room_id: 'narrow-room', user_id: 'raw', role: 'speaker', publish_streams: [3] })).media);
    const published = await raw.publish(3, 'data');
    assert.equal(published.type, 'published');
    const frame = raw.sealFrame(3, Buffer.from('fine'));
    frame.writeUInt32BE(4, 4);
    raw.ws.send(frame);
    assert.equal((await raw.closed).code, 4004);
  });

  it('drops replayed frames and frames too far behind, delivers reordered ones once', async () => {
    const listener = await session('listener', { role: 'audience', subscribe_room: true }, 'replay-room');
    const got = collectFrames(listener);
    const publisher = await WireClient.join(mediaUrl,
      (await issuer.issue({ room_id: 'replay-room', user_id: 'pub', role: 'speaker', publish_streams: [5] })).media);
    await publisher.publish(5, 'audio');
    await until(() => listener.streams().length === 1, 3000, 'stream seen');
    const sealed = Array.from({ length: 2000 }, (_, i) => publisher.sealFrame(5, Buffer.from(`f${i + 1}`)));
    const send = (seq: number): void => publisher.ws.send(sealed[seq - 1]!);
    for (const seq of [1, 2, 2, 4, 3, 1, 6, 5, 6]) send(seq);
    await until(() => got.frames.length === 6, 3000, 'six frames');
    send(2000);
    send(900); // more than 1024 behind the newest: dropped
    send(1500); // within the window: delivered
    send(1500);
    await until(() => got.frames.length === 8, 3000, 'eight frames');
    const pong = await publisher.request({ type: 'ping' });
    assert.equal(pong.type, 'pong', 'replays are dropped, the publisher stays connected');
    assert.deepEqual(got.frames.map((f) => f.sequence), [1, 2, 4, 3, 6, 5, 2000, 1500]);
    assert.deepEqual(got.texts().slice(0, 3), ['5:f1', '5:f2', '5:f4']);
  });

  it('delivers a frame replayed towards the app only once', async () => {
    const publisher = await session('dup-pub', { publish_streams: [1] }, 'dup-room');
    const listener = await join(
      await issuer.issue({ room_id: 'dup-room', user_id: 'dup-listener', role: 'audience', subscribe_room: true }),
      { WebSocket: DuplicatingWebSocket },
    );
    sessions.push(listener);
    const got = collectFrames(listener);
    const stream = await publisher.publish(1, 'data');
    await until(() => listener.streams().length === 1, 3000, 'stream seen');
    for (let i = 0; i < 10; i++) await stream.send(text(`m${i}`));
    await until(() => got.frames.length >= 10, 3000, 'frames');
    // a replayed copy of frame 10 would come before the barrier frame sent after it
    await stream.send(text('barrier'));
    await until(() => got.frames.length >= 11, 3000, 'the barrier');
    assert.deepEqual(got.frames.map((f) => f.sequence), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.equal(listener.state, 'connected');
  });

  it('does not let a subscriber that reads nothing stall the room; it loses video before audio', async () => {
    const room = 'slow-room';
    const token = (user: string, body: Record<string, unknown>) => issuer.issue({ room_id: room, user_id: user, role: 'speaker', ...body });
    const publisher = await WireClient.join(mediaUrl, (await token('pub', { publish_streams: [7, 8] })).media);
    const fast = await WireClient.join(mediaUrl, (await token('fast', { role: 'audience', subscribe_room: true })).media);
    const proxy = await TcpProxy.start(mediaUrl);
    try {
      const slow = await WireClient.join(proxy.url, (await token('slow', { role: 'audience', subscribe_room: true })).media);
      const counts = { fast: { audio: 0, video: 0 }, slow: { audio: 0, video: 0 } };
      fast.onFrame = (f) => void (f.header.kind === KINDS.audio ? counts.fast.audio++ : counts.fast.video++);
      slow.onFrame = (f) => void (f.header.kind === KINDS.audio ? counts.slow.audio++ : counts.slow.video++);
      await publisher.publish(7, 'video');
      await publisher.publish(8, 'audio');
      await until(() => fast.streamKeys.size === 2 && slow.streamKeys.size === 2, 3000, 'keys');
      proxy.stall();
      // 24 MB of video, more than socket buffers and the 1 MiB queue hold; 1000 audio frames fit the
      // 1024-frame queue, so the policy (oldest video first) can keep every one of them
      const video = 20_000;
      const audio = 1_000;
      const payload = Buffer.alloc(1200, 1);
      // the publisher keeps pace with the fast subscriber (never more than 500 frames ahead, well
      // within its queue), so any loss could only come from the stalled one
      const caughtUp = (target: number): Promise<void> => new Promise((resolve) => {
        const check = (): void => void (counts.fast.video >= target ? resolve() : setTimeout(check, 1));
        check();
      });
      for (let i = 0; i < video; i++) {
        publisher.ws.send(publisher.sealFrame(7, payload));
        if (i % 20 === 0) publisher.ws.send(publisher.sealFrame(8, payload.subarray(0, 160)));
        if (i % 250 === 0) await caughtUp(i - 500);
      }
      await until(() => counts.fast.video === video && counts.fast.audio === audio, 20_000, 'the fast subscriber gets every frame');
      assert.ok(counts.slow.video < video / 2, `the stalled subscriber got ${counts.slow.video} video frames so far`);
      proxy.resume();
      await until(() => counts.slow.audio === audio, 10_000, 'every audio frame reaches the slow subscriber');
      await sleep(300);
      assert.equal(counts.slow.audio, audio, 'no audio frame was dropped');
      assert.ok(counts.slow.video < video, `video frames were dropped (${counts.slow.video} of ${video} arrived)`);
      assert.ok(counts.slow.video > 0);
      const pong = await slow.request({ type: 'ping' });
      assert.equal(pong.type, 'pong', 'the slow subscriber stays connected');
      slow.close();
    } finally {
      publisher.close();
      fast.close();
      await proxy.close();
    }
  });
});

