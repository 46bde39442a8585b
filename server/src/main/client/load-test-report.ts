/**
 * What `rtc load-test` measures and prints (docs/reference/cli.md, "Load test"): its flag values
 * parsed, the counters of each synthetic participant, the summary computed from them and its two
 * forms, a table and JSON. No I/O, no clock: times come in as arguments.
 */
import { DelayHistogram } from './load-test-delay.ts';

/** `30s`, `2m`, `500ms`, `1h` or a number of seconds; undefined when it is none of them. */
export function parseDurationMs(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(m[1]) * unit;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** `800k`, `1.5M`, `2500000` (bits per second); undefined when it is none of them. */
export function parseBitrate(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([kKmM])?$/.exec(text.trim());
  if (!m) return undefined;
  const factor = m[2] === undefined ? 1 : m[2].toLowerCase() === 'k' ? 1e3 : 1e6;
  const bps = Number(m[1]) * factor;
  return Number.isFinite(bps) ? Math.round(bps) : undefined;
}

export type LoadRole = 'publisher' | 'subscriber';

/** Loss bookkeeping of one received RTP source: sequence numbers extended past their 16-bit wrap. */
export class SequenceTracker {
  private first: number | undefined;
  private highest = 0;
  private received = 0;

  record(sequenceNumber: number): void {
    this.received += 1;
    if (this.first === undefined) {
      this.first = sequenceNumber;
      this.highest = sequenceNumber;
      return;
    }
    // the extended number nearest to the highest so far (a late packet is behind it, a new one ahead)
    const cycle = this.highest - (this.highest & 0xffff);
    let extended = cycle + sequenceNumber;
    if (extended - this.highest > 0x8000) extended -= 0x10000;
    else if (this.highest - extended > 0x8000) extended += 0x10000;
    if (extended > this.highest) this.highest = extended;
    if (extended < this.first) this.first = extended;
  }

  /** Packets the sequence numbers say were sent, and how many of them never came (duplicates do not make up for them). */
  counts(): { expected: number; lost: number } {
    if (this.first === undefined) return { expected: 0, lost: 0 };
    const expected = this.highest - this.first + 1;
    return { expected, lost: Math.max(0, expected - this.received) };
  }
}

/** The counters of one synthetic participant, from its join to its leave. */
export interface ParticipantCounters {
  /** RTP payload bytes and packets sent (publishers) or received (subscribers). */
  bytes: number;
  packets: number;
  /** Video frames sent, or received whole (the packet with the marker bit), over every video stream. */
  videoFrames: number;
  /** Subscribers: the loss of what they receive. */
  readonly sequences: Map<string, SequenceTracker>;
  /** Subscribers: the size each key frame received announced, by video stream, in the order they came. */
  readonly keyFrames: Map<number, FrameSize[]>;
  /** Subscribers: the one-way delay of what they receive over the measurement window (load-test-delay.ts). */
  readonly delays: DelayHistogram;
}

export interface FrameSize {
  readonly width: number;
  readonly height: number;
}

export function newCounters(): ParticipantCounters {
  return { bytes: 0, packets: 0, videoFrames: 0, sequences: new Map(), keyFrames: new Map(), delays: new DelayHistogram() };
}

/** Records a received key frame's size: a new entry only when the size changed (another layer). */
export function recordKeyFrame(counters: ParticipantCounters, streamId: number, size: FrameSize): void {
  const sizes = counters.keyFrames.get(streamId);
  if (!sizes) counters.keyFrames.set(streamId, [size]);
  else if (sizes.at(-1)?.width !== size.width || sizes.at(-1)?.height !== size.height) sizes.push(size);
}

/** A layer the publishers send: its rid (undefined without simulcast) and size. */
export interface SentLayer {
  readonly rid: string | undefined;
  readonly width: number;
  readonly height: number;
}

/** A layer a subscriber received: the rid of the sent layer of that size (null without simulcast or for an unknown size). */
export interface ReceivedLayer {
  readonly rid: string | null;
  readonly width: number;
  readonly height: number;
}

/** The layers one subscriber received of each video stream, in the order they came (the last is the current one). */
export interface SubscriberLayers {
  readonly participant: string;
  readonly streams: readonly { readonly stream_id: number; readonly layers: readonly ReceivedLayer[] }[];
}

export interface ParticipantResult {
  readonly name: string;
  readonly role: LoadRole;
  /** The id the media node gave it at its join, and that node (`host:port`, from its token); undefined before it joined. */
  readonly participantId: string | undefined;
  readonly node: string | undefined;
  /** From the token request to a connected peer connection; undefined when the join failed. */
  readonly joinMs: number | undefined;
  /** Why the join failed, or why a joined participant was disconnected before the end. */
  readonly failure: string | undefined;
  readonly dropped: string | undefined;
  readonly counters: ParticipantCounters;
}

/** Counter values at the start of the measurement window, by participant name. */
export type Snapshot = ReadonlyMap<string, { readonly bytes: number; readonly packets: number; readonly videoFrames: number }>;

export function snapshot(results: readonly ParticipantResult[]): Snapshot {
  return new Map(results.map((r) => [r.name, { bytes: r.counters.bytes, packets: r.counters.packets, videoFrames: r.counters.videoFrames }]));
}

export interface RoleSummary {
  readonly requested: number;
  readonly joined: number;
  readonly failed: number;
  /** All participants of the role together, over the measurement window. */
  readonly bitrate_bps: number;
  /** The mean of the joined participants of the role. */
  readonly bitrate_per_participant_bps: number;
  readonly bytes: number;
  readonly packets: number;
  /**
   * Video frames per second of one video stream (sent, or received whole): the frames of the role
   * over the window, divided by its video streams (`video_streams`).
   */
  readonly frames_per_second: number;
  /** The video streams the figure is averaged over: each joined publisher's, or each joined subscriber's times the publishers'. */
  readonly video_streams: number;
}

export interface LoadSummary {
  readonly room: string;
  readonly url: string;
  /** The measurement window: from the last join (or join failure) to the end or the interruption. */
  readonly duration_seconds: number;
  readonly interrupted: boolean;
  readonly join_ms: { readonly p50: number | null; readonly p95: number | null; readonly max: number | null };
  readonly publishers: RoleSummary;
  readonly subscribers: RoleSummary & {
    readonly packet_loss_percent: number; readonly packets_lost: number; readonly packets_expected: number;
    /** Of every subscriber's samples together (see `participants` for each one's). */
    readonly one_way_delay_ms: { readonly p50: number | null; readonly p99: number | null };
    /** Per joined subscriber: the layer(s) of each video stream it received, from the sizes its key frames announced. */
    readonly received_layers: readonly SubscriberLayers[];
  };
  /** Each participant: where placement put it and, for a subscriber, the delay and loss of what it received. */
  readonly participants: readonly ParticipantSummary[];
  readonly failed_joins: readonly { readonly participant: string; readonly role: LoadRole; readonly reason: string }[];
  readonly dropped: readonly { readonly participant: string; readonly role: LoadRole; readonly reason: string }[];
  /** CPU of the load-test process over the whole run; percent of one core. */
  readonly cpu: { readonly user_seconds: number; readonly system_seconds: number; readonly percent: number };
}

export interface ParticipantSummary {
  readonly participant: string;
  /** null when it never joined. */
  readonly participant_id: string | null;
  readonly role: LoadRole;
  /** The media node (`host:port`) its token named; null when it got none. */
  readonly node: string | null;
  /** From a publisher's send to this subscriber's receipt, over the measurement window; null for a publisher, or with no sample. */
  readonly one_way_delay_ms: { readonly p50: number | null; readonly p99: number | null } | null;
  /** Of every stream received, over the whole run (as `subscribers.packets_expected`); null for a publisher. */
  readonly packets_expected: number | null;
  readonly packets_lost: number | null;
}

/** The nearest-rank percentile of sorted values; null for none. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

function roleSummary(results: readonly ParticipantResult[], role: LoadRole, before: Snapshot, seconds: number, streamsEach: number): RoleSummary {
  const all = results.filter((r) => r.role === role);
  const joined = all.filter((r) => r.joinMs !== undefined);
  let bytes = 0;
  let packets = 0;
  let frames = 0;
  for (const r of joined) {
    const start = before.get(r.name) ?? { bytes: 0, packets: 0, videoFrames: 0 };
    bytes += r.counters.bytes - start.bytes;
    packets += r.counters.packets - start.packets;
    frames += r.counters.videoFrames - start.videoFrames;
  }
  const bitrate = seconds > 0 ? (bytes * 8) / seconds : 0;
  const streams = joined.length * streamsEach;
  return {
    requested: all.length,
    joined: joined.length,
    failed: all.length - joined.length,
    bitrate_bps: Math.round(bitrate),
    bitrate_per_participant_bps: joined.length === 0 ? 0 : Math.round(bitrate / joined.length),
    bytes,
    packets,
    frames_per_second: streams === 0 || seconds <= 0 ? 0 : round(frames / seconds / streams),
    video_streams: streams,
  };
}

export interface SummaryInput {
  readonly room: string;
  readonly url: string;
  readonly results: readonly ParticipantResult[];
  /** Counters when the measurement window opened. */
  readonly before: Snapshot;
  readonly windowSeconds: number;
  readonly interrupted: boolean;
  /** process.cpuUsage() since the start, and the run's length in seconds. */
  readonly cpu: NodeJS.CpuUsage;
  readonly runSeconds: number;
  /** The layers each publisher sends, to name a received size by its rid. */
  readonly layers: readonly SentLayer[];
}

function receivedLayers(results: readonly ParticipantResult[], sent: readonly SentLayer[]): SubscriberLayers[] {
  const named = (size: FrameSize): ReceivedLayer => ({
    rid: sent.find((l) => l.width === size.width && l.height === size.height)?.rid ?? null, width: size.width, height: size.height,
  });
  return results.filter((r) => r.role === 'subscriber' && r.joinMs !== undefined).map((r) => ({
    participant: r.name,
    streams: [...r.counters.keyFrames].sort(([a], [b]) => a - b).map(([streamId, sizes]) => ({ stream_id: streamId, layers: sizes.map(named) })),
  }));
}

/** Packets a participant's received streams say were sent to it, and lost. */
function lossOf(r: ParticipantResult): { expected: number; lost: number } {
  let expected = 0;
  let lost = 0;
  for (const tracker of r.counters.sequences.values()) {
    const c = tracker.counts();
    expected += c.expected;
    lost += c.lost;
  }
  return { expected, lost };
}

function participantSummary(r: ParticipantResult): ParticipantSummary {
  const subscriber = r.role === 'subscriber';
  const loss = lossOf(r);
  const delays = r.counters.delays;
  return {
    participant: r.name, participant_id: r.participantId ?? null, role: r.role, node: r.node ?? null,
    one_way_delay_ms: subscriber ? { p50: delays.percentile(50), p99: delays.percentile(99) } : null,
    packets_expected: subscriber ? loss.expected : null,
    packets_lost: subscriber ? loss.lost : null,
  };
}

export function summarize(input: SummaryInput): LoadSummary {
  const { results, before, windowSeconds: seconds } = input;
  const joins = results.flatMap((r) => (r.joinMs === undefined ? [] : [r.joinMs])).sort((a, b) => a - b);
  let expected = 0;
  let lost = 0;
  const delays = new DelayHistogram();
  for (const r of results) {
    if (r.role !== 'subscriber') continue;
    const loss = lossOf(r);
    expected += loss.expected;
    lost += loss.lost;
    delays.add(r.counters.delays);
  }
  const cpuSeconds = (input.cpu.user + input.cpu.system) / 1e6;
  const videoPublishers = results.filter((r) => r.role === 'publisher' && r.joinMs !== undefined && r.counters.videoFrames > 0).length;
  const join = (v: number | null): number | null => (v === null ? null : Math.round(v));
  return {
    room: input.room,
    url: input.url,
    duration_seconds: round(seconds),
    interrupted: input.interrupted,
    join_ms: { p50: join(percentile(joins, 50)), p95: join(percentile(joins, 95)), max: join(percentile(joins, 100)) },
    publishers: roleSummary(results, 'publisher', before, seconds, 1),
    subscribers: {
      // a subscriber receives the video of every joined publisher that sends video
      ...roleSummary(results, 'subscriber', before, seconds, videoPublishers),
      packets_expected: expected,
      packets_lost: lost,
      packet_loss_percent: expected === 0 ? 0 : round((100 * lost) / expected, 2),
      one_way_delay_ms: { p50: delays.percentile(50), p99: delays.percentile(99) },
      received_layers: receivedLayers(results, input.layers),
    },
    participants: results.map(participantSummary),
    failed_joins: results.flatMap((r) => (r.failure === undefined ? [] : [{ participant: r.name, role: r.role, reason: r.failure }])),
    dropped: results.flatMap((r) => (r.dropped === undefined ? [] : [{ participant: r.name, role: r.role, reason: r.dropped }])),
    cpu: {
      user_seconds: round(input.cpu.user / 1e6, 2),
      system_seconds: round(input.cpu.system / 1e6, 2),
      percent: input.runSeconds > 0 ? round((100 * cpuSeconds) / input.runSeconds) : 0,
    },
  };
}

/** Bits per second as people read them: `812 kbit/s`, `1.50 Mbit/s`. */
export function formatBitrate(bps: number): string {
  if (bps >= 1e6) return `${(bps / 1e6).toFixed(2)} Mbit/s`;
  if (bps >= 1e3) return `${Math.round(bps / 1e3)} kbit/s`;
  return `${Math.round(bps)} bit/s`;
}

const ms = (v: number | null): string => (v === null ? '-' : `${v} ms`);

/** The summary as a table and lines, for a person at a terminal. */
export function summaryLines(s: LoadSummary): string[] {
  const rows: [string, string, string][] = [
    ['', 'publishers', 'subscribers'],
    ['joined', `${s.publishers.joined}/${s.publishers.requested}`, `${s.subscribers.joined}/${s.subscribers.requested}`],
    ['bitrate (all)', formatBitrate(s.publishers.bitrate_bps), formatBitrate(s.subscribers.bitrate_bps)],
    ['bitrate (each)', formatBitrate(s.publishers.bitrate_per_participant_bps), formatBitrate(s.subscribers.bitrate_per_participant_bps)],
    ['video frames/s (per stream)', String(s.publishers.frames_per_second), String(s.subscribers.frames_per_second)],
    ['video layer received', '-', currentLayers(s.subscribers.received_layers)],
    ['packets', String(s.publishers.packets), String(s.subscribers.packets)],
    ['packet loss', '-', `${s.subscribers.packet_loss_percent} % (${s.subscribers.packets_lost} of ${s.subscribers.packets_expected})`],
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = [
    `load test of room ${s.room} at ${s.url}: ${s.duration_seconds} s measured${s.interrupted ? ' (interrupted)' : ''}`,
    `join time: p50 ${ms(s.join_ms.p50)}, p95 ${ms(s.join_ms.p95)}, max ${ms(s.join_ms.max)}`,
    `one-way delay to subscribers: p50 ${ms(s.subscribers.one_way_delay_ms.p50)}, p99 ${ms(s.subscribers.one_way_delay_ms.p99)}`,
    `media nodes: ${nodesText(s.participants)}`,
    '',
    ...rows.map((r) => `  ${r[0].padEnd(widths[0]!)}  ${r[1].padStart(widths[1]!)}  ${r[2].padStart(widths[2]!)}`),
    '',
    `cpu of this process: ${s.cpu.percent} % of one core (user ${s.cpu.user_seconds} s, system ${s.cpu.system_seconds} s)`,
  ];
  if (s.subscribers.received_layers.some((r) => r.streams.length > 0)) {
    lines.push('layers received (rid and size, in the order they came):');
    for (const r of s.subscribers.received_layers) {
      const streams = r.streams.map((st) => `stream ${st.stream_id} ${st.layers.map(layerText).join(' → ')}`);
      lines.push(`  ${r.participant}: ${streams.length > 0 ? streams.join(', ') : 'no video'}`);
    }
  }
  if (s.failed_joins.length > 0) {
    lines.push(`failed joins: ${s.failed_joins.length}`);
    for (const [reason, names] of groupByReason(s.failed_joins)) lines.push(`  ${names.length} × ${reason} (${names.join(', ')})`);
  }
  if (s.dropped.length > 0) {
    lines.push(`disconnected before the end: ${s.dropped.length}`);
    for (const [reason, names] of groupByReason(s.dropped)) lines.push(`  ${names.length} × ${reason} (${names.join(', ')})`);
  }
  return lines;
}

/** The nodes placement gave the participants, each with how many: `127.0.0.1:7880 (4), 127.0.0.1:7881 (2)`. */
function nodesText(participants: readonly ParticipantSummary[]): string {
  const counts = new Map<string, number>();
  for (const p of participants) if (p.node !== null) counts.set(p.node, (counts.get(p.node) ?? 0) + 1);
  return counts.size === 0 ? '-' : [...counts].map(([node, n]) => `${node} (${n})`).join(', ');
}

const layerText = (l: ReceivedLayer): string => `${l.rid === null ? '' : `${l.rid} `}${l.width}x${l.height}`;

/** Each subscriber's streams counted by the layer they receive now (the last key frame's): `f 1280x720 ×4`. */
function currentLayers(received: readonly SubscriberLayers[]): string {
  const counts = new Map<string, number>();
  for (const r of received) {
    for (const st of r.streams) {
      const last = st.layers.at(-1);
      if (last) counts.set(layerText(last), (counts.get(layerText(last)) ?? 0) + 1);
    }
  }
  if (counts.size === 0) return '-';
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([text, n]) => `${text} ×${n}`).join(', ');
}

function groupByReason(list: readonly { readonly participant: string; readonly reason: string }[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { participant, reason } of list) groups.set(reason, [...(groups.get(reason) ?? []), participant]);
  return groups;
}

/** The progress line: participants joined, time, aggregate bitrates of the last interval. */
export function progressLine(p: {
  readonly joined: number; readonly total: number; readonly failed: number; readonly elapsedSeconds: number;
  readonly outBps: number; readonly inBps: number;
}): string {
  const failed = p.failed > 0 ? ` (${p.failed} failed)` : '';
  return `joined ${p.joined}/${p.total}${failed}  ${Math.floor(p.elapsedSeconds)} s  out ${formatBitrate(p.outBps)}  in ${formatBitrate(p.inBps)}`;
}
