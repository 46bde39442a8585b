/**
 * The app SDK in Firefox (Debian's firefox-esr over WebDriver BiDi, test/helpers/firefox.ts)
 * through the platform's media role: a camera goes out as simulcast layers, and what a subscriber
 * gets of it follows its bounds, with layer reports that carry the size decoded. Firefox offers the
 * RID header extension only on an m-line whose sender has rids, so the app SDK cannot learn from a
 * video m-line without rids whether the server takes simulcast (sdk/app/src/webrtc/simulcast.ts).
 * Under max-bundle Firefox offers every m-line but the first with port 0 and `a=bundle-only`, those
 * of a participant who left included: the answers keep them open, so the next publisher's arrive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import type { TokenResponse } from '@rtc/protocol';
import { bundleSdk, servePages, type PageSite } from '../helpers/browser.ts';
import { launchFirefox, openFirefoxPage, within } from '../helpers/firefox.ts';
import type { RunningServer } from '../helpers/platform.ts';
import { WEBRTC_PAGE, type PageEncoding, type PageMeasure, type PagePublishOptions, type PageRtc } from '../helpers/webrtc-page.ts';
import { TokenIssuer } from '../helpers/media-session.ts';
import { startMediaServer } from './media-server.ts';

type Remote = PageMeasure['remote'][number];

describe('the app SDK in Firefox, through the platform', () => {
  let server: RunningServer | undefined;
  let issuer: TokenIssuer;
  let site: PageSite | undefined;
  let firefox: Browser | undefined;

  before(async () => {
    // Firefox gathers host candidates on every interface: the server offers loopback only, where media flows
    server = await startMediaServer({ env: { RTC_MEDIA_ICE_ADDRESSES: '127.0.0.1' } });
    const api = server.api;
    issuer = await TokenIssuer.create(() => api);
    site = await servePages({
      '/': ['text/html; charset=utf-8', WEBRTC_PAGE],
      '/sdk.js': ['text/javascript; charset=utf-8', await bundleSdk()],
    });
    firefox = await launchFirefox();
  });

  after(async () => {
    await firefox?.close();
    await site?.close();
    await server?.stop();
  });

  const openPage = (): Promise<Page> => openFirefoxPage(firefox!, site!.url, '(globalThis.rtc !== undefined)');
  // every call into a page has a limit: a getStats() in flight when a peer connection closes never settles in Firefox
  const join = (page: Page, token: TokenResponse) =>
    within(page.evaluate((t) => (globalThis as unknown as { rtc: PageRtc }).rtc.join(t), token), 30_000, 'join');
  const publish = (page: Page, options: PagePublishOptions, kinds: readonly ('audio' | 'video')[] = ['video']) =>
    within(page.evaluate((k, o) => (globalThis as unknown as { rtc: PageRtc }).rtc.publish(k, undefined, o), kinds, options), 30_000, 'publish');
  const sent = (page: Page): Promise<PageEncoding[]> =>
    within(page.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.sent()), 10_000, 'sent');
  const measure = (page: Page): Promise<PageMeasure> =>
    within(page.evaluate(() => (globalThis as unknown as { rtc: PageRtc }).rtc.measure()), 10_000, 'measure');
  const setVideoBounds = (page: Page, streamId: number, bounds: Parameters<PageRtc['setVideoBounds']>[1]) =>
    within(page.evaluate((i, b) => (globalThis as unknown as { rtc: PageRtc }).rtc.setVideoBounds(i, b), streamId, bounds), 10_000, 'setVideoBounds');
  /** Polls `read` until `ok` holds, within `limitMs` (generous: two browsers and the platform on a loaded machine). */
  const until = async <T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string, limitMs = 60_000): Promise<T> => {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  /** The page decodes video (not black) and hears audio from `from`, and no renegotiation failed on it. */
  const seesAndHears = async (page: Page, from: string, what: string): Promise<void> => {
    const sees = (m: PageMeasure): boolean => {
      const video = m.remote.find((r) => r.kind === 'video' && r.userId === from);
      const audio = m.remote.find((r) => r.kind === 'audio' && r.userId === from);
      return video !== undefined && video.framesDecoded > 5 && video.brightness > 10 && audio !== undefined && audio.totalAudioEnergy > 0;
    };
    const m = await until(() => measure(page), (x) => sees(x) || x.events.some((e) => e.startsWith('mediaError')), `${what} sees and hears ${from}`);
    assert.deepEqual(m.events.filter((e) => e.startsWith('mediaError')), [], `${what}: renegotiations succeed`);
  };
  /** The layer told (`remote.layer`) is the one decoded: its size is the size of the frames decoded now. */
  const toldAsDecoded = (r: Remote | undefined, layer: number): boolean =>
    r !== undefined && r.framesDecoded > 0 && r.layer?.layer === layer && r.frameWidth > 0
    && r.layer.width === r.frameWidth && r.layer.height === r.frameHeight;

  it('publishes a 640x480 camera as two layers; a subscriber\'s 320x240 bounds switch it to the small one, each layer told at the size decoded', async () => {
    const [fox, owl] = [await openPage(), await openPage()];
    try {
      await join(fox, await issuer.issue({ room_id: 'firefox', user_id: 'fox', role: 'speaker', publish_streams: [21], subscribe_room: true }));
      await join(owl, await issuer.issue({ room_id: 'firefox', user_id: 'owl', role: 'speaker', publish_streams: [22], subscribe_room: true }));
      // 15 frames a second: two layers to encode and one to decode leave room on a loaded machine
      assert.deepEqual(await publish(fox, { video: { width: 640, height: 480, frameRate: 15 } }), [{ ok: true, streamId: 21, kind: 'video' }]);

      // the two layers of a 640x480 camera (defaultVideoLayers), each encoded
      const layers = (encodings: PageEncoding[]) => encodings.filter((e) => e.rid !== undefined && e.framesEncoded > 0);
      const encoded = await until(() => sent(fox), (e) => layers(e).length === 2, 'fox sends two simulcast layers');
      assert.deepEqual(layers(encoded).map((e) => e.rid), ['f', 'h'], JSON.stringify(encoded));

      // unbounded, owl gets the larger layer once its downlink estimate has room, told at the size it decodes
      const remote = (m: PageMeasure) => m.remote.find((r) => r.streamId === 21);
      await until(() => measure(owl), (m) => toldAsDecoded(remote(m), 1), 'owl decodes the larger layer as told', 120_000)
        .catch(async (err: unknown) => assert.fail(`${String(err)}; fox sends ${JSON.stringify(await sent(fox))}`));

      const boundedAt = Date.now();
      await setVideoBounds(owl, 21, { maxWidth: 320, maxHeight: 240 });
      const small = await until(() => measure(owl), (m) => toldAsDecoded(remote(m), 0) && remote(m)!.frameWidth <= 320, 'owl decodes the small layer as told');
      const switchedMs = Date.now() - boundedAt;
      process.stdout.write(`# firefox: bounds to the small layer decoded in ${switchedMs} ms\n`);
      assert.ok(small.videoReports.some((r) => r.type === 'streamLayer' && r.streamId === 21 && r['layer'] === 0), JSON.stringify(small.videoReports));
      assert.deepEqual(small.events.filter((e) => e.startsWith('mediaError')), []);
    } finally {
      await within(fox.browserContext().close(), 10_000, 'closing fox').catch(() => undefined);
      await within(owl.browserContext().close(), 10_000, 'closing owl').catch(() => undefined);
    }
  });

  it('decodes the video of each page that publishes after another one left: the left page\'s m-lines, offered bundle-only, stay open', async () => {
    const [ant, bee, cat] = [await openPage(), await openPage(), await openPage()];
    let dog: Page | undefined;
    const close = (page: Page) => within(page.browserContext().close(), 10_000, 'closing a page').catch(() => undefined);
    try {
      await join(ant, await issuer.issue({ room_id: 'recycle', user_id: 'ant', role: 'speaker', publish_streams: [31, 32], subscribe_room: true }));
      const beeToken = await issuer.issue({ room_id: 'recycle', user_id: 'bee', role: 'speaker', publish_streams: [33, 34], subscribe_room: true });
      await join(bee, beeToken);
      assert.deepEqual((await publish(ant, {}, ['audio', 'video'])).map((r) => r.ok), [true, true]);
      assert.deepEqual((await publish(bee, {}, ['audio', 'video'])).map((r) => r.ok), [true, true]);
      await seesAndHears(ant, 'bee', 'ant');

      // bee is revoked: its m-lines at ant go inactive; Firefox offers them with port 0 and a=bundle-only,
      // which the answer must not take for a rejection (docs/protocol/media.md, "Negotiation")
      await issuer.revoke(beeToken);
      await until(() => measure(ant), (m) => m.remote.every((r) => r.userId !== 'bee'), 'bee\'s tracks end at ant');
      await join(cat, await issuer.issue({ room_id: 'recycle', user_id: 'cat', role: 'speaker', publish_streams: [35, 36], subscribe_room: true }));
      assert.deepEqual((await publish(cat, {}, ['audio', 'video'])).map((r) => r.ok), [true, true]);
      await seesAndHears(ant, 'cat', 'ant, after bee\'s m-lines went inactive');

      // cat leaves (its page closes), and a fourth page publishes
      await close(cat);
      await until(() => measure(ant), (m) => m.remote.every((r) => r.userId !== 'cat'), 'cat\'s tracks end at ant');
      dog = await openPage();
      await join(dog, await issuer.issue({ room_id: 'recycle', user_id: 'dog', role: 'speaker', publish_streams: [37, 38], subscribe_room: true }));
      assert.deepEqual((await publish(dog, {}, ['audio', 'video'])).map((r) => r.ok), [true, true]);
      await seesAndHears(ant, 'dog', 'ant, after cat left');
      await seesAndHears(dog, 'ant', 'dog');
    } finally {
      for (const page of [ant, bee, cat, dog]) if (page) await close(page);
    }
  });

  it('rests the larger layer at Firefox\'s encoder while no subscriber needs it, and sends it again once one does', async () => {
    const [elk, gnu] = [await openPage(), await openPage()];
    try {
      await join(elk, await issuer.issue({ room_id: 'rest', user_id: 'elk', role: 'speaker', publish_streams: [41] }));
      assert.deepEqual(await publish(elk, { video: { width: 640, height: 480, frameRate: 15 } }), [{ ok: true, streamId: 41, kind: 'video' }]);
      const frames = (encodings: PageEncoding[], rid: string): number => encodings.find((e) => e.rid === rid)?.framesEncoded ?? 0;
      /** Frames each layer encoded over one second. */
      const growth = async (): Promise<{ h: number; f: number }> => {
        const before = await sent(elk);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const later = await sent(elk);
        return { h: frames(later, 'h') - frames(before, 'h'), f: frames(later, 'f') - frames(before, 'f') };
      };
      // alone in the room: the smaller layer goes on, the larger one rests (publish_layers, media.md 10.5)
      await until(growth, (g) => g.h >= 3 && g.f === 0, 'the larger layer rests while the smaller one is encoded');
      // a subscriber joins: the layer above its first target is needed again
      await join(gnu, await issuer.issue({ room_id: 'rest', user_id: 'gnu', role: 'audience', subscribe_room: true }));
      await until(growth, (g) => g.f >= 3, 'the larger layer is encoded again once a subscriber needs it');
    } finally {
      await within(elk.browserContext().close(), 10_000, 'closing elk').catch(() => undefined);
      await within(gnu.browserContext().close(), 10_000, 'closing gnu').catch(() => undefined);
    }
  });
});
