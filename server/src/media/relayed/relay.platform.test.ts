/**
 * A room on two media nodes: two media roles served in this process on one data directory (one key
 * ring, so one node credential; the store's file carries the bus between them), each with its own
 * relay path and UDP socket. A werift publisher joins node A, a werift subscriber node B: B learns the
 * stream over the bus, relays it from A, and its subscriber receives the publisher's RTP, with the
 * stream's key, and its picture loss indications reach the publisher on A.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { TokenIssuer } from '../../../../test/helpers/media-session.ts';
import { MEDIA_TEST_ENV, serveMedia } from '../../../../test/helpers/media-platform.ts';
import { serveInProcess, type ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { RtcTestClient, vp8Payload, waitFor } from '../../../../test/helpers/webrtc-client.ts';

describe('a room across two media nodes', () => {
  let a: ServedPlatform;
  let b: ServedPlatform;
  let issuer: TokenIssuer;
  const clients: RtcTestClient[] = [];

  before(async () => {
    a = await serveMedia();
    b = await serveInProcess({ roles: ['media'], dataDir: a.dataDir, env: MEDIA_TEST_ENV });
    issuer = await TokenIssuer.create(() => a.api);
  });

  after(async () => {
    for (const c of clients) await c.close();
    await b?.stop();
    await a?.stop();
  });

  it('relays a publisher\'s video on A to a subscriber on B, its key and key-frame requests included', { timeout: 60_000 }, async () => {
    const room = 'two-nodes';
    const pub = await RtcTestClient.join(a.urls['media']!, await issuer.issue({ room_id: room, user_id: 'pub', role: 'speaker', publish_streams: [1] }));
    clients.push(pub);
    assert.equal((await pub.publish(1, 'video')).type, 'published');
    await pub.negotiate([{ streamId: 1, kind: 'video', direction: 'send' }]);
    await pub.waitConnected();

    const sub = await RtcTestClient.join(b.urls['media']!, await issuer.issue({ room_id: room, user_id: 'sub', role: 'audience', subscribe_room: true }));
    clients.push(sub);
    await waitFor(() => sub.wire.controls.some((c) => c.type === 'stream_added' && (c['stream'] as { stream_id: number }).stream_id === 1),
      'the stream of A announced at B');
    assert.deepEqual(sub.wire.streamKeys.get(1)?.get(pub.wire.publishing.get(1)!.epoch), pub.wire.publishing.get(1)!.key,
      'the publisher\'s stream key, delivered by B under the subscriber\'s session');
    await sub.negotiate([{ streamId: 1, kind: 'video', direction: 'recv' }]);
    await sub.waitConnected();

    let sent = 0;
    const payloads = new Set<string>();
    const pumping = setInterval(() => {
      const payload = vp8Payload(600, sent % 10 === 0);
      payloads.add(payload.toString('hex'));
      pub.sendRtp(1, payload);
      sent += 1;
    }, 10);
    try {
      await waitFor(() => sub.receivedCount(1) >= 10, 'video of A at the subscriber on B');
      assert.ok(sub.received(1).some((p) => payloads.has(p.toString('hex'))), 'the payloads as the publisher sent them');
      // the subscriber's picture loss indications reach the publisher on A (coalesced per layer every 250 ms on the way)
      const plis = pub.pliReceived(1);
      await waitFor(async () => {
        await sub.sendPli(1);
        return pub.pliReceived(1) > plis;
      }, 'a key-frame request of B at the publisher on A');
    } finally {
      clearInterval(pumping);
    }
  });

  it('rotates a relayed stream\'s key at its origin when a subscriber on the other node leaves: the publisher and the remaining subscriber share the new key', { timeout: 60_000 }, async () => {
    const room = 'rotation';
    const pub = await RtcTestClient.join(a.urls['media']!, await issuer.issue({ room_id: room, user_id: 'pub', role: 'speaker', publish_streams: [1] }));
    clients.push(pub);
    assert.equal((await pub.publish(1, 'audio')).type, 'published');
    const audience = (user: string) => issuer.issue({ room_id: room, user_id: user, role: 'audience', subscribe_room: true });
    const [leaving, staying] = [await RtcTestClient.join(b.urls['media']!, await audience('leaving')), await RtcTestClient.join(b.urls['media']!, await audience('staying'))];
    clients.push(leaving, staying);
    // a copy: the client updates its publishing state in place at each new key
    const first = { ...pub.wire.publishing.get(1)! };
    for (const sub of [leaving, staying]) await waitFor(() => sub.wire.streamKeys.get(1)?.get(first.epoch) !== undefined, 'the stream\'s key at B');

    // the leaving subscriber held the key: the origin rotates it, B only passes the new one on
    await leaving.close();
    await waitFor(() => pub.wire.publishing.get(1)!.epoch !== first.epoch, 'a new key for the publisher on A');
    const next = pub.wire.publishing.get(1)!;
    await waitFor(() => staying.wire.streamKeys.get(1)?.has(next.epoch) ?? false, 'the new key at the subscriber on B');
    for (const [epoch, key] of staying.wire.streamKeys.get(1)!) {
      assert.deepEqual(key, epoch === first.epoch ? first.key : next.key, `the key of epoch ${epoch} is the publisher's`);
    }
  });
});

describe('the relay\'s UDP port', () => {
  it('names the variable to change when the port is taken', { timeout: 60_000 }, async () => {
    const taken = createSocket('udp4');
    await new Promise<void>((resolve) => taken.bind(0, '127.0.0.1', resolve));
    const port = taken.address().port;
    try {
      await assert.rejects(serveInProcess({ roles: ['media'], env: { ...MEDIA_TEST_ENV, RTC_MEDIA_RELAY_PORT: String(port) } }),
        { message: `media role: UDP port ${port} is in use; set RTC_MEDIA_RELAY_PORT` });
    } finally {
      taken.close();
    }
  });
});
