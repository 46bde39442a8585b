/**
 * WebRTC in the browser: headless Chromium and Firefox pages (fake camera and microphone) running
 * the bundled app SDK (test/helpers/webrtc-page.ts) against `rtc serve` from dist/ (api, token,
 * media), one browser after the other, each against a platform of its own (BENCH_WEBRTC_ENGINES,
 * `chromium,firefox`). One publisher page of that browser stays in the room, publishing audio and
 * video. Each round, after one unmeasured round, BENCH_WEBRTC_JOINS times (10):
 *
 * - join: a fresh page calls `connect` (the WebSocket opens) and waits for the first decoded
 *   frame of the publisher's video: `requestVideoFrameCallback` on the `<video>` element the page
 *   makes on `trackSubscribed`. Baseline, in the same page and the same join: `connect` alone
 *   (WebSocket open to `joined`, when `connect` resolves). The phases of the join, each from
 *   `connect` (bench/lib/browser-marks.ts): `signaling` (joined), `offer` (the first offer that
 *   receives video set locally), `answer` (its answer applied), `ice` (connected), `dtls`
 *   (connection connected), `first_rtp` and `first_key_frame` (inbound video statistics polled
 *   every 10 ms: a packet received, a frame decoded) and `first_decoded` (the frame shown).
 * - revocation: the joined page publishes its own audio and video; once each page decodes the
 *   other's video, the joined page's token is revoked over the HTTP API. Figures from the start
 *   of the revoke request: to the joined page's `revoked` event (the SDK emits it after closing
 *   the peer connection and emitting `trackUnsubscribed` for each remote track); to the moment
 *   every remote track of that page has readyState `ended` (a browser ends them a task or more
 *   after the close; the page polls with setTimeout(0) from the `revoked` event on); and to the
 *   publisher page's `trackUnsubscribed` for the revoked page's video. Baseline, in the same
 *   round and the same room: a Node SDK session over `ws` (no WebRTC) revoked the same way, from
 *   the revoke request's start to its `revoked` event.
 *
 * Times are taken inside the pages (performance.timeOrigin + performance.now()) and in Node (the
 * same); each page's clock offset to Node's is measured over page.evaluate round trips and
 * subtracted. Firefox's figures are named as Chromium's with `firefox_` before them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { TokenResponse } from '@rtc/protocol';
import { connect, type MediaSession } from '../sdk/app/src/index.ts';
import { WEBRTC_PAGE, type PageRtc } from '../test/helpers/webrtc-page.ts';
import { bundleSdk, servePages, type PageSite } from '../test/helpers/browser.ts';
import { launchEngine, type Engine, type EngineName, type EnginePage } from './lib/browser-engines.ts';
import { PHASES, instrument, phasesOf, type PageMarks, type Phase } from './lib/browser-marks.ts';
import { postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer } from './lib/platform.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'webrtc-browser';
const WARMUP = 1;
/** At most 25: the publisher page receives two m-lines per round and the SDK starts a fresh peer connection at 56. */
const JOINS = intSetting('BENCH_WEBRTC_JOINS', 10, 2, 25);
const ENGINES = (process.env['BENCH_WEBRTC_ENGINES'] ?? 'chromium,firefox').split(',').map((e) => e.trim())
  .filter((e): e is EngineName => e === 'chromium' || e === 'firefox');
/** 0: no statistics polled while a page joins (no `first_rtp`, `first_key_frame`), to see what polling costs. */
const POLL_STATS = intSetting('BENCH_WEBRTC_POLL_STATS', 1, 0, 1) === 1;
/** 0: joins only (no revocation part), in every browser. */
const REVOCATION = intSetting('BENCH_WEBRTC_REVOCATION', 1, 0, 1) === 1;
const ROOM = 'webrtc-browser-bench';
const PUBLISHER_STREAMS = [1, 2] as const;
const WAIT_MS = 20_000;

interface BenchPage {
  join(token: TokenResponse): Promise<{ startedAt: number; joinedAt: number; webrtc: boolean }>;
  marks(): PageMarks;
}

type Bench = { bench: BenchPage; rtc: PageRtc };

const nodeNow = (): number => performance.timeOrigin + performance.now();

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

/** A page with the SDK page loaded and instrumented, and its clock's offset to Node's (page − Node, ms). */
interface OpenPage {
  readonly page: EnginePage;
  readonly offset: number;
}

async function clockOffset(page: EnginePage): Promise<number> {
  let best = { rtt: Number.POSITIVE_INFINITY, offset: 0 };
  for (let i = 0; i < 7; i++) {
    const before = nodeNow();
    const at = await page.call(() => performance.timeOrigin + performance.now(), undefined);
    const after = nodeNow();
    if (after - before < best.rtt) best = { rtt: after - before, offset: at - (before + after) / 2 };
  }
  return best.offset;
}

async function openPage(engine: Engine, site: PageSite): Promise<OpenPage> {
  const page = await engine.open(site);
  await page.addScript(instrument(POLL_STATS));
  return { page, offset: await clockOffset(page) };
}

const marksOf = (page: EnginePage): Promise<PageMarks> => page.call(() => (globalThis as unknown as Bench).bench.marks(), undefined);

/** Polls the page's marks until `found` returns a value. */
async function until<T>(page: EnginePage, found: (m: PageMarks) => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const marks = await marksOf(page);
    const value = found(marks);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS} ms: ${JSON.stringify(marks)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const firstVideoFrame = (userId: string) => (m: PageMarks): number | undefined =>
  m.frames.find((f) => f.userId === userId && f.firstFrameAt !== undefined)?.firstFrameAt;

async function run(engineName: EngineName, sdkBundle: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), `bench-webrtc-${engineName}-`));
  let site: PageSite | undefined;
  let engine: Engine | undefined;
  let platform: Awaited<ReturnType<typeof startPlatformServer>> | undefined;
  const prefix = engineName === 'chromium' ? '' : `${engineName}_`;
  try {
    engine = await launchEngine(engineName);
    platform = await startPlatformServer({
      dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
      env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', ...engine.platformEnv },
    });
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
      '/sdk.js': ['text/javascript; charset=utf-8', sdkBundle],
    });

    const publisher = await openPage(engine, site);
    const joinedPublisher = await publisher.page.call((t) => (globalThis as unknown as Bench).bench.join(t), await issue({
      user_id: 'publisher', role: 'speaker', publish_streams: [...PUBLISHER_STREAMS], subscribe_room: true,
    }));
    if (!joinedPublisher.webrtc) throw new Error('the publisher page has no WebRTC');
    const published = await publisher.page.call((ids) => (globalThis as unknown as Bench).rtc.publish(['audio', 'video'], ids), [...PUBLISHER_STREAMS]);
    if (!published.every((p) => p.ok)) throw new Error(`publisher: ${JSON.stringify(published)}`);

    const joinMs: number[] = [];
    const connectMs: number[] = [];
    const subscribedMs: number[] = [];
    const revokedEventMs: number[] = [];
    const stoppedMs: number[] = [];
    const publisherStoppedMs: number[] = [];
    const wsRevokedMs: number[] = [];
    const endedLagMs: number[] = [];
    const phaseMs = new Map<Phase, number[]>(PHASES.map((p) => [p, []]));
    const keyFrameRequests: number[] = [];
    let tracksEnded = 0;
    let tracksTotal = 0;
    const offsets: number[] = [publisher.offset];

    progress(`${engineName}: ${WARMUP} + ${JOINS} rounds (join a page, publish, revoke it; a Node session revoked beside it)...`);
    for (let round = 0; round < WARMUP + JOINS; round++) {
      const measured = round >= WARMUP;
      const user = `joiner-${round}`;
      const streams = [10 + 2 * round, 11 + 2 * round];
      const token = await issue({ user_id: user, role: 'speaker', publish_streams: streams, subscribe_room: true });
      const joiner = await openPage(engine, site);
      offsets.push(joiner.offset);
      try {
        // (a) join: connect, then the first decoded frame of the publisher's video
        const joined = await joiner.page.call((t) => (globalThis as unknown as Bench).bench.join(t), token);
        if (!joined.webrtc) throw new Error('the joining page has no WebRTC');
        const firstFrameAt = await until(joiner.page, firstVideoFrame('publisher'), `${user}: first frame of the publisher's video`);
        const joinMarks = await until(joiner.page, (m) => (!POLL_STATS || m.phases?.firstKeyFrame !== undefined ? m : undefined),
          `${user}: first frame decoded in the statistics`);
        const subscribedAt = joinMarks.frames.find((f) => f.userId === 'publisher')!.subscribedAt;

        if (measured) {
          joinMs.push(firstFrameAt - joined.startedAt);
          connectMs.push(joined.joinedAt - joined.startedAt);
          subscribedMs.push(subscribedAt - joined.startedAt);
          for (const [phase, ms] of Object.entries(phasesOf(joinMarks.phases!, firstFrameAt))) phaseMs.get(phase as Phase)!.push(ms);
          keyFrameRequests.push(joinMarks.phases!.keyFrameRequests ?? 0);
        }

        if (!REVOCATION) continue;
        // (b) revocation: both pages decode each other's video first
        const sent = await joiner.page.call((ids) => (globalThis as unknown as Bench).rtc.publish(['audio', 'video'], ids), streams);
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
        if (revoked.tracksEndedAt === undefined) throw new Error(`${user}: remote tracks not ended 5 s after revoked: ${JSON.stringify(revoked)}`);
        revokedEventMs.push(Math.max(revoked.at, revoked.lastUnsubscribedAt ?? 0, revoked.mediaClosedAt ?? 0) - joiner.offset - revokeStartedAt);
        stoppedMs.push(revoked.tracksEndedAt - joiner.offset - revokeStartedAt);
        publisherStoppedMs.push(videoGone - publisher.offset - revokeStartedAt);
        wsRevokedMs.push(wsRevokedAt - wsStartedAt);
        endedLagMs.push((revoked.tracksEndedAt ?? Number.NaN) - revoked.at);
        tracksEnded += revoked.tracksEnded;
        tracksTotal += revoked.remoteTracks;
      } finally {
        await joiner.page.close();
      }
    }

    const joins = sorted(joinMs);
    const conn = sorted(connectMs);
    const subscribed = sorted(subscribedMs);
    const revokedEvent = sorted(revokedEventMs);
    const stopped = sorted(stoppedMs);
    const pubStopped = sorted(publisherStoppedMs);
    const ws = sorted(wsRevokedMs);
    const lag = sorted(endedLagMs);
    const phasesAt = (p: number): Partial<Record<Phase, number>> => Object.fromEntries([...phaseMs]
      .filter(([, values]) => values.length > 0).map(([phase, values]) => [phase, Number(percentile(sorted(values), p).toFixed(1))]));
    const fmt = (s: readonly number[]): string => `p50 ${percentile(s, 50).toFixed(1)} ms, p99 ${percentile(s, 99).toFixed(1)} ms`;
    progress(`${engineName}: join to first video frame ${fmt(joins)} (connect alone ${fmt(conn)}; trackSubscribed ${fmt(subscribed)})`);
    progress(`${engineName}: join phases p50 (ms from connect) ${JSON.stringify(phasesAt(50))}; key frame requests at the first frame ${keyFrameRequests.join(', ')}`);
    if (REVOCATION) progress(`${engineName}: revoke to revoked event ${fmt(revokedEvent)}, to remote tracks ended ${fmt(stopped)}; ` +
      `publisher's trackUnsubscribed ${fmt(pubStopped)}; ws session revoked ${fmt(ws)}`);
    if (REVOCATION) progress(`${engineName}: remote tracks ended at the revoked event: ${tracksEnded} of ${tracksTotal}; all ended ${lag.map((v) => v.toFixed(1)).join(', ')} ms after it; ` +
      `page clock offsets ${sorted(offsets).map((o) => o.toFixed(2)).join(', ')} ms`);

    const samples = JOINS;
    const connectBaseline = 'connect alone (WebSocket open to joined), same join';
    const wsBaseline = 'Node SDK session over ws in the same room: revoke request start to its revoked event';
    const both = (figure: string, values: readonly number[], baseline: readonly number[], baselineIs: string,
      extra: (p: 50 | 99) => Record<string, unknown> = () => ({})): void => {
      for (const p of [50, 99] as const) {
        printFigure({ bench: BENCH, figure: `${prefix}${figure}_p${p}`, value: percentile(values, p), unit: 'ms', samples,
          baseline: percentile(baseline, p), baseline_is: baselineIs, engine: engineName, ...extra(p) });
      }
    };
    both('join_to_first_video_frame', joins, conn, connectBaseline, (p) => ({ phases_ms: phasesAt(p) }));
    both('join_to_track_subscribed', subscribed, conn, connectBaseline);
    if (!REVOCATION) return;
    both('revoke_to_revoked_event', revokedEvent, ws, wsBaseline);
    both('revoke_to_remote_tracks_ended', stopped, ws, wsBaseline);
    both('revoke_to_publisher_track_unsubscribed', pubStopped, ws, wsBaseline);
    printFigure({ bench: BENCH, figure: `${prefix}remote_tracks_ended_after_revoked_event_p50`, value: percentile(lag, 50), unit: 'ms', samples,
      engine: engineName, ended_at_event: tracksEnded, remote_tracks: tracksTotal });
  } finally {
    await engine?.close();
    await site?.close();
    await platform?.stop();
    if (process.env['BENCH_KEEP_DIR'] === '1') progress(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

const sdkBundle = await bundleSdk();
for (const engine of ENGINES) await run(engine, sdkBundle);
