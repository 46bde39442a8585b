import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaSessionList } from '@rtc/protocol';
import { bearer, createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { startInProcess, testClock, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../../../test/helpers/inproc-media.ts';
import { RtcTestClient, waitFor, type RtcTrackSpec } from '../../../test/helpers/webrtc-client.ts';
import { join, sleep } from '../../../test/e2e/media-helpers.ts';

/** A VP8 payload starting a key frame whose header claims `width` x `height` (RFC 6386 section 9.1), `size` bytes long. */
function keyFrame(width: number, height: number, size = 1000): Buffer {
  const payload = Buffer.alloc(size, 0x55);
  // descriptor: S=1, PID=0; frame tag: P=0 (key frame); start code; sizes, little endian
  Buffer.from([0x10, 0x00, 0x00, 0x00, 0x9d, 0x01, 0x2a, width & 0xff, width >> 8, height & 0xff, height >> 8]).copy(payload);
  return payload;
}

/** A VP8 payload of an inter frame, `size` bytes long. */
function interFrame(size = 1000): Buffer {
  const payload = Buffer.alloc(size, 0x55);
  payload[0] = 0x10;
  payload[1] = 0x01;
  return payload;
}

const send = (streamId: number, kind: 'audio' | 'video'): RtcTrackSpec => ({ streamId, kind, direction: 'send' });
const recv = (streamId: number, kind: 'audio' | 'video'): RtcTrackSpec => ({ streamId, kind, direction: 'recv' });

// The usage kind the media node records of each session (docs/console.md, "Usage kind of a session")
// comes from what it can verify of the media, not from what a client's packets claim.
describe('usage kinds of media sessions, from verified media', () => {
  const clock = testClock(Date.UTC(2026, 10, 26, 9, 0));
  let server: InProcessPlatform;
  let media: InProcessMedia;
  let customer: Customer;
  const clients: RtcTestClient[] = [];

  before(async () => {
    server = await startInProcess({ clock });
    customer = await createCustomer(server);
    media = await startInProcessMedia(server, customer);
  });

  after(async () => {
    for (const c of clients) await c.close();
    await media?.close();
    await server?.close();
  });

  const client = async (body: Record<string, unknown>): Promise<RtcTestClient> => {
    const c = await RtcTestClient.join(media.role.url, await media.issue(body));
    clients.push(c);
    return c;
  };
  /** The usage kind and relay flag of each ended session of `room`, by user, once all `users` ended. */
  const kinds = async (room: string, users: number): Promise<Record<string, [string | null, boolean]>> => {
    for (let i = 0; ; i++) {
      const res = await server.request(`${server.api}/v1/projects/${customer.projectId}/sessions?room_id=${room}`, {
        method: 'GET', headers: bearer(customer.accessToken),
      });
      assert.equal(res.status, 200, res.text);
      const sessions = res.json<MediaSessionList>().sessions;
      if (sessions.length === users && sessions.every((s) => s.left_at !== null)) {
        return Object.fromEntries(sessions.map((s) => [s.user_id, [s.usage_kind, s.turn_relay]]));
      }
      assert.ok(i < 250, `the sessions did not end within 5 s: ${JSON.stringify(sessions)}`);
      await sleep(20);
    }
  };

  it('bills neither the publisher nor a viewer by key frames that claim 16383x16383', async () => {
    const room = 'forged-size';
    const pub = await client({ room_id: room, user_id: 'forger', role: 'speaker', publish_streams: [1] });
    assert.equal((await pub.publish(1, 'video')).type, 'published');
    await pub.negotiate([send(1, 'video')]);
    await pub.waitConnected();
    const viewer = await client({ room_id: room, user_id: 'viewer', role: 'audience', subscribe_room: true });
    await viewer.negotiate([recv(1, 'video')]);
    await viewer.waitConnected();
    let sent = 0;
    await waitFor(() => {
      if (viewer.receivedCount(1) >= 5) return true;
      pub.sendRtp(1, keyFrame(16383, 16383, 200));
      sent += 1;
      // the node paces video on its clock
      clock.advance(20);
      return false;
    }, 'forged key frames at the viewer');
    assert.ok(sent >= 5);
    await viewer.close();
    await pub.close();
    // video went both ways, of no size the node could verify: the smallest video kind
    assert.deepEqual(await kinds(room, 2), { forger: ['video_sd', false], viewer: ['video_sd', false] });
  });

  it('bills an honest 1280x720 stream, sent for seconds at a bitrate it needs, as video_hd', async () => {
    const room = 'honest-hd';
    const pub = await client({ room_id: room, user_id: 'camera', role: 'speaker', publish_streams: [1, 2] });
    assert.equal((await pub.publish(1, 'video')).type, 'published');
    assert.equal((await pub.publish(2, 'audio')).type, 'published');
    await pub.negotiate([send(1, 'video'), send(2, 'audio')]);
    await pub.waitConnected();
    // a listener of the audio only: each of its packets, sent after a step's video, marks that step as received
    const listener = await client({ room_id: room, user_id: 'listener', role: 'audience', subscribe_streams: [2] });
    await listener.negotiate([recv(2, 'audio')]);
    await listener.waitConnected();
    await waitFor(() => {
      if (listener.receivedCount(2) > 0) return true;
      pub.sendRtp(2, Buffer.alloc(100, 1));
      return false;
    }, 'audio at the listener');
    // 7 s of the node's clock in 100 ms steps: 15 packets of 1000 bytes (1.2 Mbit/s), a key frame each second
    for (let step = 0; step < 70; step++) {
      for (let i = 0; i < 15; i++) pub.sendRtp(1, step % 10 === 0 && i === 0 ? keyFrame(1280, 720) : interFrame(), i === 14);
      const heard = listener.receivedCount(2);
      await waitFor(() => {
        if (listener.receivedCount(2) > heard) return true;
        pub.sendRtp(2, Buffer.alloc(100, 1));
        return false;
      }, `step ${step} at the node`);
      clock.advance(100);
    }
    await listener.close();
    await pub.close();
    assert.deepEqual(await kinds(room, 2), { camera: ['video_hd', false], listener: ['audio', false] });
  });

  it('bills sealed WebSocket frames by what they carry: data at video rates is video, audio at audio rates audio', async () => {
    const room = 'sealed-rates';
    const sender = await join(await media.issue({ room_id: room, user_id: 'sender', role: 'speaker', publish_streams: [1, 2] }));
    const receiver = await join(await media.issue({ room_id: room, user_id: 'receiver', role: 'audience', subscribe_room: true }));
    let received = 0;
    receiver.on('frame', () => {
      received += 1;
    });
    const data = await sender.publish(1, 'data');
    const voice = await sender.publish(2, 'audio');
    await waitFor(() => receiver.streams().length === 2, 'both streams at the receiver');
    // 7 s of the node's clock in 100 ms steps: 12 Mbit/s of data frames and 64 kbit/s of audio frames
    for (let step = 0; step < 70; step++) {
      const before = received;
      for (let i = 0; i < 10; i++) await data.send(Buffer.alloc(15_000, step));
      await voice.send(Buffer.alloc(800, step));
      await waitFor(() => received === before + 11, `step ${step} at the receiver`);
      clock.advance(100);
    }
    await receiver.close();
    await sender.close();
    assert.deepEqual(await kinds(room, 2), { sender: ['video_2k_plus', false], receiver: ['video_2k_plus', false] });

    // the audio alone stays audio
    const quiet = 'sealed-audio';
    const speaker = await join(await media.issue({ room_id: quiet, user_id: 'speaker', role: 'speaker', publish_streams: [3] }));
    const hearer = await join(await media.issue({ room_id: quiet, user_id: 'hearer', role: 'audience', subscribe_room: true }));
    let heard = 0;
    hearer.on('frame', () => {
      heard += 1;
    });
    const mic = await speaker.publish(3, 'audio');
    await waitFor(() => hearer.streams().length === 1, 'the stream at the hearer');
    for (let step = 0; step < 70; step++) {
      await mic.send(Buffer.alloc(800, step));
      await waitFor(() => heard === step + 1, `audio step ${step}`);
      clock.advance(100);
    }
    await hearer.close();
    await speaker.close();
    assert.deepEqual(await kinds(quiet, 2), { speaker: ['audio', false], hearer: ['audio', false] });
  });

  it('bills 4 Mbit/s sent as 8 WebSocket streams of 500 kbit/s labelled audio as video, sent and received', async () => {
    const room = 'split-audio';
    const ids = [1, 2, 3, 4, 5, 6, 7, 8];
    const sender = await join(await media.issue({ room_id: room, user_id: 'splitter', role: 'speaker', publish_streams: ids }));
    const receiver = await join(await media.issue({ room_id: room, user_id: 'watcher', role: 'audience', subscribe_room: true }));
    let received = 0;
    receiver.on('frame', () => {
      received += 1;
    });
    const streams = await Promise.all(ids.map((id) => sender.publish(id, 'audio')));
    await waitFor(() => receiver.streams().length === ids.length, 'the 8 streams at the receiver');
    // 7 s of the node's clock in 100 ms steps: 6250 bytes per stream and step, 500 kbit/s each
    for (let step = 0; step < 70; step++) {
      const before = received;
      for (const stream of streams) await stream.send(Buffer.alloc(6_250, step));
      await waitFor(() => received === before + ids.length, `step ${step} at the receiver`);
      clock.advance(100);
    }
    await receiver.close();
    await sender.close();
    // 4 Mbit/s of media of no readable size: 1 Mpx, more than 1280x720
    assert.deepEqual(await kinds(room, 2), { splitter: ['video_full_hd', false], watcher: ['video_full_hd', false] });
  });

  it('counts TURN relay minutes by the relay address the ICE pair ends at, whatever type a client gives its candidate', async () => {
    // the client's own loopback candidates, labelled relay candidates
    const asRelay = (sdp: string): string => sdp.replace(/ typ host/g, ' typ relay raddr 0.0.0.0 rport 0');
    const connect = async (on: InProcessMedia, room: string, user: string, mungeSdp = asRelay): Promise<void> => {
      const c = await RtcTestClient.join(on.role.url, await on.issue({ room_id: room, user_id: user, role: 'audience', subscribe_room: true }));
      clients.push(c);
      await c.negotiate([recv(1, 'audio')], { mungeSdp });
      await c.waitConnected();
      await c.close();
    };
    await connect(media, 'labelled-relay', 'liar');
    assert.deepEqual(await kinds('labelled-relay', 1), { liar: ['audio', false] });

    // a node whose TURN server relays from 127.0.0.1 (RTC_TURN_RELAY_IPS): the same pair ends at a relay address
    const relayed = await startInProcessMedia(server, customer, server.deps, { RTC_TURN_RELAY_IPS: '127.0.0.1' });
    try {
      await connect(relayed, 'relay-address', 'relayed');
      assert.deepEqual(await kinds('relay-address', 1), { relayed: ['audio', true] });
      // the same pair with its candidates labelled host: the address decides, not the label
      await connect(relayed, 'relay-labelled-host', 'relabelled', (sdp) => sdp);
      assert.deepEqual(await kinds('relay-labelled-host', 1), { relabelled: ['audio', true] });
    } finally {
      await relayed.close();
    }
  });
});
