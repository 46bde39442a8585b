/**
 * WebRTC in the browser: headless Chromium pages (fake camera and microphone) running the bundled
 * app SDK (test/helpers/webrtc-page.ts) against `rtc serve` from dist/ (api, token, media). One
 * publisher page stays in the room, publishing audio and video. Each round, after one unmeasured
 * round, BENCH_WEBRTC_JOINS times (10):
 *
 * - join: a fresh page calls `connect` (the WebSocket opens) and waits for the first decoded
 *   frame of the publisher's video: `requestVideoFrameCallback` on the `<video>` element the page
 *   makes on `trackSubscribed`. Baseline, in the same page and the same join: `connect` alone
 *   (WebSocket open to `joined`, when `connect` resolves).
 * - revocation: the joined page publishes its own audio and video; once each page decodes the
 *   other's video, the joined page's token is revoked over the HTTP API. Figures from the start
 *   of the revoke request: to the joined page's `revoked` event (the SDK emits it after closing
 *   the peer connection and emitting `trackUnsubscribed` for each remote track); to the moment
 *   every remote track of that page has readyState `ended` (Chromium ends them a task or more
 *   after the close; the page polls with setTimeout(0) from the `revoked` event on); and to the
 *   publisher page's `trackUnsubscribed` for the revoked page's video. Baseline, in the same
 *   round and the same room: a Node SDK session over `ws` (no WebRTC) revoked the same way, from
 *   the revoke request's start to its `revoked` event.
 *
 * Times are taken inside the pages (performance.timeOrigin + performance.now()) and in Node (the
 * same); each page's clock offset to Node's is measured over page.evaluate round trips and
 * subtracted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import WebSocket from 'ws';
import type { TokenResponse } from '@rtc/protocol';
import { connect, type MediaSession } from '../sdk/app/src/index.ts';
import { WEBRTC_PAGE, type PageRtc } from '../test/helpers/webrtc-page.ts';
import { bundleSdk, launchChromium, servePages, type PageSite } from '../test/helpers/browser.ts';
import { postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer } from './lib/platform.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'webrtc-browser';
const WARMUP = 1;
/** At most 25: the publisher page receives two m-lines per round and the SDK starts a fresh peer connection at 56. */
const JOINS = intSetting('BENCH_WEBRTC_JOINS', 10, 2, 25);
const ROOM = 'webrtc-browser-bench';
const PUBLISHER_STREAMS = [1, 2] as const;
const WAIT_MS = 20_000;

/** What one page recorded (times on the page's clock, ms since the epoch). */
interface PageMarks {
  readonly frames: readonly {
    readonly userId: string; readonly streamId: number; readonly kind: string;
    readonly subscribedAt: number; readonly firstFrameAt: number | undefined;
  }[];
  readonly unsubscribed: readonly { readonly userId: string; readonly streamId: number; readonly kind: string; readonly at: number }[];
  readonly revoked: {
    readonly at: number; readonly remoteTracks: number; readonly tracksEnded: number; readonly tracksEndedAt: number | undefined;
    readonly lastUnsubscribedAt: number | undefined; readonly mediaClosedAt: number | undefined;
  } | undefined;
}

interface BenchPage {
  join(token: TokenResponse): Promise<{ startedAt: number; joinedAt: number; webrtc: boolean }>;
  marks(): PageMarks;
}

/**
 * Installed in each page after the page's own script: watches the `<video>` elements the page
 * adds on `trackSubscribed` (a MutationObserver runs before the next frame can be rendered) and
 * times their first decoded frame; records the session's `trackUnsubscribed`, `revoked` and
 * peer connection state with their times.
 */
const INSTRUMENT = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const frames = [];
  const unsubscribed = [];
  const remote = [];
  let revoked;
  let mediaClosedAt;
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) {
      if (!(node instanceof HTMLVideoElement)) continue;
      const track = [...globalThis.rtc.state.tracks.values()].find((t) => t.el === node);
      const mark = { userId: track ? track.userId : '', streamId: track ? track.streamId : 0, kind: 'video', subscribedAt: track ? track.at : now(), firstFrameAt: undefined };
      frames.push(mark);
      node.requestVideoFrameCallback(() => { mark.firstFrameAt = now(); });
    }
  }).observe(document.body, { childList: true });
  globalThis.bench = {
    async join(token) {
      const startedAt = now();
      const joined = await globalThis.rtc.join(token);
      const joinedAt = now();
      const session = globalThis.rtc.state.session;
      session.on('trackSubscribed', (t) => remote.push(t.track));
      session.on('trackUnsubscribed', (t) => unsubscribed.push({ userId: t.userId, streamId: t.streamId, kind: t.kind, at: now() }));
      session.on('mediaConnectionState', (s) => { if (s.state === 'closed') mediaClosedAt = now(); });
      session.on('revoked', () => {
        const at = now();
        const mark = {
          at, remoteTracks: remote.length, tracksEnded: remote.filter((t) => t.readyState === 'ended').length, tracksEndedAt: undefined,
          lastUnsubscribedAt: unsubscribed.length > 0 ? unsubscribed[unsubscribed.length - 1].at : undefined, mediaClosedAt,
        };
        // Chromium may end the remote tracks of a closed peer connection a task later: poll until they all are
        const check = () => {
          if (remote.every((t) => t.readyState === 'ended')) mark.tracksEndedAt = now();
          else if (now() - at < 5000) setTimeout(check, 0);
          else revoked = mark;
          if (mark.tracksEndedAt !== undefined) revoked = mark;
        };
        check();
      });
      return { startedAt, joinedAt, webrtc: joined.webrtc };
    },
    marks() {
      return { frames: frames.map((f) => ({ ...f })), unsubscribed: [...unsubscribed], revoked };
    },
  };
})();`;

type Bench = { bench: BenchPage; rtc: PageRtc };

const nodeNow = (): number => performance.timeOrigin + performance.now();

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

/** A page with the SDK page loaded and instrumented, and its clock's offset to Node's (page − Node, ms). */
interface OpenPage {
  readonly page: Page;
  readonly offset: number;
}

async function clockOffset(page: Page): Promise<number> {
  let best = { rtt: Number.POSITIVE_INFINITY, offset: 0 };
  for (let i = 0; i < 7; i++) {
    const before = nodeNow();
    const inPage = await page.evaluate(() => performance.timeOrigin + performance.now());
    const after = nodeNow();
    if (after - before < best.rtt) best = { rtt: after - before, offset: inPage - (before + after) / 2 };
  }
  return best.offset;
}

async function openPage(browser: Browser, site: PageSite): Promise<OpenPage> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(site.url);
  await page.waitForFunction(() => (globalThis as unknown as { rtc?: unknown }).rtc !== undefined);
  await page.addScriptTag({ content: INSTRUMENT });
  return { page, offset: await clockOffset(page) };
}

const marksOf = (page: Page): Promise<PageMarks> => page.evaluate(() => (globalThis as unknown as Bench).bench.marks());

/** Polls the page's marks until `found` returns a value. */
async function until<T>(page: Page, found: (m: PageMarks) => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const marks = await marksOf(page);
    const value = found(marks);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS} ms: ${JSON.stringify(marks)}`);
    await page.waitForTimeout(20);
  }
}

const firstVideoFrame = (userId: string) => (m: PageMarks): number | undefined =>
  m.frames.find((f) => f.userId === userId && f.firstFrameAt !== undefined)?.firstFrameAt;

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-webrtc-browser-'));
  const platform = await startPlatformServer({
    dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
    env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  let site: PageSite | undefined;
  let browser: Browser | undefined;
  try {
    const api = platform.urls['api']!;
    const cred = await createCredential(api);
    const authorization = basicAuthorization(cred.appId, cred.appSecret);
    const issue = async (body: Record<string, unknown>): Promise<TokenResponse> => {
      const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify({ room_id: ROOM, ...body }), { authorization });
      if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
      return JSON.parse(res.text) as TokenResponse;
    };
    /** Sends the revoke request; resolves with the time it started (Node's clock). */
    const revoke = async (token: TokenResponse): Promise<number> => {
      const startedAt = nodeNow();
      const res = await postJson(`${api}/v1/rtc/tokens/revoke`, JSON.stringify({ revocation_handle: token.media.revocation_handle }), { authorization });
      if (res.status !== 200) throw new Error(`revocation: ${res.status} ${res.text}`);
      return startedAt;
    };

    site = await servePages({
      '/': ['text/html; charset=utf-8', WEBRTC_PAGE],
      '/sdk.js': ['text/javascript; charset=utf-8', await bundleSdk()],
    });
    browser = await launchChromium({ fakeMedia: true });

    const publisher = await openPage(browser, site);
    const joinedPublisher = await publisher.page.evaluate((t) => (globalThis as unknown as Bench).bench.join(t), await issue({
      user_id: 'publisher', role: 'speaker', publish_streams: [...PUBLISHER_STREAMS], subscribe_room: true,
    }));
    if (!joinedPublisher.webrtc) throw new Error('the publisher page has no WebRTC');
    const published = await publisher.page.evaluate((ids) => (globalThis as unknown as Bench).rtc.publish(['audio', 'video'], ids), [...PUBLISHER_STREAMS]);
    if (!published.every((p) => p.ok)) throw new Error(`publisher: ${JSON.stringify(published)}`);

    const joinMs: number[] = [];
    const connectMs: number[] = [];
    const subscribedMs: number[] = [];
    const revokedEventMs: number[] = [];
    const stoppedMs: number[] = [];
    const publisherStoppedMs: number[] = [];
    const wsRevokedMs: number[] = [];
    const endedLagMs: number[] = [];
    let tracksEnded = 0;
    let tracksTotal = 0;
    const offsets: number[] = [publisher.offset];

    progress(`${WARMUP} + ${JOINS} rounds (join a page, publish, revoke it; a Node session revoked beside it)...`);
    for (let round = 0; round < WARMUP + JOINS; round++) {
      const measured = round >= WARMUP;
      const user = `joiner-${round}`;
      const streams = [10 + 2 * round, 11 + 2 * round];
      const token = await issue({ user_id: user, role: 'speaker', publish_streams: streams, subscribe_room: true });
      const joiner = await openPage(browser, site);
      offsets.push(joiner.offset);
      try {
        // (a) join: connect, then the first decoded frame of the publisher's video
        const joined = await joiner.page.evaluate((t) => (globalThis as unknown as Bench).bench.join(t), token);
        if (!joined.webrtc) throw new Error('the joining page has no WebRTC');
        const firstFrameAt = await until(joiner.page, firstVideoFrame('publisher'), `${user}: first frame of the publisher's video`);
        const subscribedAt = (await marksOf(joiner.page)).frames.find((f) => f.userId === 'publisher')!.subscribedAt;

        // (b) revocation: both pages decode each other's video first
        const sent = await joiner.page.evaluate((ids) => (globalThis as unknown as Bench).rtc.publish(['audio', 'video'], ids), streams);
        if (!sent.every((p) => p.ok)) throw new Error(`${user}: publish: ${JSON.stringify(sent)}`);
        await until(publisher.page, firstVideoFrame(user), `publisher: first frame of ${user}'s video`);

        // the baseline: a Node session over ws in the same room, revoked the same way
        const wsToken = await issue({ user_id: `ws-${round}`, role: 'audience', subscribe_room: true });
        const wsSession: MediaSession = await connect({ token: wsToken, WebSocket, secure: false, reconnect: false });
        const wsRevoked = new Promise<number>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`ws-${round}: no revoked event within 5 s`)), 5000);
          wsSession.on('revoked', () => {
            clearTimeout(timer);
            resolve(nodeNow());
          });
        });
        const wsStartedAt = await revoke(wsToken);
        const wsRevokedAt = await wsRevoked;

        await new Promise((resolve) => setTimeout(resolve, 100));
        const revokeStartedAt = await revoke(token);
        const revoked = await until(joiner.page, (m) => m.revoked, `${user}: revoked`);
        const videoGone = await until(publisher.page, (m) => m.unsubscribed.find((u) => u.userId === user && u.streamId === streams[1])?.at,
          `publisher: trackUnsubscribed for ${user}'s video`);

        if (!measured) continue;
        joinMs.push(firstFrameAt - joined.startedAt);
        connectMs.push(joined.joinedAt - joined.startedAt);
        subscribedMs.push(subscribedAt - joined.startedAt);
        if (revoked.tracksEndedAt === undefined) throw new Error(`${user}: remote tracks not ended 5 s after revoked: ${JSON.stringify(revoked)}`);
        revokedEventMs.push(Math.max(revoked.at, revoked.lastUnsubscribedAt ?? 0, revoked.mediaClosedAt ?? 0) - joiner.offset - revokeStartedAt);
        stoppedMs.push(revoked.tracksEndedAt - joiner.offset - revokeStartedAt);
        publisherStoppedMs.push(videoGone - publisher.offset - revokeStartedAt);
        wsRevokedMs.push(wsRevokedAt - wsStartedAt);
        endedLagMs.push((revoked.tracksEndedAt ?? Number.NaN) - revoked.at);
        tracksEnded += revoked.tracksEnded;
        tracksTotal += revoked.remoteTracks;
      } finally {
        await joiner.page.context().close();
      }
    }

    const join = sorted(joinMs);
    const conn = sorted(connectMs);
    const subscribed = sorted(subscribedMs);
    const revokedEvent = sorted(revokedEventMs);
    const stopped = sorted(stoppedMs);
    const pubStopped = sorted(publisherStoppedMs);
    const ws = sorted(wsRevokedMs);
    const lag = sorted(endedLagMs);
    const fmt = (s: readonly number[]): string => `p50 ${percentile(s, 50).toFixed(1)} ms, p99 ${percentile(s, 99).toFixed(1)} ms`;
    progress(`join to first video frame ${fmt(join)} (connect alone ${fmt(conn)}; trackSubscribed ${fmt(subscribed)})`);
    progress(`revoke to revoked event ${fmt(revokedEvent)}, to remote tracks ended ${fmt(stopped)}; ` +
      `publisher's trackUnsubscribed ${fmt(pubStopped)}; ws session revoked ${fmt(ws)}`);
    progress(`remote tracks ended at the revoked event: ${tracksEnded} of ${tracksTotal}; all ended ${lag.map((v) => v.toFixed(1)).join(', ')} ms after it; ` +
      `page clock offsets ${sorted(offsets).map((o) => o.toFixed(2)).join(', ')} ms`);

    const samples = JOINS;
    const connectBaseline = 'connect alone (WebSocket open to joined), same join';
    const wsBaseline = 'Node SDK session over ws in the same room: revoke request start to its revoked event';
    const both = (figure: string, values: readonly number[], baseline: readonly number[], baselineIs: string): void => {
      for (const p of [50, 99] as const) {
        printFigure({ bench: BENCH, figure: `${figure}_p${p}`, value: percentile(values, p), unit: 'ms', samples,
          baseline: percentile(baseline, p), baseline_is: baselineIs });
      }
    };
    both('join_to_first_video_frame', join, conn, connectBaseline);
    both('join_to_track_subscribed', subscribed, conn, connectBaseline);
    both('revoke_to_revoked_event', revokedEvent, ws, wsBaseline);
    both('revoke_to_remote_tracks_ended', stopped, ws, wsBaseline);
    both('revoke_to_publisher_track_unsubscribed', pubStopped, ws, wsBaseline);
    printFigure({ bench: BENCH, figure: 'remote_tracks_ended_after_revoked_event_p50', value: percentile(lag, 50), unit: 'ms', samples,
      ended_at_event: tracksEnded, remote_tracks: tracksTotal });
  } finally {
    await browser?.close();
    await site?.close();
    await platform.stop();
    if (process.env['BENCH_KEEP_DIR'] === '1') progress(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();
