/**
 * Calls over impaired networks, through the platform and directly between browsers, in one run
 * (docs/operations/benchmarks.md, "webrtc-network"). Headless Chromium pages with a fake camera
 * (640×480, 30 frames/s) and microphone, each relay-only through coturn behind an impaired link
 * of its own (test/helpers/network-call.ts). Per scenario, twice:
 *
 * - platform: `rtc serve` from dist/ (api, token, media); the publisher page joins with the app
 *   SDK and publishes camera and microphone, each subscriber page joins and subscribes to the room.
 * - direct: the publisher page calls each subscriber page with a peer connection of its own (a
 *   mesh call: one encoding per subscriber), signaling carried by the bench.
 *
 * The links are the same in both setups, so they differ only in the SFU. After every subscriber's
 * first frame and BENCH_NETWORK_WARMUP_S (5) of warm-up, a window of BENCH_NETWORK_WINDOW_S (30)
 * is measured from each page's once-a-second getStats samples. BENCH_NETWORK_SCENARIOS picks
 * scenarios by id or name (`a,b`, `clean,sub_down_500`); all of them by default.
 * BENCH_NETWORK_TIMELINE=<dir> writes each call's timeline there, second by second (the
 * subscribers' received video beside the media role's downlink snapshots, the publisher's encoders).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { TokenResponse } from '@rtc/protocol';
import type { ReceiveQuality, SendQuality } from '../test/helpers/call-quality.ts';
import { downlinkLines, formatRow, receivedTimeline, sentTimeline, timelineOf } from '../test/helpers/call-timeline.ts';
import { startCoturn, type Coturn } from '../test/helpers/coturn.ts';
import { bothWays, type LinkSettingsPatch } from '../test/helpers/impair/link-settings.ts';
import type { LinkStats } from '../test/helpers/impair/protocol.ts';
import {
  callDirect, candidateTypes, joinPlatform, pageNow, publishCamera, receiveQuality, receivingSource, samplesOf, sendQuality, sourcesOf, startCallLab,
  waitForVideo, SESSION_SOURCE,
  type CallLab, type CallPage,
} from '../test/helpers/network-call.ts';
import { postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer } from './lib/platform.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'webrtc-network';
const WINDOW_S = intSetting('BENCH_NETWORK_WINDOW_S', 30, 5, 600);
const WARMUP_S = intSetting('BENCH_NETWORK_WARMUP_S', 5, 0, 120);
const FIRST_FRAME_MS = 30_000;
const RELAY_CHECK_MS = 10_000;
const TURN_SECRET = 'bench-webrtc-network-turn-secret';
const DIRECT_IS = 'direct call between the same pages over the same links (no SFU)';
/**
 * The targets (docs/operations/benchmarks.md, "webrtc-network"): each subscriber group decodes at
 * least FPS_TARGET_RATIO of the direct call's frame rate, with no more stalled seconds than it.
 */
const FPS_TARGET_RATIO = 0.9;
const missed: string[] = [];
/** Where each call's timeline goes (undefined: not written); the media role then logs at debug. */
const TIMELINE_DIR = process.env['BENCH_NETWORK_TIMELINE'] || undefined;

type Setup = 'platform' | 'direct';

interface Scenario {
  readonly id: string;
  readonly name: string;
  readonly title: string;
  readonly publisher: LinkSettingsPatch;
  /** One link per subscriber page. */
  readonly subscribers: readonly LinkSettingsPatch[];
  /** Indexes of the subscribers whose figures are reported apart, as capped. */
  readonly capped: readonly number[];
}

const LOSSY = bothWays({ lossRate: 0.03, delayMs: 40, jitterMs: 10 });
const SCENARIOS: readonly Scenario[] = [
  { id: 'clean', name: 'clean', title: 'no impairment', publisher: {}, subscribers: [{}], capped: [] },
  { id: 'a', name: 'loss_delay', title: '3 % loss and 40 ± 10 ms delay each way on both pages\' links', publisher: LOSSY, subscribers: [LOSSY], capped: [] },
  { id: 'b', name: 'sub_down_500', title: 'subscriber downlink capped at 500 kbit/s', publisher: {}, subscribers: [{ down: { rateKbps: 500 } }], capped: [0] },
  { id: 'c', name: 'pub_up_500', title: 'publisher uplink capped at 500 kbit/s', publisher: { up: { rateKbps: 500 } }, subscribers: [{}], capped: [] },
  {
    id: 'd', name: 'fanout_one_down_300', title: 'one publisher, three subscribers, one of them with its downlink capped at 300 kbit/s',
    publisher: {}, subscribers: [{ down: { rateKbps: 300 } }, {}, {}], capped: [0],
  },
];

function selectedScenarios(): Scenario[] {
  const raw = process.env['BENCH_NETWORK_SCENARIOS'];
  if (raw === undefined || raw.trim() === '') return [...SCENARIOS];
  const wanted = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.id === w || s.name === w));
  if (unknown.length > 0) {
    throw new Error(`BENCH_NETWORK_SCENARIOS: unknown ${unknown.join(', ')} (known: ${SCENARIOS.map((s) => `${s.id}=${s.name}`).join(', ')})`);
  }
  return SCENARIOS.filter((s) => wanted.includes(s.id) || wanted.includes(s.name));
}

interface SubscriberOutcome {
  readonly index: number;
  readonly quality: ReceiveQuality;
  /** From the start of the call's setup to the first decoded frame; undefined: none within FIRST_FRAME_MS. */
  readonly firstFrameMs: number | undefined;
  readonly link: LinkStats;
}

interface Outcome {
  readonly subscribers: readonly SubscriberOutcome[];
  /** Per peer connection of the publisher page. */
  readonly publisher: readonly SendQuality[];
  readonly publisherLink: LinkStats;
}

interface Run {
  readonly lab: CallLab;
  readonly issue: (body: Record<string, unknown>) => Promise<TokenResponse>;
  /** The media role's log so far (its debug lines carry the downlink snapshots). */
  readonly serverLog: () => string;
}

/** Opens the pages, sets the call up, warms up, measures the window; closes the pages whatever happens. */
async function runScenario(run: Run, scenario: Scenario, setup: Setup, round: number): Promise<Outcome> {
  const pages: CallPage[] = [];
  try {
    const seed = 1000 * round;
    const pub = await run.lab.openPage({ name: 'pub', kind: setup, link: scenario.publisher, seed });
    pages.push(pub);
    const subs: CallPage[] = [];
    for (const [i, link] of scenario.subscribers.entries()) {
      const sub = await run.lab.openPage({ name: `sub${i}`, kind: setup, link, seed: seed + i + 1 });
      pages.push(sub);
      subs.push(sub);
    }
    const startedAt = Date.now();
    const participants: string[] = [];
    if (setup === 'platform') {
      const room = `network-${scenario.name}-${round}`;
      await joinPlatform(pub, await run.issue({ room_id: room, user_id: 'pub', role: 'speaker', publish_streams: [1, 2] }));
      for (const [i, sub] of subs.entries()) {
        participants.push(await joinPlatform(sub, await run.issue({ room_id: room, user_id: `sub${i}`, role: 'participant', subscribe_room: true })));
      }
      await publishCamera(pub, run.lab.camera, [1, 2]);
    } else {
      for (const sub of subs) await callDirect(pub, sub, run.lab.camera);
    }
    const firstFrames = await Promise.all(subs.map(async (sub) => {
      try {
        await waitForVideo(sub, (v) => v.framesDecoded > 0, 'the first frame', FIRST_FRAME_MS);
        return Date.now() - startedAt;
      } catch {
        progress(`  ${setup}: ${sub.name} decoded no frame within ${FIRST_FRAME_MS} ms; measuring anyway`);
        return undefined;
      }
    }));
    // samples come once a second: the publisher's latest may predate its selected pair
    for (const p of pages) {
      const deadline = Date.now() + RELAY_CHECK_MS;
      for (;;) {
        const types = Object.entries(await candidateTypes(p));
        if (types.length > 0 && types.every(([, type]) => type === 'relay')) break;
        if (Date.now() > deadline) {
          throw new Error(`${setup} ${p.name}: not relayed through its link: ${JSON.stringify(types)}`);
        }
        await delay(250);
      }
    }
    await delay(WARMUP_S * 1000);
    const from = await Promise.all(pages.map((p) => pageNow(p)));
    await delay(WINDOW_S * 1000);
    const to = await Promise.all(pages.map((p) => pageNow(p)));
    const windowOf = (i: number) => ({ from: from[i]!, to: to[i]! });
    const subscribers: SubscriberOutcome[] = [];
    for (const [i, sub] of subs.entries()) {
      subscribers.push({ index: i, quality: await receiveQuality(sub, windowOf(i + 1)), firstFrameMs: firstFrames[i], link: await sub.link.stats() });
    }
    if (TIMELINE_DIR !== undefined) {
      await writeTimeline(run, `${scenario.id}-${setup}`, { pub, subs, participants, startedAt, window: { from: from[1]!, to: to[1]! } });
    }
    return { subscribers, publisher: Object.values(await sendQuality(pub, windowOf(0))), publisherLink: await pub.link.stats() };
  } finally {
    for (const p of pages) await p.close();
  }
}

/**
 * The call's timeline (BENCH_NETWORK_TIMELINE): per second from the start of its setup, each
 * subscriber's received video beside the media role's snapshot of its downlink, then what the
 * publisher's encoders sent; `<call>.txt` to read, `<call>.jsonl` for tools.
 */
async function writeTimeline(run: Run, call: string, c: {
  pub: CallPage; subs: readonly CallPage[]; participants: readonly string[]; startedAt: number; window: { from: number; to: number };
}): Promise<void> {
  const dir = TIMELINE_DIR!;
  mkdirSync(dir, { recursive: true });
  const snapshots = downlinkLines(run.serverLog(), c.participants);
  const text: string[] = [`${call}: window ${((c.window.from - c.startedAt) / 1000).toFixed(1)} s to ${((c.window.to - c.startedAt) / 1000).toFixed(1)} s`];
  const json: string[] = [];
  for (const [i, sub] of c.subs.entries()) {
    const own = snapshots.filter((l) => l.participantId === c.participants[i]);
    const rows = timelineOf(receivedTimeline(await samplesOf(sub, await receivingSource(sub))), own, c.startedAt);
    text.push(...rows.map((r) => formatRow(sub.name, r)));
    json.push(...rows.map((r) => JSON.stringify({ page: sub.name, ...r })));
  }
  const sources = await sourcesOfSending(c.pub);
  for (const source of sources) text.push(...sentTimeline(await samplesOf(c.pub, source), c.startedAt, `${c.pub.name} ${source}`));
  writeFileSync(join(dir, `${call}.txt`), `${text.join('\n')}\n`);
  writeFileSync(join(dir, `${call}.jsonl`), `${json.join('\n')}\n`);
  progress(`  timeline: ${join(dir, `${call}.txt`)}`);
}

const sourcesOfSending = async (p: CallPage): Promise<string[]> =>
  p.kind === 'platform' ? [SESSION_SOURCE] : (await sourcesOf(p)).filter((s) => s.startsWith('to:'));

const meanOf = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const r1 = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(1));

function describeOutcome(setup: Setup, o: Outcome): void {
  for (const s of o.subscribers) {
    const q = s.quality;
    progress(`  ${setup.padEnd(8)} sub${s.index}: ${r1(q.meanFps)} fps, ${r1(q.stallSeconds)} s stalled in ${q.stallEpisodes}, ` +
      `audio concealed ${r1(q.audioConcealedPercent)} %, video ${r1(q.videoKbps)} kbit/s, ${q.frameWidth ?? '-'}x${q.frameHeight ?? '-'}, ` +
      `freezes ${q.freezes}, nack ${q.nacks}, pli ${q.plis}, first frame ${s.firstFrameMs ?? '-'} ms; ` +
      `link down lost ${s.link.down.lost} queue-dropped ${s.link.down.queueDropped} of ${s.link.down.packets}`);
  }
  for (const [i, q] of o.publisher.entries()) {
    progress(`  ${setup.padEnd(8)} pub pc${i}: sent ${r1(q.videoKbps)} kbit/s video at ${r1(q.fps)} fps, ${q.frameWidth ?? '-'} wide, ` +
      `target ${r1(q.targetKbps)}, estimate ${r1(q.availableOutgoingKbps)} kbit/s, limited by ${q.qualityLimitation ?? '-'}, pli ${q.plis}, nack ${q.nacks}`);
  }
  progress(`  ${setup.padEnd(8)} pub link up: lost ${o.publisherLink.up.lost} queue-dropped ${o.publisherLink.up.queueDropped} of ${o.publisherLink.up.packets}`);
}

/** The receive figures of a group of subscribers: means over them, stalls summed. */
function groupOf(o: Outcome, capped: readonly number[], wantCapped: boolean): {
  fps: number; stallSeconds: number; stallEpisodes: number; concealed: number; kbps: number; widths: (number | undefined)[];
} | undefined {
  const subs = o.subscribers.filter((s) => capped.includes(s.index) === wantCapped).map((s) => s.quality);
  if (subs.length === 0) return undefined;
  return {
    fps: meanOf(subs.map((q) => q.meanFps)),
    stallSeconds: subs.reduce((n, q) => n + q.stallSeconds, 0),
    stallEpisodes: subs.reduce((n, q) => n + q.stallEpisodes, 0),
    concealed: meanOf(subs.map((q) => q.audioConcealedPercent)),
    kbps: meanOf(subs.map((q) => q.videoKbps)),
    widths: subs.map((q) => q.frameWidth),
  };
}

function printComparison(scenario: Scenario, platform: Outcome, direct: Outcome): void {
  const groups = scenario.subscribers.length === 1 ? [['', scenario.capped.length > 0]] as const
    : [['_capped', true], ['_uncapped', false]] as const;
  for (const [suffix, wantCapped] of groups) {
    const p = groupOf(platform, scenario.capped, wantCapped);
    const d = groupOf(direct, scenario.capped, wantCapped);
    if (!p || !d) continue;
    const prefix = `${scenario.name}${suffix}`;
    const common = { scenario: scenario.id, baseline_is: DIRECT_IS, window_s: WINDOW_S };
    const fpsHeld = p.fps >= FPS_TARGET_RATIO * d.fps;
    const stallHeld = p.stallSeconds <= d.stallSeconds;
    if (!fpsHeld) missed.push(`${prefix}_fps ${p.fps.toFixed(1)} / ${d.fps.toFixed(1)}`);
    if (!stallHeld) missed.push(`${prefix}_stall_seconds ${p.stallSeconds.toFixed(0)} / ${d.stallSeconds.toFixed(0)}`);
    printFigure({ bench: BENCH, figure: `${prefix}_fps`, value: p.fps, unit: 'frames/s', baseline: d.fps, ...common,
      subscribers: p.widths.length, target_ratio: FPS_TARGET_RATIO, meets_target: fpsHeld });
    printFigure({ bench: BENCH, figure: `${prefix}_stall_seconds`, value: p.stallSeconds, unit: 's', baseline: d.stallSeconds, ...common,
      episodes: p.stallEpisodes, baseline_episodes: d.stallEpisodes, target: 'at most the baseline', meets_target: stallHeld });
    printFigure({ bench: BENCH, figure: `${prefix}_audio_concealed`, value: p.concealed, unit: '%', baseline: d.concealed, ...common,
      difference_pp: p.concealed - d.concealed });
    printFigure({ bench: BENCH, figure: `${prefix}_video_rate`, value: p.kbps, unit: 'kbit/s', baseline: d.kbps, ...common });
    printFigure({ bench: BENCH, figure: `${prefix}_frame_width`, value: meanOf(p.widths.map((w) => w ?? 0)), unit: 'px',
      baseline: meanOf(d.widths.map((w) => w ?? 0)), ...common, widths: p.widths, baseline_widths: d.widths });
  }
}

/** (d): the uncapped subscribers of the fan-out against the clean call's subscriber, in each setup. */
function printFanoutAgainstClean(scenario: Scenario, outcomes: ReadonlyMap<string, Record<Setup, Outcome>>): void {
  const clean = outcomes.get('clean');
  const fanout = outcomes.get(scenario.id);
  if (scenario.capped.length === 0 || scenario.subscribers.length < 2) return;
  if (!clean || !fanout) {
    progress(`${scenario.id}: no comparison with the clean call (run the clean scenario too)`);
    return;
  }
  for (const setup of ['platform', 'direct'] as const) {
    const now = groupOf(fanout[setup], scenario.capped, false);
    const before = groupOf(clean[setup], [], false);
    if (!now || !before) continue;
    const common = { scenario: scenario.id, setup, baseline_is: `the ${setup} call's subscriber in the clean scenario`, window_s: WINDOW_S };
    printFigure({ bench: BENCH, figure: `${scenario.name}_uncapped_fps_vs_clean_${setup}`, value: now.fps, unit: 'frames/s', baseline: before.fps, ...common });
    printFigure({ bench: BENCH, figure: `${scenario.name}_uncapped_frame_width_vs_clean_${setup}`, value: meanOf(now.widths.map((w) => w ?? 0)),
      unit: 'px', baseline: meanOf(before.widths.map((w) => w ?? 0)), ...common, widths: now.widths });
  }
}

async function main(): Promise<void> {
  const scenarios = selectedScenarios();
  const work = mkdtempSync(join(tmpdir(), 'bench-webrtc-network-'));
  let coturn: Coturn | undefined;
  let platform: ServerProcess | undefined;
  let lab: CallLab | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> => {
    cleaning ??= (async () => {
      await lab?.close().catch(() => undefined);
      await platform?.stop().catch(() => undefined);
      await coturn?.stop().catch(() => undefined);
      if (process.env['BENCH_KEEP_DIR'] === '1') progress(`kept ${work}`);
      else rmSync(work, { recursive: true, force: true });
    })();
    return cleaning;
  };
  // the browser, the links, coturn and the server all go before the process does
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(128 + (signal === 'SIGHUP' ? 1 : signal === 'SIGINT' ? 2 : 15))));
  }
  try {
    coturn = await startCoturn({ secret: TURN_SECRET });
    platform = await startPlatformServer({
      dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
      env: {
        RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
        RTC_TURN_SECRET: TURN_SECRET, RTC_TURN_URIS: `turn:${coturn.host}:${coturn.port}?transport=udp`,
        ...(TIMELINE_DIR !== undefined ? { RTC_LOG_LEVEL: 'debug' } : {}),
      },
    });
    const api = platform.urls['api']!;
    const cred = await createCredential(api);
    const authorization = basicAuthorization(cred.appId, cred.appSecret);
    const issue = async (body: Record<string, unknown>): Promise<TokenResponse> => {
      const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify({ turn: true, ttl_seconds: 3600, ...body }), { authorization });
      if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
      return JSON.parse(res.text) as TokenResponse;
    };
    lab = await startCallLab({ turn: { host: coturn.host, port: coturn.port, secret: TURN_SECRET }, handleSignals: false });
    const logFile = join(work, 'platform.log');
    const run: Run = { lab, issue, serverLog: () => readFileSync(logFile, 'utf8') };

    // opening the pages, the call's setup and its first frame, closing: about 3 s on top
    const perRun = WARMUP_S + WINDOW_S + 3;
    progress(`${scenarios.map((s) => s.id).join(', ')}: platform and direct each, ${WARMUP_S} s warm-up and ${WINDOW_S} s measured ` +
      `(about ${Math.ceil((scenarios.length * 2 * perRun) / 60)} min)`);
    const outcomes = new Map<string, Record<Setup, Outcome>>();
    for (const [round, scenario] of scenarios.entries()) {
      progress(`${scenario.id} (${scenario.name}): ${scenario.title}`);
      // the order alternates, so that neither setup always runs on a browser that just worked
      const order: Setup[] = round % 2 === 0 ? ['platform', 'direct'] : ['direct', 'platform'];
      const got: Partial<Record<Setup, Outcome>> = {};
      for (const setup of order) {
        got[setup] = await runScenario(run, scenario, setup, round);
        describeOutcome(setup, got[setup]);
      }
      const both = { platform: got.platform!, direct: got.direct! };
      outcomes.set(scenario.id, both);
      printComparison(scenario, both.platform, both.direct);
    }
    for (const scenario of scenarios) printFanoutAgainstClean(scenario, outcomes);
    progress(missed.length === 0 ? 'every target held' : `targets missed: ${missed.join('; ')}`);
  } finally {
    await cleanup();
  }
}

await main();
