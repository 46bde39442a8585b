/**
 * A call's timeline, second by second (docs/operations/benchmarks.md, "webrtc-network"): what a
 * subscriber page received and decoded in each interval of its getStats samples
 * (call-quality.ts), beside the media role's downlink snapshot of that subscriber for the same
 * second (its debug log line `media: downlink bandwidth`: the estimate, the layer forwarded, a
 * pause, the key frames asked, the playout floor). Read to find why a window missed its figures.
 */
import type { InboundSample, StatsSample } from './call-quality.ts';

/** One second of what a page received: deltas over the interval ending at `at` (page clock, ms). */
export interface ReceivedSecond {
  readonly at: number;
  readonly fps: number;
  readonly width: number | undefined;
  readonly videoKbps: number;
  readonly lost: number;
  readonly nacks: number;
  readonly plis: number;
  readonly keyFrames: number;
  readonly freezes: number;
  /** Concealed audio among the samples played out in the interval, percent (NaN: none played). */
  readonly concealedPercent: number;
}

/** A downlink snapshot from the media role's log, at `at` (epoch ms). */
export interface DownlinkLine {
  readonly at: number;
  readonly participantId: string;
  readonly estimateKbps: number;
  readonly ackedKbps: number;
  readonly lossPercent: number;
  readonly delay: string;
  readonly rttMs?: number;
  readonly videos: readonly {
    readonly streamId: number; readonly target: number; readonly current: number; readonly layerKbps: readonly number[];
    readonly layerFps: readonly number[]; readonly paused?: boolean; readonly keyFrameAsks?: number; readonly playoutFloorMs?: number;
  }[];
}

const mainVideo = (entries: readonly InboundSample[]): InboundSample | undefined =>
  entries.filter((e) => e.kind === 'video').sort((a, b) => (b.bytesReceived ?? 0) - (a.bytesReceived ?? 0))[0];
const mainAudio = (entries: readonly InboundSample[]): InboundSample | undefined =>
  entries.filter((e) => e.kind === 'audio').sort((a, b) => (b.bytesReceived ?? 0) - (a.bytesReceived ?? 0))[0];

function change(cur: InboundSample | undefined, before: readonly InboundSample[], field: keyof InboundSample): number {
  if (!cur) return 0;
  const prev = before.find((e) => e.ssrc === cur.ssrc);
  const now = cur[field];
  const then = prev?.[field];
  return (typeof now === 'number' ? now : 0) - (typeof then === 'number' ? then : 0);
}

/** Each interval of a page's samples as one second received. */
export function receivedTimeline(samples: readonly StatsSample[]): ReceivedSecond[] {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  const out: ReceivedSecond[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    const dt = (cur.at - prev.at) / 1000;
    if (dt <= 0) continue;
    const video = mainVideo(cur.inbound);
    const audio = mainAudio(cur.inbound);
    const played = change(audio, prev.inbound, 'totalSamplesReceived');
    out.push({
      at: cur.at,
      fps: Math.max(0, change(video, prev.inbound, 'framesDecoded')) / dt,
      width: video?.frameWidth,
      videoKbps: (Math.max(0, change(video, prev.inbound, 'bytesReceived')) * 8) / dt / 1000,
      lost: change(video, prev.inbound, 'packetsLost'),
      nacks: change(video, prev.inbound, 'nackCount'),
      plis: change(video, prev.inbound, 'pliCount'),
      keyFrames: change(video, prev.inbound, 'keyFramesDecoded'),
      freezes: change(video, prev.inbound, 'freezeCount'),
      concealedPercent: played > 0 ? (100 * change(audio, prev.inbound, 'concealedSamples')) / played : Number.NaN,
    });
  }
  return out;
}

/** The `media: downlink bandwidth` lines of a media role's JSON log for these participants. */
export function downlinkLines(log: string, participantIds: readonly string[]): DownlinkLine[] {
  const out: DownlinkLine[] = [];
  for (const text of log.split('\n')) {
    if (!text.includes('"media: downlink bandwidth"')) continue;
    try {
      const line = JSON.parse(text) as { time?: string; participantId?: string } & Omit<DownlinkLine, 'at'>;
      if (line.participantId === undefined || !participantIds.includes(line.participantId) || line.time === undefined) continue;
      out.push({ ...line, participantId: line.participantId, at: Date.parse(line.time) });
    } catch {
      // a line cut short by the process ending
    }
  }
  return out;
}

/** One second of a subscriber: what it received, and the server's last snapshot of its downlink in that second. */
export interface TimelineRow extends ReceivedSecond {
  /** Seconds since `startAt`. */
  readonly t: number;
  readonly server: DownlinkLine | undefined;
}

/** The received seconds beside the snapshots (matched by time: the one taken last up to each second's end). */
export function timelineOf(received: readonly ReceivedSecond[], snapshots: readonly DownlinkLine[], startAt: number): TimelineRow[] {
  const lines = [...snapshots].sort((a, b) => a.at - b.at);
  let next = 0;
  return received.map((r) => {
    // a snapshot comes once a second: a second without one shows none rather than repeating the last
    let server: DownlinkLine | undefined;
    while (next < lines.length && lines[next]!.at <= r.at) server = lines[next++];
    return { ...r, t: Math.round((r.at - startAt) / 100) / 10, server };
  });
}

const n0 = (v: number): string => (Number.isFinite(v) ? v.toFixed(0) : '-');

/** One row as a line of text: the page's figures, then the server's (`|`), for reading a run by eye. */
export function formatRow(page: string, row: TimelineRow): string {
  const got = `${row.t.toFixed(1).padStart(6)} s ${page} ${n0(row.fps).padStart(3)} fps ${String(row.width ?? '-').padStart(4)} wide ` +
    `${n0(row.videoKbps).padStart(5)} kbit/s lost ${row.lost} nack ${row.nacks} pli ${row.plis} key ${row.keyFrames} ` +
    `freeze ${row.freezes} concealed ${Number.isFinite(row.concealedPercent) ? row.concealedPercent.toFixed(1) : '-'} %`;
  const s = row.server;
  if (!s) return got;
  const videos = s.videos.map((v) => `layer ${v.current}/${v.target}${v.paused ? ' paused' : ''} of [${v.layerKbps.join(',')}] kbit/s ` +
    `[${v.layerFps.join(',')}] fps, key asks ${v.keyFrameAsks ?? '-'}, floor ${v.playoutFloorMs ?? '-'} ms`).join('; ');
  return `${got} | estimate ${s.estimateKbps} acked ${s.ackedKbps} kbit/s loss ${s.lossPercent} % ${s.delay} rtt ${s.rttMs ?? '-'} | ${videos}`;
}

/** What a publishing page's encoders sent in each interval, one entry per video encoding (a simulcast layer, or a callee). */
export function sentTimeline(samples: readonly StatsSample[], startAt: number, page: string): string[] {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  const out: string[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    const dt = (cur.at - prev.at) / 1000;
    if (dt <= 0) continue;
    const encodings = cur.outbound.filter((o) => o.kind === 'video').map((o) => {
      const before = prev.outbound.find((p) => p.ssrc === o.ssrc);
      const fps = ((o.framesEncoded ?? 0) - (before?.framesEncoded ?? 0)) / dt;
      const kbps = (((o.bytesSent ?? 0) - (before?.bytesSent ?? 0)) * 8) / dt / 1000;
      return `${o.frameWidth ?? '-'}w ${n0(fps)} fps ${n0(kbps)} kbit/s (target ${n0((o.targetBitrate ?? Number.NaN) / 1000)}, ` +
        `${o.qualityLimitationReason ?? '-'}, pli ${(o.pliCount ?? 0) - (before?.pliCount ?? 0)}, nack ${(o.nackCount ?? 0) - (before?.nackCount ?? 0)}, ` +
        `reported lost ${o.remoteFractionLost === undefined ? '-' : (o.remoteFractionLost * 100).toFixed(0)} %)`;
    });
    const estimate = cur.pair?.availableOutgoingBitrate;
    const rtt = cur.pair?.currentRoundTripTime;
    out.push(`${((cur.at - startAt) / 1000).toFixed(1).padStart(6)} s ${page} sent ${encodings.join(' + ')}; ` +
      `estimate ${estimate === undefined ? '-' : n0(estimate / 1000)} kbit/s, rtt ${rtt === undefined ? '-' : n0(rtt * 1000)} ms`);
  }
  return out;
}
