/**
 * How good a call is, from `getStats()`: a sampler that runs in each page once a second
 * (QUALITY_SAMPLER_SCRIPT), and the figures of a window computed from its samples in Node
 * (summarizeReceive, summarizeSend). Used by the impaired-network tests and bench alike
 * (docs/operations/benchmarks.md, "webrtc-network").
 */

/** Installed in a page: `callQuality.watch(name, getStats)` samples that source every second. */
export const QUALITY_SAMPLER_SCRIPT = `(() => {
  if (globalThis.callQuality) return;
  const KEEP = 900;
  const INBOUND = ['kind', 'ssrc', 'trackIdentifier', 'framesDecoded', 'framesPerSecond', 'frameWidth', 'frameHeight', 'freezeCount',
    'totalFreezesDuration', 'nackCount', 'pliCount', 'firCount', 'bytesReceived', 'packetsReceived', 'packetsLost', 'keyFramesDecoded',
    'concealedSamples', 'totalSamplesReceived', 'concealmentEvents'];
  const OUTBOUND = ['kind', 'ssrc', 'bytesSent', 'targetBitrate', 'framesEncoded', 'framesPerSecond', 'frameWidth', 'frameHeight',
    'qualityLimitationReason', 'nackCount', 'pliCount', 'firCount', 'retransmittedBytesSent', 'packetsSent'];
  const PAIR = ['availableOutgoingBitrate', 'availableIncomingBitrate', 'bytesSent', 'bytesReceived', 'currentRoundTripTime'];
  const pick = (stat, fields) => {
    const out = {};
    for (const field of fields) if (stat[field] !== undefined) out[field] = stat[field];
    return out;
  };
  const sources = new Map();
  const sample = async (source) => {
    if (source.busy) return;
    source.busy = true;
    try {
      const report = await source.getStats();
      const stats = Array.isArray(report) ? report : report ? [...report.values()] : [];
      const byId = new Map(stats.map((s) => [s.id, s]));
      const transport = stats.find((s) => s.type === 'transport' && s.selectedCandidatePairId);
      const pair = (transport && byId.get(transport.selectedCandidatePairId))
        ?? stats.find((s) => s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded');
      const remoteIn = stats.filter((s) => s.type === 'remote-inbound-rtp');
      source.samples.push({
        at: performance.timeOrigin + performance.now(),
        inbound: stats.filter((s) => s.type === 'inbound-rtp').map((s) => pick(s, INBOUND)),
        outbound: stats.filter((s) => s.type === 'outbound-rtp').map((s) => {
          const remote = remoteIn.find((r) => r.localId === s.id);
          return { ...pick(s, OUTBOUND), remoteFractionLost: remote?.fractionLost, remoteRoundTripTime: remote?.roundTripTime };
        }),
        pair: pair ? { ...pick(pair, PAIR), localCandidateType: byId.get(pair.localCandidateId)?.candidateType } : undefined,
      });
      if (source.samples.length > KEEP) source.samples.splice(0, source.samples.length - KEEP);
    } catch {
      // a closed connection has no statistics: the gap shows in the samples
    } finally {
      source.busy = false;
    }
  };
  setInterval(() => { for (const source of sources.values()) void sample(source); }, 1000);
  globalThis.callQuality = {
    watch(name, getStats) {
      const source = { getStats, samples: [], busy: false };
      sources.set(name, source);
      void sample(source);
    },
    samples(name, since = 0) { return (sources.get(name)?.samples ?? []).filter((s) => s.at >= since); },
    names() { return [...sources.keys()]; },
    now() { return performance.timeOrigin + performance.now(); },
  };
})();`;

/** An `inbound-rtp` entry as sampled (fields absent when the browser gives none). */
export interface InboundSample {
  readonly kind: 'audio' | 'video';
  readonly ssrc: number;
  readonly trackIdentifier?: string;
  readonly framesDecoded?: number;
  readonly framesPerSecond?: number;
  readonly frameWidth?: number;
  readonly frameHeight?: number;
  readonly freezeCount?: number;
  readonly totalFreezesDuration?: number;
  readonly nackCount?: number;
  readonly pliCount?: number;
  readonly firCount?: number;
  readonly bytesReceived?: number;
  readonly packetsReceived?: number;
  readonly packetsLost?: number;
  readonly keyFramesDecoded?: number;
  readonly concealedSamples?: number;
  readonly totalSamplesReceived?: number;
  readonly concealmentEvents?: number;
}

/** An `outbound-rtp` entry as sampled, with its `remote-inbound-rtp` loss and round trip. */
export interface OutboundSample {
  readonly kind: 'audio' | 'video';
  readonly ssrc: number;
  readonly bytesSent?: number;
  readonly targetBitrate?: number;
  readonly framesEncoded?: number;
  readonly framesPerSecond?: number;
  readonly frameWidth?: number;
  readonly frameHeight?: number;
  readonly qualityLimitationReason?: string;
  readonly nackCount?: number;
  readonly pliCount?: number;
  readonly firCount?: number;
  readonly retransmittedBytesSent?: number;
  readonly packetsSent?: number;
  readonly remoteFractionLost?: number;
  readonly remoteRoundTripTime?: number;
}

/** The selected candidate pair as sampled. */
export interface PairSample {
  readonly availableOutgoingBitrate?: number;
  readonly availableIncomingBitrate?: number;
  readonly bytesSent?: number;
  readonly bytesReceived?: number;
  readonly currentRoundTripTime?: number;
  readonly localCandidateType?: string;
}

/** One sample of one source (a peer connection), at `at` ms on the page's clock (epoch based). */
export interface StatsSample {
  readonly at: number;
  readonly inbound: readonly InboundSample[];
  readonly outbound: readonly OutboundSample[];
  readonly pair: PairSample | undefined;
}

/** A stretch of the page's clock, ms. */
export interface QualityWindow {
  readonly from: number;
  readonly to: number;
}

/** Fewer decoded frames than this in a second makes it a stalled second. */
export const STALL_FPS = 3;

/** What the receiving side got over a window. */
export interface ReceiveQuality {
  /** Seconds the samples cover. */
  readonly seconds: number;
  /** Frames decoded per second over the window. */
  readonly meanFps: number;
  /** Seconds with fewer than STALL_FPS frames decoded, and how many runs of them. */
  readonly stallSeconds: number;
  readonly stallEpisodes: number;
  /** Concealed audio samples among those played out, percent (NaN: none played out). */
  readonly audioConcealedPercent: number;
  readonly videoKbps: number;
  readonly audioKbps: number;
  /** The frame width and height seen the longest while frames were decoded (undefined: none decoded). */
  readonly frameWidth: number | undefined;
  readonly frameHeight: number | undefined;
  /** Chromium's own freeze count and time, and the feedback sent. */
  readonly freezes: number;
  readonly freezeSeconds: number;
  readonly nacks: number;
  readonly plis: number;
  /** Video packets reported lost among those expected, percent. */
  readonly videoLossPercent: number;
}

/** What the sending side did over a window. */
export interface SendQuality {
  readonly seconds: number;
  readonly videoKbps: number;
  readonly audioKbps: number;
  /** Encoded frames per second. */
  readonly fps: number;
  readonly frameWidth: number | undefined;
  /** Means of the samples: the encoder's target and the bandwidth estimate. */
  readonly targetKbps: number;
  readonly availableOutgoingKbps: number;
  /** The `qualityLimitationReason` seen the longest. */
  readonly qualityLimitation: string | undefined;
  /** Keyframe requests and NACKs that reached the sender. */
  readonly plis: number;
  readonly nacks: number;
}

interface Interval {
  readonly seconds: number;
  readonly prev: StatsSample;
  readonly cur: StatsSample;
}

/** Consecutive sample pairs whose later sample falls in the window; the one before it opens it. */
function intervalsOf(samples: readonly StatsSample[], window: QualityWindow): Interval[] {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  const out: Interval[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.at <= window.from || cur.at > window.to) continue;
    out.push({ seconds: (cur.at - prev.at) / 1000, prev, cur });
  }
  return out;
}

/** The stream of a kind with the most bytes: a page's main remote (or local) video or audio. */
function mainOf<T extends { kind: string; ssrc: number }>(entries: readonly T[], kind: string, bytes: (e: T) => number): T | undefined {
  let best: T | undefined;
  for (const e of entries) if (e.kind === kind && (best === undefined || bytes(e) > bytes(best))) best = e;
  return best;
}

/** `field` of the same stream in the previous sample (0 when it was not there yet). */
function delta<T extends { ssrc: number }>(cur: T | undefined, prevEntries: readonly T[], field: (e: T) => number | undefined): number {
  if (!cur) return 0;
  const before = prevEntries.find((e) => e.ssrc === cur.ssrc);
  return Math.max(0, (field(cur) ?? 0) - (before ? field(before) ?? 0 : 0));
}

/** The value held the longest, each interval weighing its length. */
function longest<V>(weighted: readonly (readonly [V | undefined, number])[]): V | undefined {
  const totals = new Map<V, number>();
  for (const [value, weight] of weighted) if (value !== undefined) totals.set(value, (totals.get(value) ?? 0) + weight);
  let best: V | undefined;
  let bestWeight = -1;
  for (const [value, weight] of totals) {
    if (weight > bestWeight) {
      best = value;
      bestWeight = weight;
    }
  }
  return best;
}

const kbps = (bytes: number, seconds: number): number => (seconds > 0 ? (bytes * 8) / seconds / 1000 : 0);
const mean = (values: readonly number[]): number => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);

/** The receiving figures of one peer connection's samples over `window`. */
export function summarizeReceive(samples: readonly StatsSample[], window: QualityWindow): ReceiveQuality {
  let seconds = 0;
  let frames = 0;
  let stallSeconds = 0;
  let stallEpisodes = 0;
  let stalled = false;
  let concealed = 0;
  let played = 0;
  let videoBytes = 0;
  let audioBytes = 0;
  let freezes = 0;
  let freezeSeconds = 0;
  let nacks = 0;
  let plis = 0;
  let received = 0;
  let lost = 0;
  const widths: (readonly [number | undefined, number])[] = [];
  const heights: (readonly [number | undefined, number])[] = [];
  for (const { seconds: dt, prev, cur } of intervalsOf(samples, window)) {
    seconds += dt;
    const video = mainOf(cur.inbound, 'video', (e) => e.bytesReceived ?? 0);
    const audio = mainOf(cur.inbound, 'audio', (e) => e.bytesReceived ?? 0);
    const decoded = delta(video, prev.inbound, (e) => e.framesDecoded);
    frames += decoded;
    const isStall = decoded / dt < STALL_FPS;
    if (isStall) {
      stallSeconds += dt;
      if (!stalled) stallEpisodes++;
    }
    stalled = isStall;
    concealed += delta(audio, prev.inbound, (e) => e.concealedSamples);
    played += delta(audio, prev.inbound, (e) => e.totalSamplesReceived);
    videoBytes += delta(video, prev.inbound, (e) => e.bytesReceived);
    audioBytes += delta(audio, prev.inbound, (e) => e.bytesReceived);
    freezes += delta(video, prev.inbound, (e) => e.freezeCount);
    freezeSeconds += delta(video, prev.inbound, (e) => e.totalFreezesDuration);
    nacks += delta(video, prev.inbound, (e) => e.nackCount);
    plis += delta(video, prev.inbound, (e) => e.pliCount);
    received += delta(video, prev.inbound, (e) => e.packetsReceived);
    // packetsLost can go down (late packets): a signed difference, summed
    if (video) lost += (video.packetsLost ?? 0) - (prev.inbound.find((e) => e.ssrc === video.ssrc)?.packetsLost ?? 0);
    // a stalled stream keeps the size of its last frame: only intervals with frames decoded count
    if (decoded > 0) {
      widths.push([video?.frameWidth, dt]);
      heights.push([video?.frameHeight, dt]);
    }
  }
  return {
    seconds,
    meanFps: seconds > 0 ? frames / seconds : 0,
    stallSeconds,
    stallEpisodes,
    audioConcealedPercent: played > 0 ? (100 * concealed) / played : Number.NaN,
    videoKbps: kbps(videoBytes, seconds),
    audioKbps: kbps(audioBytes, seconds),
    frameWidth: longest(widths),
    frameHeight: longest(heights),
    freezes,
    freezeSeconds,
    nacks,
    plis,
    videoLossPercent: received + lost > 0 ? (100 * Math.max(0, lost)) / (received + Math.max(0, lost)) : 0,
  };
}

/** The sending figures of one peer connection's samples over `window`. */
export function summarizeSend(samples: readonly StatsSample[], window: QualityWindow): SendQuality {
  let seconds = 0;
  let videoBytes = 0;
  let audioBytes = 0;
  let frames = 0;
  let plis = 0;
  let nacks = 0;
  const targets: number[] = [];
  const available: number[] = [];
  const widths: (readonly [number | undefined, number])[] = [];
  const reasons: (readonly [string | undefined, number])[] = [];
  for (const { seconds: dt, prev, cur } of intervalsOf(samples, window)) {
    seconds += dt;
    const video = mainOf(cur.outbound, 'video', (e) => e.bytesSent ?? 0);
    const audio = mainOf(cur.outbound, 'audio', (e) => e.bytesSent ?? 0);
    videoBytes += delta(video, prev.outbound, (e) => e.bytesSent);
    audioBytes += delta(audio, prev.outbound, (e) => e.bytesSent);
    frames += delta(video, prev.outbound, (e) => e.framesEncoded);
    plis += delta(video, prev.outbound, (e) => e.pliCount);
    nacks += delta(video, prev.outbound, (e) => e.nackCount);
    if (video?.targetBitrate !== undefined) targets.push(video.targetBitrate / 1000);
    if (cur.pair?.availableOutgoingBitrate !== undefined) available.push(cur.pair.availableOutgoingBitrate / 1000);
    widths.push([video?.frameWidth, dt]);
    reasons.push([video?.qualityLimitationReason, dt]);
  }
  return {
    seconds,
    videoKbps: kbps(videoBytes, seconds),
    audioKbps: kbps(audioBytes, seconds),
    fps: seconds > 0 ? frames / seconds : 0,
    frameWidth: longest(widths),
    targetKbps: mean(targets),
    availableOutgoingKbps: mean(available),
    qualityLimitation: longest(reasons),
    plis,
    nacks,
  };
}

/** The remote video now: its frames so far, and its rate and size over the last interval sampled. */
export interface CurrentVideo {
  readonly framesDecoded: number;
  readonly fps: number;
  readonly frameWidth: number | undefined;
  readonly frameHeight: number | undefined;
  /** When the last sample was taken (page clock, ms). */
  readonly at: number | undefined;
}

export function currentVideoOf(samples: readonly StatsSample[]): CurrentVideo {
  const last = samples.at(-1);
  const prev = samples.at(-2);
  const video = last ? mainOf(last.inbound, 'video', (e) => e.bytesReceived ?? 0) : undefined;
  const seconds = last && prev ? (last.at - prev.at) / 1000 : 0;
  return {
    framesDecoded: video?.framesDecoded ?? 0,
    fps: prev && seconds > 0 ? delta(video, prev.inbound, (e) => e.framesDecoded) / seconds : 0,
    frameWidth: video?.frameWidth,
    frameHeight: video?.frameHeight,
    at: last?.at,
  };
}
