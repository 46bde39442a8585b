import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { MediaError, type MediaSession } from '../../../../sdk/app/src/index.ts';
import { collectFrames, join, nextEvent, text, until } from '../../../../test/helpers/media-session.ts';
import { useMediaPlatform } from '../../../../test/helpers/media-platform.ts';

async function refusal(promise: Promise<MediaSession>): Promise<MediaError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MediaError, `expected a MediaError, got ${String(err)}`);
  return err;
}

describe('media revocation', () => {
  const media = useMediaPlatform('revocation-room');
  const { sessions, token } = media;

  let carolToken: TokenResponse;

  it('closes the revoked session within a second (4003) while the others keep exchanging frames', async () => {
    const alice = await join(await token('alice', { publish_streams: [1] }));
    const bob = await join(await token('bob', { publish_streams: [2] }));
    carolToken = await token('carol', { role: 'audience' });
    let tokenRequests = 0;
    const carol = await join(carolToken, { getToken: async () => {
      tokenRequests += 1;
      return token('carol', { role: 'audience' });
    } });
    sessions.push(alice, bob, carol);
    const got = { alice: collectFrames(alice), bob: collectFrames(bob), carol: collectFrames(carol) };
    const a = await alice.publish(1, 'audio');
    const b = await bob.publish(2, 'video');
    await until(() => carol.streams().length === 2 && alice.streams().length === 1 && bob.streams().length === 1, 3000, 'streams');
    await a.send(text('before'));
    await b.send(text('before'));
    await until(() => got.carol.frames.length === 2, 3000, 'frames before');

    let closedAt = 0;
    carol.on('revoked', () => {
      closedAt = performance.now();
    });
    const disconnected = nextEvent(carol, 'disconnected');
    const aliceSeesLeave = nextEvent(alice, 'participantLeft', 3000, (p) => p.userId === 'carol');
    await media.issuer.revoke(carolToken);
    const returnedAt = performance.now();
    const info = await disconnected;
    assert.ok(closedAt > 0, 'revoked event');
    // measured from the revoke call's return: the close may even come first (negative)
    assert.ok(closedAt - returnedAt < 1000, `closed ${(closedAt - returnedAt).toFixed(1)} ms after the revocation returned`);
    assert.equal(info.code, 4003);
    assert.equal(info.willReconnect, false);
    assert.equal(info.error.code, 'revoked');
    assert.equal(carol.state, 'closed');
    assert.equal((await aliceSeesLeave).userId, 'carol');

    for (let i = 0; i < 5; i++) {
      await a.send(text(`after ${i}`));
      await b.send(text(`after ${i}`));
    }
    await until(() => got.alice.frames.length === 6 && got.bob.frames.length === 6, 3000, 'frames after');
    assert.deepEqual(got.bob.texts().slice(1), ['1:after 0', '1:after 1', '1:after 2', '1:after 3', '1:after 4']);
    assert.equal(got.carol.frames.length, 2);
    // the SDK never comes back after a revocation: no reconnection starts (bounded wait, ends at the first one)
    await assert.rejects(nextEvent(carol, 'reconnecting', 1200), /no reconnecting event within/);
    assert.equal(tokenRequests, 0);
    assert.equal(carol.state, 'closed');
  });

  it('refuses the revoked grant from then on (4003)', async () => {
    const err = await refusal(join(carolToken));
    assert.equal(err.code, 'revoked');
    assert.equal(err.closeCode, 4003);
  });

  it('closes a session when a grant it renewed from is revoked', async () => {
    const first = await token('dave');
    const second = await token('dave');
    const dave = await join(first, { getToken: async () => second });
    sessions.push(dave);
    await dave.renew();
    const revoked = nextEvent(dave, 'revoked');
    await media.issuer.revoke(first);
    assert.equal((await revoked).error.closeCode, 4003);
  });

  it('refuses a revoked grant after the media server restarts', async () => {
    const unused = await token('erin');
    const used = await token('frank');
    const frank = await join(used);
    const revokedWhileConnected = nextEvent(frank, 'revoked');
    await media.issuer.revoke(unused);
    await media.issuer.revoke(used);
    await revokedWhileConnected;

    await media.restart();
    for (const t of [unused, used]) {
      // the new process listens on another port: point the old token there
      const moved = { ...t, media: { ...t.media, sfu_port: Number(new URL(media.server.urls['media']!).port) } };
      const err = await refusal(join(moved));
      assert.equal(err.closeCode, 4003);
    }
    const fresh = await join(await token('erin'));
    assert.equal(fresh.state, 'connected');
    await fresh.close();
  });
});
