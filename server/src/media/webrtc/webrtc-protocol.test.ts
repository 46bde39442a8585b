/**
 * The WebRTC part of the media protocol at the wire level (docs/protocol/media.md, sections 10 and
 * 11), with a werift peer behind the raw protocol client: forwarding, grants, offers, binding, revocation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RtcRoom, TokenResponse } from '@rtc/protocol';
import { request } from '../../../../test/helpers/http.ts';
import type { ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import {
  RtcOfferError, RtcTestClient, createLoopbackPeer, fingerprintLine, gatheredOffer, generateDtlsKeys, vp8Payload, waitFor, type RtcTrackSpec,
} from '../../../../test/helpers/webrtc-client.ts';
import { TokenIssuer } from '../../../../test/helpers/media-session.ts';
import { serveMedia } from '../../../../test/helpers/media-platform.ts';

const send = (streamId: number, kind: 'audio' | 'video' = 'video'): RtcTrackSpec => ({ streamId, kind, direction: 'send' });
const recv = (streamId: number, kind: 'audio' | 'video' = 'video'): RtcTrackSpec => ({ streamId, kind, direction: 'recv' });

/** The first packet of a VP8 key frame of a given size: the descriptor, the frame tag, the start code and the sizes (RFC 6386, 9.1). */
function vp8KeyFrame(width: number, height: number): Buffer {
  const payload = vp8Payload(300, true);
  payload.set([0x9d, 0x01, 0x2a, width & 0xff, width >> 8, height & 0xff, height >> 8], 4);
  return payload;
}

describe('WebRTC media protocol', () => {
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  let mediaUrl: string;
  const clients: RtcTestClient[] = [];

  const token = (room: string, user: string, body: Record<string, unknown>): Promise<TokenResponse> =>
    issuer.issue({ room_id: room, user_id: user, role: 'speaker', ...body });

  const client = async (t: TokenResponse): Promise<RtcTestClient> => {
    const c = await RtcTestClient.join(mediaUrl, t);
    clients.push(c);
    return c;
  };

  /** A publisher of video streams with its send m-lines negotiated and connected. */
  const publisher = async (room: string, streamIds: readonly number[]): Promise<RtcTestClient> => {
    const pub = await client(await token(room, 'publisher', { publish_streams: streamIds }));
    for (const id of streamIds) assert.equal((await pub.publish(id, 'video')).type, 'published');
    const { refused } = await pub.negotiate(streamIds.map((id) => send(id)));
    assert.deepEqual(refused, []);
    await pub.waitConnected();
    return pub;
  };

  /** A subscriber with receive m-lines for `streamIds`; resolves with it and the mids the server refused. */
  const subscriber = async (room: string, user: string, body: Record<string, unknown>, streamIds: readonly number[]):
    Promise<{ sub: RtcTestClient; refused: string[] }> => {
    const sub = await client(await token(room, user, { role: 'audience', ...body }));
    const { refused } = await sub.negotiate(streamIds.map((id) => recv(id)));
    return { sub, refused };
  };

  /** Sends one video packet on each stream every poll until `done`; returns what was sent, by stream. */
  const pump = async (pub: RtcTestClient, streams: readonly number[], done: () => boolean, what: string): Promise<Map<number, Buffer[]>> => {
    const sent = new Map<number, Buffer[]>(streams.map((id) => [id, []]));
    await waitFor(() => {
      if (done()) return true;
      for (const id of streams) {
        const list = sent.get(id)!;
        // a subscriber gets video from a key frame on: every tenth packet is one
        const payload = vp8Payload(200 + (list.length % 50), list.length % 10 === 0);
        list.push(payload);
        pub.sendRtp(id, payload);
      }
      return false;
    }, what);
    return sent;
  };

  before(async () => {
    server = await serveMedia();
    issuer = await TokenIssuer.create(() => server.api);
    mediaUrl = server.urls['media']!;
  });

  after(async () => {
    for (const c of clients) await c.close();
    await server?.stop();
  });

  it('forwards a publisher\'s RTP payloads byte for byte to two subscribers, and a subscriber\'s PLI to the publisher', async () => {
    const room = 'fanout';
    const pub = await publisher(room, [1]);
    const subs = [
      await client(await token(room, 'sub-a', { role: 'audience', subscribe_room: true })),
      await client(await token(room, 'sub-b', { role: 'audience', subscribe_streams: [1] })),
    ];
    for (const s of subs) {
      assert.deepEqual((await s.negotiate([recv(1)])).refused, []);
      await s.waitConnected();
    }
    const sent = (await pump(pub, [1], () => subs.every((x) => x.received(1).length >= 5), 'packets at both subscribers')).get(1)!;
    // every payload received is one that was sent, unchanged, in order
    for (const s of subs) {
      const got = s.received(1);
      const first = sent.findIndex((p) => p.equals(got[0]!));
      assert.ok(first >= 0, 'the first received payload is one of the sent ones');
      for (let i = 0; i < got.length; i++) assert.ok(got[i]!.equals(sent[first + i]!), `payload ${i} is byte-identical`);
    }

    // the server also asks for a key frame when a subscriber starts receiving, and asks at most every
    // 250 ms per stream: count from here, and ask again until one passes
    const before = pub.pliReceived(1);
    let askedAt = 0;
    await waitFor(() => {
      if (pub.pliReceived(1) > before) return true;
      if (Date.now() - askedAt > 300) {
        askedAt = Date.now();
        void subs[1]!.sendPli(1);
      }
      return false;
    }, 'a PLI at the publisher');
  });

  it('stops forwarding a stream muted through the room service API, and resumes it from a key frame once unmuted', async () => {
    const room = 'rtc-mute';
    const pub = await publisher(room, [1, 2]);
    const { sub, refused } = await subscriber(room, 'sub', { subscribe_room: true }, [1, 2]);
    assert.deepEqual(refused, []);
    await sub.waitConnected();
    await pump(pub, [1, 2], () => sub.receivedCount(1) >= 5 && sub.receivedCount(2) >= 5, 'packets of both streams');
    const participantId = pub.wire.joined['participant_id'] as string;
    const rooms = (path: string, body?: unknown) => request(`${server.api}/v1/rtc/rooms/${room}${path}`, {
      method: body === undefined ? 'GET' : 'POST', headers: { authorization: issuer.customer.auth }, ...(body !== undefined && { body }),
    });
    // the media node lists the WebRTC video with its one layer (no simulcast: no rid)
    const listed = (await rooms('')).json<RtcRoom>().participants.find((p) => p.participant_id === participantId)!;
    assert.deepEqual(listed.streams.map((s) => [s.stream_id, s.kind, s.muted, s.layers.length, s.layers[0]?.rid]), [
      [1, 'video', false, 1, null], [2, 'video', false, 1, null],
    ]);

    const muted = await rooms(`/participants/${participantId}/streams/1/mute`, { muted: true });
    assert.equal(muted.status, 200, muted.text);
    await waitFor(() => sub.wire.controls.some((c) => c.type === 'stream_muted' && c['muted'] === true), 'stream_muted at the subscriber');
    // what was on its way before the mute lands while stream 2 gets 20 more packets; then stream 1 gets nothing
    const twoAt = sub.receivedCount(2);
    await pump(pub, [1, 2], () => sub.receivedCount(2) >= twoAt + 20, 'stream 2 flowing while stream 1 is muted');
    const oneAt = sub.receivedCount(1);
    const twoThen = sub.receivedCount(2);
    await pump(pub, [1, 2], () => sub.receivedCount(2) >= twoThen + 20, 'stream 2 flowing on');
    assert.equal(sub.receivedCount(1), oneAt, 'no packet of the muted stream reaches the subscriber');

    const plis = pub.pliReceived(1);
    assert.equal((await rooms(`/participants/${participantId}/streams/1/mute`, { muted: false })).status, 200);
    await pub.waitForPli(1, plis + 1);
    await pump(pub, [1], () => sub.receivedCount(1) >= oneAt + 5, 'stream 1 flowing again after the unmute');
    // numbered on from the last packet before the mute, from a key frame: nothing for the subscriber to ask again for
    const seqs = sub.receivedSeqs(1);
    assert.equal(seqs[oneAt], (seqs[oneAt - 1]! + 1) & 0xffff, `sequence numbers across the mute: ${seqs.slice(oneAt - 3, oneAt + 3).join(',')}`);
    assert.equal(sub.received(1)[oneAt]![1]! & 0x01, 0, 'the first packet after the unmute is a key frame\'s');
  });

  it('tells a subscriber the size of the layer it gets again whenever a key frame of that layer comes at another size', async () => {
    const room = 'layer-size';
    const pub = await publisher(room, [12]);
    const { sub } = await subscriber(room, 'sub', { subscribe_room: true }, [12]);
    await sub.waitConnected();
    const reports = () => sub.wire.controls.filter((c) => c.type === 'stream_layer').map((c) => [c['layer'], c['width'], c['height']]);
    /** Sends one packet per poll, a key frame of `width`x`height` every tenth, until the subscriber was told that size. */
    const encodeAt = async (width: number, height: number): Promise<void> => {
      let n = 0;
      await waitFor(() => {
        if (reports().some(([, w, h]) => w === width && h === height)) return true;
        pub.sendRtp(12, n % 10 === 0 ? vp8KeyFrame(width, height) : vp8Payload(300));
        n += 1;
        return false;
      }, `a stream_layer of ${width}x${height}: ${JSON.stringify(reports())}`);
    };
    // a publisher's encoder starts small and scales its layer up as its uplink allows (key frames at each size)
    await encodeAt(480, 360);
    await encodeAt(640, 480);
    // more key frames at the same size tell nothing new
    const mark = sub.received(12).length;
    await pump(pub, [12], () => sub.received(12).length >= mark + 30, 'key frames at the same size');
    await encodeAt(320, 240);
    assert.deepEqual(reports(), [[0, 480, 360], [0, 640, 480], [0, 320, 240]]);
  });

  it('keeps a client alive with pings on its interval, each answered by a pong', async () => {
    const c = await client(await token('ws-keepalive', 'pinger', {}));
    const stop = c.keepAlive(20);
    try {
      await waitFor(() => c.wire.controls.filter((m) => m.type === 'pong').length >= 3, 'three pongs');
    } finally {
      stop();
    }
  });

  it('refuses a receive m-line for a stream outside the subscriber\'s grant and sends nothing on it', async () => {
    const room = 'grants';
    const pub = await publisher(room, [2, 3]);
    const allowed = await subscriber(room, 'allowed', { subscribe_streams: [2] }, [2]);
    const denied = await subscriber(room, 'denied', { subscribe_room: false, subscribe_streams: [3] }, [2, 3]);
    assert.deepEqual(allowed.refused, []);
    assert.deepEqual(denied.refused, [denied.sub.mid(2, 'recv')]);
    await allowed.sub.waitConnected();
    await denied.sub.waitConnected();
    // the denied subscriber's connection carries the stream it may receive: the refusal is per m-line
    await pump(pub, [2, 3], () => allowed.sub.received(2).length >= 20 && denied.sub.received(3).length >= 20, 'packets of both streams');
    assert.equal(denied.sub.received(2).length, 0);
  });

  it('refuses a send m-line for a stream the session does not publish, and an audience cannot publish', async () => {
    const room = 'sending';
    const speaker = await client(await token(room, 'speaker', { publish_streams: [4, 5] }));
    assert.equal((await speaker.publish(4, 'video')).type, 'published');
    const result = await speaker.negotiate([send(4), send(5)]);
    assert.deepEqual(result.refused, [speaker.mid(5, 'send')]);

    const audience = await client(await token(room, 'audience', { role: 'audience', subscribe_room: true }));
    const reply = await audience.publish(6, 'video');
    assert.equal(reply.type, 'error');
    assert.equal(reply['code'], 'stream_not_allowed');
    const refused = await audience.negotiate([send(6), recv(4)]);
    assert.deepEqual(refused.refused, [audience.mid(6, 'send')]);

    // RTP on the refused m-lines goes nowhere: a receiver of stream 5 gets nothing while stream 4 flows
    await speaker.waitConnected();
    await audience.waitConnected();
    const watcher = await subscriber(room, 'watcher', { subscribe_room: true }, [4, 5, 6]);
    assert.deepEqual(watcher.refused, []);
    await watcher.sub.waitConnected();
    let n = 0;
    await waitFor(() => {
      if (watcher.sub.received(4).length >= 20) return true;
      n += 1;
      speaker.sendRtp(4, vp8Payload(100, n % 10 === 1));
      speaker.sendRtp(5, vp8Payload(100));
      audience.sendRtp(6, vp8Payload(100));
      return false;
    }, 'stream 4 at the watcher');
    assert.equal(watcher.sub.received(5).length, 0);
    assert.equal(watcher.sub.received(6).length, 0);
  });

  it('answers an invalid offer with rtc_invalid_offer and keeps the session working', async () => {
    const room = 'invalid';
    const pub = await publisher(room, [7]);
    const sub = await client(await token(room, 'sub', { role: 'audience', subscribe_room: true }));
    const bad = await sub.offer('v=0\r\nthis is not SDP\r\n', []);
    assert.equal(bad.type, 'error');
    assert.equal(bad['code'], 'rtc_invalid_offer');

    // a complete offer from another peer, but `tracks` names a mid that is not in it
    const other = createLoopbackPeer();
    other.addTransceiver('video', { direction: 'recvonly' });
    const sdp = await gatheredOffer(other);
    await other.close();
    const absent = await sub.offer(sdp, [{ mid: 'nope', stream_id: 7, direction: 'recv' }]);
    assert.equal(absent.type, 'error');
    assert.equal(absent['code'], 'rtc_invalid_offer');
    // and without its fingerprint
    const bare = await sub.offer(sdp.split(/\r?\n/).filter((l) => !l.startsWith('a=fingerprint')).join('\r\n'), []);
    assert.equal(bare.type, 'error');
    assert.equal(bare['code'], 'rtc_invalid_offer');
    await assert.rejects(sub.negotiate([recv(7)], { mungeSdp: () => 'garbage' }), (e: unknown) => e instanceof RtcOfferError && e.code === 'rtc_invalid_offer');
    // a data channel m-line, a second certificate, or more candidates than the server checks
    const withData = `${sdp.trimEnd()}\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\na=mid:data\r\n`;
    const secondCert = sdp.replace(/(a=fingerprint:sha-256 )[0-9A-F:]+/i, '$1AB:CD');
    const candidate = (i: number): string => `a=candidate:${i} 1 udp 2130706431 10.9.${i >> 8}.${i & 255} 40000 typ host`;
    const crowded = sdp.replace(/(a=mid:[^\r\n]+)/, `$1\r\n${Array.from({ length: 33 }, (_, i) => candidate(i)).join('\r\n')}`);
    for (const [what, offer] of [['data channel', withData], ['two certificates', `${secondCert.trimEnd()}\r\n${fingerprintLine(sdp)}\r\n`], ['33 candidates', crowded]] as const) {
      const refused = await sub.offer(offer, []);
      assert.equal(refused['code'], 'rtc_invalid_offer', what);
    }

    // the next valid offer on the same session is answered, connects and carries media
    assert.equal((await sub.wire.request({ type: 'ping' })).type, 'pong');
    const after = await sub.negotiate([recv(7)]);
    assert.deepEqual(after.refused, []);
    await sub.waitConnected();
    await pump(pub, [7], () => sub.received(7).length >= 5, 'packets after the invalid offers');
    // a renegotiation may not bring another certificate
    const swapped = await sub.offer((sub.pc.localDescription?.sdp ?? '').replace(/(a=fingerprint:sha-256 )[0-9A-F:]+/gi, '$1AB:CD'), []);
    assert.equal(swapped['code'], 'rtc_invalid_offer');
  });

  it('refuses a peer that presents the offered certificate without holding its private key', async () => {
    const room = 'forged-key';
    const pub = await publisher(room, [11]);
    // certificate A with key B: what someone on the path who saw A could present
    const [a, b] = [await generateDtlsKeys(), await generateDtlsKeys()];
    const honest = await client(await token(room, 'honest', { role: 'audience', subscribe_room: true }));
    const forged = await RtcTestClient.join(mediaUrl, await token(room, 'forged', { role: 'audience', subscribe_room: true }), {
      peer: { dtls: { keys: { ...a, keyPem: b.keyPem } } },
    });
    clients.push(forged);
    await forged.negotiate([recv(11)]);
    await honest.negotiate([recv(11)]);
    await honest.waitConnected();
    await pump(pub, [11], () => honest.received(11).length >= 20, 'packets at the honest subscriber');
    // ICE works, the DTLS handshake does not: the forged peer never connects and gets nothing
    assert.notEqual(forged.pc.connectionState, 'connected');
    assert.equal(forged.received(11).length, 0);
  });

  it('binds the peer connection to the offer\'s certificate: a second peer with the ICE credentials gets no media', async () => {
    const room = 'binding';
    const pub = await publisher(room, [9]);
    const victim = await client(await token(room, 'victim', { role: 'audience', subscribe_room: true }));
    const { answer } = await victim.negotiate([recv(9)]);
    await victim.waitConnected();
    await pump(pub, [9], () => victim.received(9).length >= 5, 'packets at the victim');

    // another DTLS certificate, the victim's ICE credentials (as if read off the offer) and the server's answer
    const offer = victim.pc.localDescription!.sdp;
    const ufrag = /a=ice-ufrag:(\S+)/.exec(offer)![1]!;
    const pwd = /a=ice-pwd:(\S+)/.exec(offer)![1]!;
    const intruder = createLoopbackPeer({ dtls: { keys: await generateDtlsKeys() } });
    try {
      const transceiver = intruder.addTransceiver('video', { direction: 'recvonly' });
      for (const transport of intruder.iceTransports) {
        transport.connection.localUsername = ufrag;
        transport.connection.localPassword = pwd;
      }
      const stolen: Buffer[] = [];
      transceiver.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((packet) => stolen.push(packet.payload)));
      const sdp = await gatheredOffer(intruder);
      assert.ok(sdp.includes(`a=ice-ufrag:${ufrag}`), 'the intruder uses the victim\'s ICE credentials');
      assert.notEqual(fingerprintLine(sdp), fingerprintLine(offer));
      await intruder.setRemoteDescription({ type: 'answer', sdp: answer['sdp'] as string });
      // its connectivity checks pass (the credentials are right): what stops it is DTLS
      await waitFor(() => intruder.iceConnectionState === 'connected' || intruder.iceConnectionState === 'completed', 'the intruder\'s ICE checks');
      const start = victim.received(9).length;
      await pump(pub, [9], () => victim.received(9).length >= start + 200, 'packets at the victim while the intruder tries');
      assert.equal(stolen.length, 0);
      assert.notEqual(intruder.connectionState, 'connected');
    } finally {
      await intruder.close();
    }
  });

  it('closes a revoked subscriber with 4003 and stops its RTP while the other subscriber keeps receiving', async () => {
    const room = 'revocation';
    const pub = await publisher(room, [10]);
    const revokedToken = await token(room, 'revoked', { role: 'audience', subscribe_room: true });
    const revoked = await client(revokedToken);
    const kept = await subscriber(room, 'kept', { subscribe_room: true }, [10]);
    await revoked.negotiate([recv(10)]);
    await revoked.waitConnected();
    await kept.sub.waitConnected();
    await pump(pub, [10], () => revoked.received(10).length >= 5 && kept.sub.received(10).length >= 5, 'packets before the revocation');

    await issuer.revoke(revokedToken);
    let closeCode: number | undefined;
    void revoked.closed().then((info) => {
      closeCode = info.code;
    });
    // keep sending while the revocation travels: the subscriber stays fed until its session ends
    await pump(pub, [10], () => closeCode !== undefined, 'the revoked session to close');
    assert.equal(closeCode, 4003);
    // packets already on their way when the session closed may still land: take the count once the
    // kept subscriber got a few more, then it must not move while the kept one gets many more
    let mark = kept.sub.received(10).length;
    await pump(pub, [10], () => kept.sub.received(10).length >= mark + 10, 'packets in flight to land');
    const atClose = revoked.received(10).length;
    mark = kept.sub.received(10).length;
    await pump(pub, [10], () => kept.sub.received(10).length >= mark + 150, 'packets at the kept subscriber after the revocation');
    assert.equal(revoked.received(10).length, atClose);
  });
});
