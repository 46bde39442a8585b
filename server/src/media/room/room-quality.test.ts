/**
 * Each live participant's media quality in the room service API (docs/reference/room-api.md, "Quality"):
 * a real platform (`rtc serve`), a WebRTC publisher and subscriber of werift behind the media protocol.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RtcParticipant, RtcRoom, TokenResponse } from '@rtc/protocol';
import { request } from '../../../../test/helpers/http.ts';
import type { ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { RtcTestClient, vp8Payload, waitFor } from '../../../../test/helpers/webrtc-client.ts';
import { sleep, TokenIssuer } from '../../../../test/helpers/media-session.ts';
import { serveMedia } from '../../../../test/helpers/media-platform.ts';

/** The media node writes quality at its heartbeat (10 s): a bound for two of them and the first sample. */
const QUALITY_WAIT_MS = 40_000;

describe('participant quality in the room service API', () => {
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  const clients: RtcTestClient[] = [];

  const client = async (t: TokenResponse): Promise<RtcTestClient> => {
    const c = await RtcTestClient.join(server.urls['media']!, t);
    clients.push(c);
    return c;
  };

  before(async () => {
    server = await serveMedia();
    issuer = await TokenIssuer.create(() => server.api);
  });

  after(async () => {
    for (const c of clients) await c.close();
    await server?.stop();
  });

  it('shows what the media node receives from a publisher and sends to a subscriber, null before its first heartbeat', async () => {
    const room = 'quality';
    const pub = await client(await issuer.issue({ room_id: room, user_id: 'pub', role: 'speaker', publish_streams: [1] }));
    assert.equal((await pub.publish(1, 'video')).type, 'published');
    await pub.negotiate([{ streamId: 1, kind: 'video', direction: 'send' }]);
    await pub.waitConnected();
    const sub = await client(await issuer.issue({ room_id: room, user_id: 'sub', role: 'audience', subscribe_room: true }));
    await sub.negotiate([{ streamId: 1, kind: 'video', direction: 'recv' }]);
    await sub.waitConnected();

    // video flows all along: one packet every 10 ms, a key frame every tenth
    let sent = 0;
    const pumping = setInterval(() => {
      pub.sendRtp(1, vp8Payload(600, sent % 10 === 0));
      sent += 1;
    }, 10);
    try {
      await waitFor(() => sub.receivedCount(1) >= 10, 'video at the subscriber');
      const get = async (): Promise<RtcRoom> => {
        const res = await request(`${server.api}/v1/rtc/rooms/${room}`, { method: 'GET', headers: { authorization: issuer.customer.auth } });
        assert.equal(res.status, 200, res.text);
        return res.json<RtcRoom>();
      };
      const byUser = (r: RtcRoom, user: string): RtcParticipant => r.participants.find((p) => p.user_id === user)!;
      const first = await get();
      // joined just now: measured at the node's next heartbeat at the earliest
      assert.ok(byUser(first, 'pub').quality === null || byUser(first, 'pub').quality!.updated_at >= byUser(first, 'pub').joined_at);
      const deadline = Date.now() + QUALITY_WAIT_MS;
      let current = first;
      // loss is measured over 50 packets after the first receiver report (docs/reference/room-api.md, "Quality")
      const measured = (r: RtcRoom): boolean => (byUser(r, 'pub').quality?.bitrate_in ?? 0) > 0
        && (byUser(r, 'pub').quality?.packet_loss_in ?? null) !== null && (byUser(r, 'sub').quality?.bitrate_out ?? 0) > 0;
      while (!measured(current)) {
        if (Date.now() > deadline) assert.fail(`no quality measured: ${JSON.stringify(current.participants)}`);
        await sleep(200);
        current = await get();
      }
      const pq = byUser(current, 'pub').quality!;
      const sq = byUser(current, 'sub').quality!;
      // 600-byte payloads at up to 100 a second: under 0.5 Mbit/s; two significant digits
      assert.ok(pq.bitrate_in > 0 && pq.bitrate_in < 500_000, JSON.stringify(pq));
      assert.equal(Number(pq.bitrate_in.toPrecision(2)), pq.bitrate_in);
      assert.equal(pq.bitrate_out, 0, 'the publisher receives nothing');
      assert.ok(pq.packet_loss_in !== null && pq.packet_loss_in >= 0 && pq.packet_loss_in <= 1, JSON.stringify(pq));
      assert.equal(pq.packet_loss_out, null, 'the publisher receives no stream');
      assert.ok(sq.bitrate_out > 0 && sq.bitrate_out < 500_000, JSON.stringify(sq));
      assert.equal(sq.bitrate_in, 0, 'the subscriber sends nothing');
      assert.equal(sq.packet_loss_in, null, 'the subscriber publishes nothing');
      assert.deepEqual(sq.layers, {}, 'no simulcast: no layer to name');
      assert.ok(Math.abs(sq.updated_at - Date.now() / 1000) < 15, 'measured within a heartbeat');
    } finally {
      clearInterval(pumping);
    }
  });
});
