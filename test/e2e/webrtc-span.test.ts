/**
 * A room whose Chromium pages are on different media nodes (docs/operations/scale-out.md, "Rooms
 * across media nodes"): a cluster on PostgreSQL and Redis with two media nodes of their own
 * processes, each taking two sessions, so that placement alone puts a room of four on both. Each
 * stream crosses between the nodes over the relay (docs/protocol/relay.md): the pages see and hear
 * each other across it, what crosses is still end-to-end encrypted, each subscriber gets the
 * simulcast layer its own bounds ask for, and a revocation closes a session on the other node.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RtcRoom, TokenResponse } from '@rtc/protocol';
import { bundleSdk, launchChromium, servePages, type PageSite } from '../helpers/browser.ts';
import { request } from '../helpers/http.ts';
import { TokenIssuer } from '../helpers/media-session.ts';
import { RtcTestClient, waitFor } from '../helpers/webrtc-client.ts';
import { WEBRTC_PAGE, type PageMeasure } from '../helpers/webrtc-page.ts';
import {
  assertEncryptedAudio, closeRtcPage, joinPage, measurePage, openRtcPage, publishFromPage, seesAndHears, setPageVideoBounds, untilMeasured,
} from '../helpers/webrtc-page-driver.ts';
import { startSpanCluster, type SpanCluster } from './span-cluster.ts';

const ROOM = 'town-hall';
const [ALICE_MIC, ALICE_CAMERA, CAROL_MIC, CAROL_CAMERA] = [1, 2, 3, 4];
// generous: four pages, three platform processes, PostgreSQL and Redis on a loaded 2-core machine
const MEDIA_WAIT_MS = 60_000;
const TEST_TIMEOUT_MS = 180_000;

interface Member {
  readonly user: string;
  readonly page: Page;
  readonly token: TokenResponse;
  /** `host:port` of the media node its token named. */
  readonly node: string;
}

const nodeOf = (token: TokenResponse): string => `${token.media.sfu_host}:${token.media.sfu_port}`;
const remote = (m: PageMeasure, streamId: number): PageMeasure['remote'][number] | undefined => m.remote.find((r) => r.streamId === streamId);

describe('a room of Chromium pages across two media nodes (PostgreSQL, Redis, RTC_MEDIA_MAX_SESSIONS=2)', () => {
  let cluster: SpanCluster | undefined;
  let issuer: TokenIssuer;
  let site: PageSite | undefined;
  let browser: Browser | undefined;
  const members = new Map<string, Member>();
  const member = (user: string): Member => members.get(user) ?? assert.fail(`${user} joined`);

  before(async () => {
    cluster = await startSpanCluster({ mediaNodes: 2, maxSessions: 2 });
    const api = cluster.api.api;
    issuer = await TokenIssuer.create(() => api);
    site = await servePages({
      '/': ['text/html; charset=utf-8', WEBRTC_PAGE],
      '/sdk.js': ['text/javascript; charset=utf-8', await bundleSdk()],
    });
    browser = await launchChromium({ fakeMedia: true });
    // alice and carol publish a microphone and a camera; bob and dave only subscribe
    const grants: Record<string, { readonly role: string; readonly publish_streams?: number[] }> = {
      alice: { role: 'speaker', publish_streams: [ALICE_MIC, ALICE_CAMERA] },
      bob: { role: 'participant' },
      carol: { role: 'speaker', publish_streams: [CAROL_MIC, CAROL_CAMERA] },
      dave: { role: 'participant' },
    };
    // each joins before the next token is placed, as people arrive one after another
    for (const [user, grant] of Object.entries(grants)) {
      const page = await openRtcPage(browser, site.url);
      const token = await issuer.issue({ room_id: ROOM, user_id: user, subscribe_room: true, ...grant });
      await joinPage(page, token);
      members.set(user, { user, page, token, node: nodeOf(token) });
    }
    // a 640x480 camera goes out as two simulcast layers (320x240 and 640x480); 15 frames a second leave room on a loaded machine
    const published = await publishFromPage(member('alice').page, ['audio', 'video'], [ALICE_MIC, ALICE_CAMERA],
      { video: { width: 640, height: 480, frameRate: 15 } });
    assert.deepEqual(published.map((p) => p.ok), [true, true], JSON.stringify(published));
    assert.deepEqual((await publishFromPage(member('carol').page, ['audio', 'video'], [CAROL_MIC, CAROL_CAMERA])).map((p) => p.ok), [true, true]);
  });

  after(async () => {
    for (const m of members.values()) await closeRtcPage(m.page).catch(() => undefined);
    await browser?.close();
    await site?.close();
    await cluster?.stop();
  });

  it('places the room on both nodes by load alone, and pages on different nodes decode each other\'s video and hear each other\'s audio', { timeout: TEST_TIMEOUT_MS }, async () => {
    // two sessions fill the room's first node: the next two open it on the other
    const [a, b, c, d] = ['alice', 'bob', 'carol', 'dave'].map((u) => member(u).node);
    assert.ok(a === b && c === d && a !== c, `alice and bob on one node, carol and dave on the other: ${[a, b, c, d].join(', ')}`);
    const res = await request(`${cluster!.api.api}/v1/rtc/rooms/${ROOM}`, { method: 'GET', headers: { authorization: issuer.customer.auth } });
    assert.equal(res.status, 200, res.text);
    const room = res.json<RtcRoom>();
    assert.deepEqual([...room.media_nodes].sort(), [a, c].sort());
    assert.deepEqual(Object.fromEntries(room.participants.map((p) => [p.user_id, p.media_node])),
      { alice: a, bob: b, carol: c, dave: d });

    // each publisher's streams cross to the other node: to the other publisher and to the subscriber there
    await seesAndHears(member('carol').page, 'alice', 'carol (other node)', MEDIA_WAIT_MS);
    await seesAndHears(member('alice').page, 'carol', 'alice (other node)', MEDIA_WAIT_MS);
    await seesAndHears(member('dave').page, 'alice', 'dave (other node)', MEDIA_WAIT_MS);
    await seesAndHears(member('bob').page, 'carol', 'bob (other node)', MEDIA_WAIT_MS);
    // and to the subscriber on the publisher's own node
    await seesAndHears(member('bob').page, 'alice', 'bob (same node)', MEDIA_WAIT_MS);
    await seesAndHears(member('dave').page, 'carol', 'dave (same node)', MEDIA_WAIT_MS);
    for (const user of ['alice', 'carol']) {
      // every frame went through the page's encryption worker, both ways, none dropped
      const { e2ee } = await measurePage(member(user).page);
      assert.ok(e2ee && e2ee.encrypted > 10 && e2ee.decrypted > 10 && e2ee.dropped === 0, `${user}: ${JSON.stringify(e2ee)}`);
    }
  });

  it('gives a bounded subscriber on one node the small layer while the others, on both nodes, keep the top one', { timeout: TEST_TIMEOUT_MS }, async () => {
    const topLayer = (m: PageMeasure): boolean => remote(m, ALICE_CAMERA)?.frameWidth === 640 && (remote(m, ALICE_CAMERA)?.framesDecoded ?? 0) > 0;
    // before any bounds, every subscriber decodes the 640x480 layer (once its own node's estimate allows it)
    for (const user of ['bob', 'carol', 'dave']) await untilMeasured(member(user).page, topLayer, `${user} decodes alice's 640x480 layer`, MEDIA_WAIT_MS);

    // dave, on the other node, bounds alice's camera to 320x240: its node asks for the small layer, and dave decodes it
    await setPageVideoBounds(member('dave').page, ALICE_CAMERA, { maxWidth: 320, maxHeight: 240 });
    const small = await untilMeasured(member('dave').page, (m) => remote(m, ALICE_CAMERA)?.layer?.layer === 0 && remote(m, ALICE_CAMERA)!.frameWidth === 320,
      'dave gets the 320x240 layer', MEDIA_WAIT_MS);
    assert.ok(small.videoReports.some((r) => r.type === 'streamLayer' && r.streamId === ALICE_CAMERA && r['layer'] === 0), JSON.stringify(small.videoReports));

    // carol, on dave's node, and bob, on alice's, still decode the top layer, and more of it
    for (const user of ['carol', 'bob']) {
      const m = await untilMeasured(member(user).page, topLayer, `${user} keeps the 640x480 layer`, MEDIA_WAIT_MS);
      const decoded = remote(m, ALICE_CAMERA)!.framesDecoded;
      await untilMeasured(member(user).page, (x) => topLayer(x) && remote(x, ALICE_CAMERA)!.framesDecoded > decoded + 10,
        `${user} goes on decoding the 640x480 layer`, MEDIA_WAIT_MS);
    }
    const stillSmall = await measurePage(member('dave').page);
    assert.equal(remote(stillSmall, ALICE_CAMERA)?.layer?.layer, 0, JSON.stringify(stillSmall.remote));
    assert.equal(stillSmall.e2ee?.dropped ?? 0, 0, JSON.stringify(stillSmall.e2ee));
  });

  it('forwards ciphertext across the relay: a subscriber on the other node opens a page\'s frames with the stream key and not without', { timeout: TEST_TIMEOUT_MS }, async () => {
    // a client of its own (werift in Node) on carol's node receives alice's microphone as that node forwards it, relayed from alice's node
    const carolNode = cluster!.media.find((s) => new URL(s.urls['media']!).host === member('carol').node)!;
    const token = await issuer.issue({ room_id: ROOM, user_id: 'victor', role: 'participant', subscribe_streams: [ALICE_MIC] });
    const victor = await RtcTestClient.join(carolNode.urls['media']!, token);
    try {
      await waitFor(() => (victor.wire.streamKeys.get(ALICE_MIC)?.size ?? 0) > 0, 'the microphone\'s stream key', MEDIA_WAIT_MS);
      assert.deepEqual((await victor.negotiate([{ streamId: ALICE_MIC, kind: 'audio', direction: 'recv' }])).refused, []);
      const packets = await victor.waitForRtp(ALICE_MIC, 25, MEDIA_WAIT_MS);
      assertEncryptedAudio(packets.slice(5), victor.wire.streamKeys.get(ALICE_MIC)!);
    } finally {
      await victor.close();
    }
  });

  it('revoking a publisher on the other node closes its session within a second; its tracks end everywhere and the others go on', { timeout: TEST_TIMEOUT_MS }, async () => {
    const carol = member('carol');
    await issuer.revoke(carol.token);
    // from the revocation's answer, as the platform's revocation latency is defined (docs/protocol/media.md, section 7)
    const answeredAt = Date.now();
    const closed = await untilMeasured(carol.page, (m) => m.revokedAt !== undefined && m.sessionState === 'closed', 'carol revoked');
    assert.ok(closed.revokedAt! - answeredAt < 1000, `revoked ${Math.round(closed.revokedAt! - answeredAt)} ms after the answer`);
    assert.deepEqual((await measurePage(carol.page)).remote, []);

    // carol's tracks end on her own node (dave) and across the relay (alice, bob)
    for (const user of ['alice', 'bob', 'dave']) {
      await untilMeasured(member(user).page, (m) => m.remote.every((r) => r.userId !== 'carol'), `carol's tracks end at ${user}`, MEDIA_WAIT_MS);
    }
    // alice's media goes on, on her node and across the relay
    await seesAndHears(member('bob').page, 'alice', 'bob after the revocation', MEDIA_WAIT_MS);
    await seesAndHears(member('dave').page, 'alice', 'dave after the revocation', MEDIA_WAIT_MS);
    for (const user of ['alice', 'bob', 'dave']) assert.equal((await measurePage(member(user).page)).sessionState, 'connected', user);
  });
});
