import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { TcpProxy, collectFrames, join, nextEvent, text, until } from '../../../../test/helpers/media-session.ts';
import { useMediaPlatform } from '../../../../test/helpers/media-platform.ts';

describe('media reconnection (SDK against the real servers)', () => {
  const media = useMediaPlatform('reconnect-room');
  const { sessions, closers, token } = media;

  it('reconnects with a fresh token after a network loss and publishes its streams again', async () => {
    const proxy = await TcpProxy.start(media.server.urls['media']!);
    closers.push(() => proxy.close());
    const grants: string[] = [];
    const getToken = async (): Promise<TokenResponse> => {
      const t = await token('alice', { publish_streams: [1] }, 'loss-room');
      grants.push(t.media.grant);
      return t;
    };
    const first = await getToken();
    const alice = await join(first, { url: proxy.url, getToken, reconnect: { initialDelayMs: 50 } });
    const bob = await join(await token('bob', {}, 'loss-room'));
    sessions.push(alice, bob);
    const got = collectFrames(bob);
    const mic = await alice.publish(1, 'audio');
    await until(() => bob.streams().length === 1, 3000, 'stream seen');
    await mic.send(text('before'));
    await until(() => got.frames.length === 1, 3000, 'frame before');
    const firstParticipant = alice.participantId;

    const disconnected = nextEvent(alice, 'disconnected');
    const reconnecting = nextEvent(alice, 'reconnecting');
    const reconnected = nextEvent(alice, 'reconnected', 8000);
    const streamBack = nextEvent(bob, 'streamAdded', 8000, (s) => s.streamId === 1 && s.userId === 'alice');
    proxy.cut();
    const lost = await disconnected;
    assert.equal(lost.willReconnect, true);
    assert.equal(lost.code, 1006);
    assert.equal((await reconnecting).attempt, 1);
    const back = await reconnected;
    assert.equal(back.moved, false, 'the same media server');
    assert.equal(back.mediaNode, new URL(proxy.url).host);
    await streamBack;
    assert.equal(alice.state, 'connected');
    assert.notEqual(alice.participantId, firstParticipant);
    assert.equal(grants.length, 2, 'one fresh token for the reconnection');
    assert.notEqual(grants[1], grants[0]);
    assert.equal(proxy.connections, 2);
    assert.equal(mic.active, true);
    await mic.send(text('after'));
    await until(() => got.frames.length === 2, 3000, 'frame after');
    assert.deepEqual(got.texts(), ['1:before', '1:after']);
  });

  it('notices a silent network through its keepalive and reconnects', async () => {
    const proxy = await TcpProxy.start(media.server.urls['media']!);
    closers.push(() => proxy.close());
    let tokenRequests = 0;
    const carol = await join(await token('carol', {}, 'silent-room'), {
      url: proxy.url,
      getToken: async () => {
        tokenRequests += 1;
        return token('carol', {}, 'silent-room');
      },
      keepaliveIntervalMs: 200,
      keepaliveTimeoutMs: 800,
      reconnect: { initialDelayMs: 50 },
    });
    sessions.push(carol);
    const disconnected = nextEvent(carol, 'disconnected', 4000);
    const reconnected = nextEvent(carol, 'reconnected', 8000);
    proxy.freeze();
    const lost = await disconnected;
    assert.equal(lost.code, 4008);
    assert.equal(lost.willReconnect, true);
    await reconnected;
    assert.equal(carol.state, 'connected');
    assert.equal(tokenRequests, 1);
  });

  it('follows the media server to its new address after a restart (fresh token from getToken)', async () => {
    const dave = await join(await token('dave', { publish_streams: [3] }, 'restart-room'), {
      getToken: () => token('dave', { publish_streams: [3] }, 'restart-room'),
      reconnect: { initialDelayMs: 100 },
    });
    sessions.push(dave);
    const stream = await dave.publish(3, 'data');
    const disconnected = nextEvent(dave, 'disconnected', 15_000);
    const reconnected = nextEvent(dave, 'reconnected', 20_000);
    const before = dave.mediaNode;
    await media.restart(async () => assert.equal((await disconnected).code, 1001));
    const back = await reconnected;
    assert.equal(back.moved, true, `from ${before} to ${back.mediaNode}`);
    assert.equal(back.mediaNode.split(':').at(-1), new URL(media.server.urls['media']!).port, 'the restarted server, on its new port');
    const erin = await join(await token('erin', {}, 'restart-room'));
    sessions.push(erin);
    const got = collectFrames(erin);
    assert.deepEqual(erin.streams().map((s) => [s.streamId, s.userId]), [[3, 'dave']]);
    await stream.send(text('back'));
    await until(() => got.frames.length === 1, 3000, 'frame');
    assert.deepEqual(got.texts(), ['3:back']);
  });
});
