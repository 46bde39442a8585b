import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectFrames, join, nextEvent, text, until, waitPastExpiry } from '../../../../test/helpers/media-session.ts';
import { useMediaPlatform } from '../../../../test/helpers/media-platform.ts';

describe('media renewal and expiry', () => {
  const media = useMediaPlatform('renewal-room');
  const { sessions, token } = media;

  it('renews on the same connection before expiry (half the lifetime of a short token) and carries on past the first exp', async () => {
    const first = await token('alice', { publish_streams: [1], ttl_seconds: 3 });
    let tokenRequests = 0;
    const alice = await join(first, { getToken: async () => {
      tokenRequests += 1;
      return token('alice', { publish_streams: [1], ttl_seconds: 3 });
    } });
    const bob = await join(await token('bob', { role: 'audience' }));
    sessions.push(alice, bob);
    const got = collectFrames(bob);
    const participantId = alice.participantId;
    let left = 0;
    bob.on('participantLeft', () => void (left += 1));
    const renewals: number[] = [];
    alice.on('renewed', (r) => void renewals.push(r.expiresAt));
    const mic = await alice.publish(1, 'audio');
    await waitPastExpiry(first.expires_at, 700);
    await until(() => renewals.length >= 2, 4000, 'two renewals');
    await mic.send(text('after the first expiry'));
    await until(() => got.frames.length === 1, 3000, 'frame');
    assert.deepEqual(got.texts(), ['1:after the first expiry']);
    assert.equal(alice.state, 'connected');
    assert.equal(alice.participantId, participantId, 'the same session, not a reconnection');
    assert.ok(alice.expiresAt > first.expires_at);
    assert.ok(renewals[1]! >= renewals[0]!);
    assert.ok(tokenRequests >= 2);
    assert.equal(left, 0);
  });

  for (const [what, other] of [['another user', { user: 'mallory', room: 'renewal-room' }], ['another room', { user: 'erin', room: 'elsewhere' }]] as const) {
    it(`refuses a renewal with a grant for ${what}, and the session ends at exp (4002)`, async () => {
      const first = await token('erin', { ttl_seconds: 3 });
      const erin = await join(first, { getToken: () => token(other.user, { ttl_seconds: 600 }, other.room) });
      sessions.push(erin);
      const failed = await nextEvent(erin, 'renewalFailed', 4000);
      assert.equal(failed.error.code, 'renew_refused');
      assert.equal(failed.error.reason, 'identity_mismatch');
      assert.equal(erin.state, 'connected', 'a refused renewal leaves the session as it was');
      assert.equal(erin.expiresAt, first.expires_at);
      const disconnected = nextEvent(erin, 'disconnected', 5000);
      const expired = await nextEvent(erin, 'expired', 5000);
      const closedAt = Date.now();
      assert.equal(expired.error.closeCode, 4002);
      assert.equal((await disconnected).willReconnect, false);
      assert.ok(closedAt >= first.expires_at * 1000 - 100 && closedAt < first.expires_at * 1000 + 1000,
        `closed ${closedAt - first.expires_at * 1000} ms after exp`);
    });
  }

  it('closes a session that is not renewed at exp with 4002', async () => {
    const first = await token('frank', { ttl_seconds: 2 });
    const frank = await join(first);
    sessions.push(frank);
    const expired = await nextEvent(frank, 'expired', 4000);
    const closedAt = Date.now();
    assert.equal(expired.error.code, 'expired');
    assert.equal(frank.state, 'closed');
    assert.ok(closedAt >= first.expires_at * 1000 - 100 && closedAt < first.expires_at * 1000 + 1000,
      `closed ${closedAt - first.expires_at * 1000} ms after exp`);
  });

  it('applies the renewed grant at once: a stream it no longer lists ends, a stream it now lists arrives', async () => {
    const henry = await join(await token('henry', { publish_streams: [2] }, 'perm-room'));
    const grace = await join(await token('grace', { publish_streams: [1], subscribe_room: false }, 'perm-room'), {
      getToken: () => media.issuer.issue({ room_id: 'perm-room', user_id: 'grace', role: 'audience', subscribe_streams: [2] }),
    });
    sessions.push(henry, grace);
    const got = collectFrames(grace);
    const own = await grace.publish(1, 'audio');
    const cam = await henry.publish(2, 'video');
    await until(() => grace.streams().length === 1, 3000, 'stream 2 seen');
    assert.equal(grace.streams()[0]!.subscribed, false);
    const ended = nextEvent(grace, 'localStreamEnded');
    const updated = nextEvent(grace, 'streamUpdated');
    const henrySeesRemoval = nextEvent(henry, 'streamRemoved');
    await grace.renew();
    assert.equal(grace.role, 'audience');
    assert.equal((await ended).streamId, 1);
    assert.equal(own.active, false);
    assert.deepEqual(await updated, { streamId: 2, kind: 'video', participantId: henry.participantId, userId: 'henry', subscribed: true });
    assert.equal((await henrySeesRemoval).streamId, 1);
    await cam.send(text('now visible'));
    await until(() => got.frames.length === 1, 3000, 'frame');
    assert.deepEqual(got.texts(), ['2:now visible']);
  });
});
