/**
 * Calls over impaired networks, for tests and benchmarks (docs/operations/benchmarks.md,
 * "webrtc-network"): headless Chromium pages, each relay-only through coturn behind an impaired
 * link of its own, calling through the platform (the app SDK's test page) or directly between
 * pages (the direct-call page), with the call-quality sampler in every page.
 *
 * @example
 * ```ts
 * const lab = await startCallLab({ turn: { host: coturn.host, port: coturn.port, secret } });
 * const pub = await lab.openPage({ name: 'pub', kind: 'platform' });
 * const sub = await lab.openPage({ name: 'sub', kind: 'platform', link: bothWays({ lossRate: 0.03 }) });
 * await joinPlatform(pub, await issue('pub'));
 * await joinPlatform(sub, await issue('sub'));
 * await publishCamera(pub, lab.camera);
 * await waitForVideo(sub, (v) => v.framesDecoded > 30, 'sub decodes pub');
 * await sub.link.set({ down: { rateKbps: 300 } });
 * const { fps, frameWidth } = await currentVideo(sub);
 * await lab.close();
 * ```
 */
import type { Browser, Page } from 'playwright-core';
import type { TokenResponse } from '@rtc/protocol';
import { turnCredentials } from '../../server/src/tokens/turn.ts';
import { bundleSdk, launchChromium, servePages, type PageSite } from './browser.ts';
import {
  currentVideoOf, QUALITY_SAMPLER_SCRIPT, summarizeReceive, summarizeSend,
  type CurrentVideo, type QualityWindow, type ReceiveQuality, type SendQuality, type StatsSample,
} from './call-quality.ts';
import { DIRECT_PAGE, type PageDirect, type PageIceServer } from './direct-page.ts';
import { startImpairedLink, type ImpairedLink } from './impair/impaired-link.ts';
import type { LinkSettingsPatch } from './impair/link-settings.ts';
import { WEBRTC_PAGE, type PageCamera, type PageRtc } from './webrtc-page.ts';

/** The camera of the network tests and bench: 640×480 at 30 frames/s. */
export const CAMERA_VGA_30: PageCamera = Object.freeze({ width: 640, height: 480, frameRate: 30 });

/** The platform page's source of statistics: the SDK session's peer connection. */
export const SESSION_SOURCE = 'session';
const TURN_TTL_SECONDS = 3600;
const PAGE_LOAD_TIMEOUT_MS = 30_000;

/** coturn as the pages reach it (through their links), with its TURN REST API secret. */
export interface TurnRelay {
  readonly host: string;
  readonly port: number;
  readonly secret: string;
}

export interface CallLabOptions {
  readonly turn: TurnRelay;
  /** What every page's fake camera gives; CAMERA_VGA_30 unless given. */
  readonly camera?: PageCamera;
  /** `false`: the caller's cleanup handles SIGINT, SIGTERM and SIGHUP (playwright leaves the browser up). */
  readonly handleSignals?: boolean;
}

export interface OpenCallPageOptions {
  /** Names the page in peer connection ids and messages. */
  readonly name: string;
  /** `platform`: the app SDK's test page; `direct`: the direct-call page. */
  readonly kind: 'platform' | 'direct';
  /** The page's link from the start (clean unless given). */
  readonly link?: LinkSettingsPatch;
  /** Seeds the link's loss and jitter draws. */
  readonly seed?: number;
}

/** A page behind its own impaired link to coturn. */
export interface CallPage {
  readonly name: string;
  readonly kind: 'platform' | 'direct';
  readonly page: Page;
  readonly link: ImpairedLink;
  /** The link's TURN URI with TURN credentials: the only ICE server a direct call uses. */
  readonly iceServers: readonly PageIceServer[];
  close(): Promise<void>;
}

export interface CallLab {
  readonly browser: Browser;
  readonly camera: PageCamera;
  openPage(options: OpenCallPageOptions): Promise<CallPage>;
  /** Closes every page still open, their links, the browser and the page server. */
  close(): Promise<void>;
}

/** Serves the pages and launches Chromium (fake camera at the camera's frame rate, nothing off the machine). */
export async function startCallLab(options: CallLabOptions): Promise<CallLab> {
  const camera = options.camera ?? CAMERA_VGA_30;
  const site: PageSite = await servePages({
    '/': ['text/html; charset=utf-8', WEBRTC_PAGE],
    '/sdk.js': ['text/javascript; charset=utf-8', await bundleSdk()],
    '/direct': ['text/html; charset=utf-8', DIRECT_PAGE],
  });
  let browser: Browser;
  try {
    browser = await launchChromium({
      fakeMedia: true, fakeCameraFps: camera.frameRate, loopbackOnly: true, handleSignals: options.handleSignals ?? true,
    });
  } catch (err) {
    await site.close();
    throw err;
  }
  const open = new Set<CallPage>();

  const openPage = async (o: OpenCallPageOptions): Promise<CallPage> => {
    const link = await startImpairedLink({
      target: { host: options.turn.host, port: options.turn.port }, ...(o.link ? { settings: o.link } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}),
    });
    const context = await browser.newContext().catch(async (err: unknown) => {
      await link.close();
      throw err;
    });
    const close = async (): Promise<void> => {
      open.delete(callPage);
      await context.close().catch(() => undefined);
      await link.close();
    };
    const expiresAt = Math.floor(Date.now() / 1000) + TURN_TTL_SECONDS;
    const turn = turnCredentials(options.turn.secret, [link.turnUri], expiresAt, `direct-${o.name}`);
    const page = await context.newPage();
    const callPage: CallPage = {
      name: o.name, kind: o.kind, page, link, close,
      iceServers: [{ urls: [...turn.uris], username: turn.username, credential: turn.credential }],
    };
    open.add(callPage);
    try {
      await page.goto(o.kind === 'platform' ? site.url : `${site.url}direct`);
      const ready = o.kind === 'platform' ? 'globalThis.rtc !== undefined' : 'globalThis.direct !== undefined';
      await page.waitForFunction(ready, undefined, { timeout: PAGE_LOAD_TIMEOUT_MS });
      await page.addScriptTag({ content: QUALITY_SAMPLER_SCRIPT });
    } catch (err) {
      await close();
      throw err;
    }
    return callPage;
  };

  return {
    browser,
    camera,
    openPage,
    async close() {
      for (const p of [...open]) await p.close();
      await browser.close();
      await site.close();
    },
  };
}

function expectKind(p: CallPage, kind: CallPage['kind'], what: string): void {
  if (p.kind !== kind) throw new TypeError(`${what} needs a ${kind} page; ${p.name} is a ${p.kind} page`);
}

/**
 * Joins the room of `token` (which must carry `turn`) relay-only, with the token's TURN URIs
 * replaced by the page's link, and samples the session's statistics. Gives the session's participant id.
 */
export async function joinPlatform(p: CallPage, token: TokenResponse): Promise<string> {
  expectKind(p, 'platform', 'joinPlatform');
  if (!token.turn) throw new TypeError('joinPlatform needs a token issued with turn: true');
  const viaLink: TokenResponse = { ...token, turn: { ...token.turn, uris: [p.link.turnUri] } };
  const joined = await p.page.evaluate(([t]) => (globalThis as unknown as { rtc: PageRtc }).rtc.join(t, { iceTransportPolicy: 'relay' }), [viaLink] as const);
  if (!joined.webrtc) throw new Error(`${p.name}: the session has no WebRTC`);
  await p.page.evaluate(`globalThis.callQuality.watch(${JSON.stringify(SESSION_SOURCE)}, () => globalThis.rtc.state.session.getStats())`);
  return joined.participantId;
}

/** Publishes the fake camera and microphone through the platform (the grant's first stream ids unless given). */
export async function publishCamera(p: CallPage, camera: PageCamera, streamIds?: readonly number[]): Promise<void> {
  expectKind(p, 'platform', 'publishCamera');
  const published = await p.page.evaluate(([s, c]) => (globalThis as unknown as { rtc: PageRtc }).rtc.publish(['audio', 'video'], s, { video: c }),
    [streamIds, camera] as const);
  if (!published.every((r) => r.ok)) throw new Error(`${p.name}: publish: ${JSON.stringify(published)}`);
}

const peerTo = (p: CallPage): string => `to:${p.name}`;
const peerFrom = (p: CallPage): string => `from:${p.name}`;

/**
 * A direct call from `from` (sending its camera and microphone) to `to` (receiving), each
 * relay-only through its own link; the test process carries the offer and the answer. A page
 * calling several others holds one peer connection per callee, as a mesh call does.
 */
export async function callDirect(from: CallPage, to: CallPage, camera: PageCamera): Promise<void> {
  expectKind(from, 'direct', 'callDirect');
  expectKind(to, 'direct', 'callDirect');
  const direct = (page: Page) => ({
    camera: (c: PageCamera) => page.evaluate(([x]) => (globalThis as unknown as { direct: PageDirect }).direct.camera(x), [c] as const),
    offer: (id: string, ice: readonly PageIceServer[]) =>
      page.evaluate(([i, s]) => (globalThis as unknown as { direct: PageDirect }).direct.offer(i, s), [id, ice] as const),
    answer: (id: string, ice: readonly PageIceServer[], sdp: string) =>
      page.evaluate(([i, s, d]) => (globalThis as unknown as { direct: PageDirect }).direct.answer(i, s, d), [id, ice, sdp] as const),
    accept: (id: string, sdp: string) => page.evaluate(([i, d]) => (globalThis as unknown as { direct: PageDirect }).direct.accept(i, d), [id, sdp] as const),
  });
  const caller = direct(from.page);
  const callee = direct(to.page);
  await caller.camera(camera);
  const offer = await caller.offer(peerTo(to), from.iceServers);
  const answer = await callee.answer(peerFrom(from), to.iceServers, offer);
  await caller.accept(peerTo(to), answer);
}

/** The page's clock (ms since the epoch), which the samples' times are on. */
export function pageNow(p: CallPage): Promise<number> {
  return p.page.evaluate(() => performance.timeOrigin + performance.now());
}

/** The names of the page's statistics sources: `session`, or `to:<page>` / `from:<page>` per direct peer connection. */
export function sourcesOf(p: CallPage): Promise<string[]> {
  return p.page.evaluate('globalThis.callQuality.names()') as Promise<string[]>;
}

/** The samples of one source (since `since` on the page's clock). */
export function samplesOf(p: CallPage, source: string, since = 0): Promise<StatsSample[]> {
  return p.page.evaluate(`globalThis.callQuality.samples(${JSON.stringify(source)}, ${since})`) as Promise<StatsSample[]>;
}

/** The source a page receives on: the platform session, or the direct call from `from` (the first one when not named). */
export async function receivingSource(p: CallPage, from?: CallPage): Promise<string> {
  if (p.kind === 'platform') return SESSION_SOURCE;
  if (from) return peerFrom(from);
  const source = (await sourcesOf(p)).find((s) => s.startsWith('from:'));
  if (!source) throw new Error(`${p.name} receives no direct call`);
  return source;
}

/** The remote video the page receives now (from `from`, for a direct page receiving several calls). */
export async function currentVideo(p: CallPage, from?: CallPage): Promise<CurrentVideo> {
  const source = await receivingSource(p, from).catch(() => undefined);
  if (source === undefined) return currentVideoOf([]);
  const since = (await pageNow(p)) - 5000;
  return currentVideoOf(await samplesOf(p, source, since));
}

/** Polls the page's current video (every half second) until `ok` holds; fails after `limitMs`. */
export async function waitForVideo(p: CallPage, ok: (v: CurrentVideo) => boolean, what: string, limitMs = 30_000): Promise<CurrentVideo> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await currentVideo(p);
    if (ok(v)) return v;
    if (Date.now() > deadline) {
      // what the page's peer connections last reported, to tell a transport that never came up from a decoder that never started
      const last = await Promise.all((await sourcesOf(p).catch(() => [])).map(async (source) => ({
        source, sample: (await samplesOf(p, source).catch(() => [])).at(-1),
      })));
      throw new Error(`${p.name}: ${what}: not within ${limitMs} ms (${JSON.stringify(v)}); last stats: ${JSON.stringify(last).slice(0, 2000)}`);
    }
    await p.page.waitForTimeout(500);
  }
}

/** What the page received over the window (from `from`, for a direct page receiving several calls). */
export async function receiveQuality(p: CallPage, window: QualityWindow, from?: CallPage): Promise<ReceiveQuality> {
  return summarizeReceive(await samplesOf(p, await receivingSource(p, from), window.from - 5000), window);
}

/** What the page sent over the window, per peer connection: `session`, or `to:<page>` for each callee. */
export async function sendQuality(p: CallPage, window: QualityWindow): Promise<Record<string, SendQuality>> {
  const sources = (await sourcesOf(p)).filter((s) => s === SESSION_SOURCE || s.startsWith('to:'));
  const out: Record<string, SendQuality> = {};
  for (const source of sources) out[source] = summarizeSend(await samplesOf(p, source, window.from - 5000), window);
  return out;
}

/** The candidate type of the page's selected pair on each source: `relay` when the page goes through its link. */
export async function candidateTypes(p: CallPage): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const source of await sourcesOf(p)) out[source] = (await samplesOf(p, source)).at(-1)?.pair?.localCandidateType;
  return out;
}
