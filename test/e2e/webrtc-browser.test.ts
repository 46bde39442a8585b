import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { MediaSessionList, RtcRoom, TokenResponse } from '@rtc/protocol';
import { bundleSdk, launchChromium, servePages, type PageSite } from '../helpers/browser.ts';
import { startCoturn, type Coturn } from '../helpers/coturn.ts';
import type { RunningServer } from '../helpers/platform.ts';
import { request } from '../helpers/http.ts';
import { RtcTestClient, waitFor } from '../helpers/webrtc-client.ts';
import { TcpProxy, TokenIssuer } from '../helpers/media-session.ts';
import { startMediaServer } from './media-server.ts';
import { WEBRTC_PAGE, type PageMeasure, type PageRtc } from '../helpers/webrtc-page.ts';
import {
  assertEncryptedAudio, closeRtcPage as closePage, joinPage as join, measurePage as rtc, openRtcPage, publishFromPage as publish, seesAndHears,
  sentFromPage as sent, setPageVideoBounds, untilMeasured as until,
} from '../helpers/webrtc-page-driver.ts';

const CAMERA = 2;
const MIC = 1;

describe('audio and video between browsers over WebRTC (Chromium, fake camera and microphone)', () => {
  let coturn: Coturn | undefined;
  let server: RunningServer | undefined;
  let issuer: TokenIssuer;
  let site: PageSite | undefined;
  let browser: Browser | undefined;

  before(async () => {
    const secret = 'turn-shared-secret-for-webrtc-tests';
    // coturn relays from an address of its own: a browser's direct pair from 127.0.0.1 is not relayed
    coturn = await startCoturn({ secret, relayIp: '127.0.0.2' });
    server = await startMediaServer({
      env: { RTC_TURN_SECRET: secret, RTC_TURN_URIS: `turn:${coturn.host}:${coturn.port}?transport=udp`, RTC_TURN_RELAY_IPS: coturn.relayIp },
    });
    const api = server.api;
    issuer = await TokenIssuer.create(() => api);
    site = await servePages({
      '/': ['text/html; charset=utf-8', WEBRTC_PAGE],
      '/sdk.js': ['text/javascript; charset=utf-8', await bundleSdk()],
    });
    browser = await launchChromium({ fakeMedia: true });
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await server?.stop();
    await coturn?.stop();
  });

  const openPage = (): Promise<Page> => openRtcPage(browser!, site!.url);
  type Sent = Awaited<ReturnType<typeof sent>>;
  /** The page's sent encodings once `ok` holds, or as they are after `limitMs`: a layer shows in the stats once it has sent. */
  const sentOnce = async (page: Page, ok: (encodings: Sent) => boolean, limitMs = 20_000): Promise<Sent> => {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const encodings = await sent(page);
      if (ok(encodings) || Date.now() > deadline) return encodings;
      await page.waitForTimeout(100);
    }
  };
  // stream ids are room-wide: each publisher of a room gets its own pair
  let nextStream = 10;
  const speaker = (room: string, user: string, extra: Record<string, unknown> = {}): Promise<TokenResponse> => {
    nextStream += 2;
    return issuer.issue({ room_id: room, user_id: user, role: 'speaker', publish_streams: [nextStream, nextStream + 1], subscribe_room: true, ...extra });
  };
  const speakerAs = (room: string, user: string, streams: readonly number[]): Promise<TokenResponse> =>
    issuer.issue({ room_id: room, user_id: user, role: 'speaker', publish_streams: [...streams], subscribe_room: true, ttl_seconds: 60 });

  it('two pages each decode the other\'s video (not black) and hear the other\'s audio, encrypted end to end', async () => {
    const [a, b] = [await openPage(), await openPage()];
    try {
      assert.deepEqual((await join(a, await issuer.issue({
        room_id: 'call', user_id: 'alice', role: 'speaker', publish_streams: [MIC, CAMERA], subscribe_room: true,
      }))).webrtc, true);
      await join(b, await speaker('call', 'bob'));
      assert.deepEqual(await publish(a, ['audio', 'video'], [MIC, CAMERA]), [
        { ok: true, streamId: MIC, kind: 'audio' }, { ok: true, streamId: CAMERA, kind: 'video' }]);
      // by default, the grant's first stream ids not in use
      assert.deepEqual((await publish(b, ['audio', 'video'])).map((r) => r.ok), [true, true]);
      await seesAndHears(a, 'bob', 'alice');
      await seesAndHears(b, 'alice', 'bob');
      const m = await rtc(b);
      // every frame went through the encryption worker both ways, none dropped once keys were in place
      assert.ok(m.e2ee && m.e2ee.encrypted > 10 && m.e2ee.decrypted > 10, JSON.stringify(m.e2ee));
      assert.equal(m.candidateType, 'host');
    } finally {
      await closePage(a);
      await closePage(b);
    }
  });

  it('sends one layer with simulcast off and two from a 640x480 camera by default; a subscriber\'s bounds pick the layer it gets, and a hidden video comes back', async () => {
    const [a, b, c] = [await openPage(), await openPage(), await openPage()];
    try {
      await join(a, await speaker('layers', 'lena'));
      await join(b, await speaker('layers', 'milo'));
      await join(c, await speaker('layers', 'nora'));
      const capture = { video: { width: 640, height: 480, frameRate: 30 } };
      const [aVideo] = await publish(a, ['video'], undefined, { ...capture, simulcast: false });
      const [cVideo] = await publish(c, ['video'], undefined, capture);
      const aEncodings = await sentOnce(a, (e) => e.length > 0);
      assert.deepEqual(aEncodings.map((e) => e.rid), [undefined], JSON.stringify(aEncodings));
      // the media role's answer has the RID header extension: the camera goes out as the two layers Chromium encodes at 640x480
      // (the first offer's trackless video m-line, which asked whether the server takes simulcast, may show as an encoding of its own)
      const cEncodings = await sentOnce(c, (e) => e.filter((x) => x.rid !== undefined).length >= 2);
      assert.deepEqual(cEncodings.filter((e) => e.rid !== undefined).map((e) => e.rid).sort(), ['f', 'h'], JSON.stringify(cEncodings));
      const remote = (m: PageMeasure, id: number | undefined) => m.remote.find((r) => r.streamId === id);
      const decoded = (m: PageMeasure, id: number | undefined) => remote(m, id)?.framesDecoded ?? 0;
      await until(b, (m) => decoded(m, aVideo!.streamId) > 10 && decoded(m, cVideo!.streamId) > 10, 'milo decodes both');

      // the room service API lists both cameras: lena's one layer without a rid, nora's two rids smallest first,
      // their sizes and rates once the media node's heartbeat has measured them
      const streamsOf = async (user: string) => {
        const res = await request(`${server!.api}/v1/rtc/rooms/layers`, { method: 'GET', headers: { authorization: issuer.customer.auth } });
        return res.json<RtcRoom>().participants.find((p) => p.user_id === user)?.streams ?? [];
      };
      // a layer's rate is that of its last heartbeat window: on a loaded machine Chromium's own estimate
      // may rest the larger layer for a window (its rate then reads null), so each counts once measured
      const rated = new Set<string | null>();
      const deadline = Date.now() + 60_000;
      for (;; await b.waitForTimeout(200)) {
        const [lena, nora] = [await streamsOf('lena'), await streamsOf('nora')];
        for (const layer of nora[0]?.layers ?? []) if (layer.bitrate !== null) rated.add(layer.rid);
        const measured = nora[0]?.layers.length === 2 && nora[0].layers.every((l) => l.width !== null && rated.has(l.rid));
        if (measured) {
          assert.deepEqual(lena.map((x) => [x.stream_id, x.kind, x.source, x.muted, x.layers.map((l) => l.rid)]),
            [[aVideo!.streamId, 'video', 'camera', false, [null]]]);
          assert.deepEqual(nora[0]!.layers.map((l) => l.rid), ['h', 'f']);
          assert.ok(nora[0]!.layers[0]!.width! < nora[0]!.layers[1]!.width!, JSON.stringify(nora));
          break;
        }
        assert.ok(Date.now() < deadline, `the layers are never measured: ${JSON.stringify(nora)}`);
      }

      // bounded to 320x240: the half-size layer (layer 0), announced by a layer report, decoded at that size
      const setBounds = (id: number, bounds: Parameters<PageRtc['setVideoBounds']>[1]) => setPageVideoBounds(b, id, bounds);
      await setBounds(cVideo!.streamId!, { maxWidth: 320, maxHeight: 240 });
      const half = await until(b, (m) => remote(m, cVideo!.streamId)?.layer?.layer === 0 && remote(m, cVideo!.streamId)!.frameWidth === 320,
        'milo gets the 320x240 layer', 30_000);
      assert.ok(half.videoReports.some((r) => r.type === 'streamLayer' && r.streamId === cVideo!.streamId && r['layer'] === 0), JSON.stringify(half.videoReports));

      // hidden, then shown again: the video comes back without a pause report (the client hid it)
      // (another stream's pause for bandwidth, on a loaded machine, is not this one's)
      const reportsBefore = (await rtc(b)).videoReports.length;
      await setBounds(cVideo!.streamId!, { maxWidth: 0 });
      await setBounds(cVideo!.streamId!, null);
      const before = decoded(await rtc(b), cVideo!.streamId);
      const back = await until(b, (m) => decoded(m, cVideo!.streamId) > before + 10, 'milo decodes nora again', 30_000);
      const since = back.videoReports.slice(reportsBefore);
      assert.ok(!since.some((r) => r.type === 'streamPaused' && r.streamId === cVideo!.streamId), JSON.stringify(since));
      assert.equal(back.sessionState, 'connected');
      assert.deepEqual(back.events.filter((e) => e.startsWith('mediaError')), []);
      // every frame that arrived decrypted, across the layer switches
      assert.equal(back.e2ee?.dropped ?? 0, 0, JSON.stringify(back.e2ee));
    } finally {
      for (const p of [a, b, c]) await closePage(p);
    }
  });

  it('keeps the media of a session whose m-lines outgrow one peer connection: the next one carries it, and quick changes wait for the control rate', async () => {
    const [a, b] = [await openPage(), await openPage()];
    try {
      await join(a, await speakerAs('churn', 'olga', [61, 62]));
      await join(b, await speakerAs('churn', 'piet', [63, 64]));
      // 60 publications of one microphone: each a new m-line, past the 56 a peer connection takes
      await a.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.churn(61, 60));
      const [video] = await publish(a, ['video'], [62]);
      assert.equal(video?.ok, true, JSON.stringify(video));
      const m = await until(b, (x) => (x.remote.find((r) => r.streamId === 62)?.framesDecoded ?? 0) > 10, 'piet decodes olga\'s camera');
      assert.deepEqual(m.events.filter((e) => e.startsWith('mediaError')), []);
      const own = await rtc(a);
      assert.deepEqual(own.events.filter((e) => e.startsWith('mediaError') || e.startsWith('localStreamEnded')), []);
    } finally {
      await closePage(a);
      await closePage(b);
    }
  });

  it('works with iceTransportPolicy "relay" through coturn, with the token\'s TURN credentials', async () => {
    const [a, b] = [await openPage(), await openPage()];
    try {
      await join(a, await speaker('relay-call', 'carol', { turn: true }), { iceTransportPolicy: 'relay' });
      await join(b, await speaker('relay-call', 'dave', { turn: true }), { iceTransportPolicy: 'relay' });
      for (const p of [a, b]) assert.deepEqual((await publish(p, ['audio', 'video'])).map((r) => r.ok), [true, true]);
      await seesAndHears(a, 'dave', 'carol');
      await seesAndHears(b, 'carol', 'dave');
      // the selected pair's local candidate, once the stats name one (on a loaded machine they may lag the media)
      for (const p of [a, b]) assert.equal((await until(p, (m) => m.candidateType !== undefined, 'the selected candidate pair')).candidateType, 'relay');
    } finally {
      await closePage(a);
      await closePage(b);
    }
    // the media node recorded both sessions as relayed video of the fake camera's 640x480 (docs/console.md, "Usage kind of a session")
    const ended = async (): Promise<MediaSessionList['sessions']> => {
      const res = await request(`${server!.api}/v1/projects/${issuer.customer.projectId}/sessions?room_id=relay-call`, {
        method: 'GET', headers: { authorization: `Bearer ${issuer.customer.accessToken}` },
      });
      assert.equal(res.status, 200, res.text);
      return res.json<MediaSessionList>().sessions;
    };
    const deadline = Date.now() + 10_000;
    while ((await ended()).filter((s) => s.left_at !== null).length < 2) {
      assert.ok(Date.now() < deadline, 'both sessions ended');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual((await ended()).map((s) => [s.user_id, s.usage_kind, s.turn_relay]).sort(),
      [['carol', 'video_sd', true], ['dave', 'video_sd', true]]);
  });

  it('gives no track of a stream outside the grant, and an audience page cannot publish', async () => {
    const [pub, allowed, narrow, audience] = [await openPage(), await openPage(), await openPage(), await openPage()];
    try {
      await join(pub, await issuer.issue({ room_id: 'grants', user_id: 'erin', role: 'speaker', publish_streams: [MIC, CAMERA] }));
      await join(allowed, await issuer.issue({ room_id: 'grants', user_id: 'frank', role: 'participant', subscribe_streams: [CAMERA, MIC] }));
      // the narrow page may receive the microphone only
      await join(narrow, await issuer.issue({ room_id: 'grants', user_id: 'grace', role: 'participant', subscribe_streams: [MIC] }));
      await join(audience, await issuer.issue({ room_id: 'grants', user_id: 'heidi', role: 'audience', subscribe_room: true }));
      await publish(pub, ['audio', 'video'], [MIC, CAMERA]);

      const refused = await publish(audience, ['video']);
      assert.equal(refused.length, 1);
      assert.equal(refused[0]!.ok, false);
      assert.equal(refused[0]!.code, 'stream_not_allowed');

      await seesAndHears(allowed, 'erin', 'frank (both streams granted)');
      await seesAndHears(audience, 'erin', 'heidi (audience, subscribe_room)');
      const narrowView = await until(narrow, (m) => m.remote.some((r) => r.kind === 'audio' && r.totalAudioEnergy > 0), 'grace hears erin');
      assert.deepEqual(narrowView.remote.map((r) => r.kind), ['audio']);
      assert.ok(!narrowView.events.some((e) => e.startsWith(`trackSubscribed:${CAMERA}`)), narrowView.events.join());
      // the audience page published nothing: erin has no track from it
      assert.ok((await rtc(pub)).remote.every((r) => r.userId !== 'heidi'));
    } finally {
      for (const p of [pub, allowed, narrow, audience]) await closePage(p);
    }
  });

  it('the SFU forwards ciphertext: a subscriber opens it with the stream key and not without', async () => {
    const pub = await openPage();
    let node: RtcTestClient | undefined;
    try {
      await join(pub, await issuer.issue({ room_id: 'cipher', user_id: 'peggy', role: 'speaker', publish_streams: [MIC] }));
      // a second, independent client (werift in Node) receives the microphone as the SFU forwards it
      node = await RtcTestClient.join(server!.urls['media']!, await issuer.issue({ room_id: 'cipher', user_id: 'victor', role: 'participant', subscribe_streams: [MIC] }));
      await publish(pub, ['audio'], [MIC]);
      const subscriber = node;
      await waitFor(() => (subscriber.wire.streamKeys.get(MIC)?.size ?? 0) > 0, 'the microphone\'s stream key');
      assert.deepEqual((await node.negotiate([{ streamId: MIC, kind: 'audio', direction: 'recv' }])).refused, []);
      const packets = await node.waitForRtp(MIC, 20);
      assertEncryptedAudio(packets.slice(5), node.wire.streamKeys.get(MIC)!);
    } finally {
      await node?.close();
      await closePage(pub);
    }
  });

  it('keeps media flowing through a renewal, and brings it back after the network drops', async () => {
    const [a, b] = [await openPage(), await openPage()];
    const proxy = await TcpProxy.start(server!.urls['media']!);
    try {
      const bTokens = () => speakerAs('renew-call', 'rupert', [40, 41]);
      await b.exposeFunction('nextToken', bTokens);
      await join(a, await speakerAs('renew-call', 'quinn', [42, 43]));
      // rupert renews about two seconds after joining (60 s tokens, renewed 58 s before expiry)
      await join(b, await bTokens(), undefined, { url: proxy.url, tokens: true, renewBeforeSeconds: 58 });
      await publish(a, ['audio', 'video']);
      await publish(b, ['audio', 'video']);
      await seesAndHears(b, 'quinn', 'rupert');
      const renewed = await until(b, (m) => m.events.includes('renewed'), 'rupert renews');
      assert.ok(!renewed.events.some((e) => e.startsWith('trackUnsubscribed')), renewed.events.join());
      await seesAndHears(b, 'quinn', 'rupert after the renewal');
      await seesAndHears(a, 'rupert', 'quinn while rupert renews');

      // the network drops: a new media connection and a new peer connection, the tracks published again
      proxy.cut();
      await until(b, (m) => m.events.includes('reconnected'), 'rupert reconnects');
      await until(a, (m) => m.events.filter((e) => e.startsWith('trackSubscribed:40') || e.startsWith('trackSubscribed:41')).length === 4,
        'quinn gets rupert\'s tracks again');
      await seesAndHears(a, 'rupert', 'quinn after rupert reconnected');
      await seesAndHears(b, 'quinn', 'rupert after reconnecting');
    } finally {
      await closePage(a);
      await closePage(b);
      await proxy.close();
    }
  });

  it('revoking one page stops its media and closes its session within a second while the others keep theirs', async () => {
    const [a, b, c] = [await openPage(), await openPage(), await openPage()];
    try {
      await join(a, await speaker('revoke-call', 'ivan'));
      const bToken = await speaker('revoke-call', 'judy');
      await join(b, bToken);
      await join(c, await speaker('revoke-call', 'mallory'));
      for (const p of [a, b, c]) assert.deepEqual((await publish(p, ['audio', 'video'])).map((r) => r.ok), [true, true]);
      await seesAndHears(b, 'ivan', 'judy');
      await seesAndHears(c, 'ivan', 'mallory');
      await seesAndHears(a, 'judy', 'ivan');

      await issuer.revoke(bToken);
      // from the revocation's answer, as the platform's revocation latency is defined (docs/protocol/media.md, section 7)
      const answeredAt = Date.now();
      const closed = await until(b, (m) => m.revokedAt !== undefined && m.sessionState === 'closed', 'judy revoked');
      assert.ok(closed.revokedAt! - answeredAt < 1000, `revoked ${Math.round(closed.revokedAt! - answeredAt)} ms after the answer`);
      // its peer connection is gone: no remote track left, no statistics to read (measured after the event)
      const bView = await rtc(b);
      assert.deepEqual(bView.remote, []);
      assert.deepEqual(bView.events.filter((e) => e.startsWith('trackUnsubscribed')).length, 4);
      assert.equal(bView.inboundPackets, 0);
      // the others lose judy's tracks and keep each other's media
      await until(a, (m) => m.remote.every((r) => r.userId !== 'judy'), 'judy\'s tracks end at ivan');
      await seesAndHears(a, 'mallory', 'ivan after the revocation');
      await seesAndHears(c, 'ivan', 'mallory after the revocation');
      // a newcomer's streams arrive on new m-lines after judy's went inactive
      const d = await openPage();
      try {
        await join(d, await speaker('revoke-call', 'oscar'));
        await publish(d, ['audio', 'video']);
        await seesAndHears(a, 'oscar', 'ivan, after judy\'s m-lines went inactive');
        await seesAndHears(d, 'ivan', 'oscar');
      } finally {
        await closePage(d);
      }
    } finally {
      for (const p of [a, b, c]) await closePage(p);
    }
  });
});
