import type { MediaKind } from '@rtc/protocol';
import {
  GenericNack, RtcpRrPacket, RtcpSrPacket, RtcpTransportLayerFeedback,
  type RTCDtlsTransport, type RTCRtpTransceiver, type RtcpPacket,
} from 'werift';
import { DownlinkEstimator, feedbackResults } from '../rtp/downlink-estimator.ts';
import { CompactTwcc } from '../rtp/twcc-compact.ts';
import { OVERHEAD_BYTES } from '../rtp/layers.ts';
import { allocate, ceiling, KEEP_MARGIN, type VideoDemand } from '../rtp/allocation.ts';
import { Pacer } from '../rtp/pacer.ts';
import { everyShared } from '../../core/shared-interval.ts';
import { EMPTY_PADDING, FILL_CLUSTER, PADDING_BYTES, PROBE_MAX_LOSS, ProbeSchedule, probeTargetBps, probeTrainPackets } from '../rtp/probe-schedule.ts';
import { RetransmitBudget } from '../rtp/retransmit-budget.ts';
import { playoutFloorMs } from '../rtp/playout-delay.ts';
import { HeaderBytes } from '../rtp/header-bytes.ts';
import type { RtpAccount } from '../room/member.ts';
import type { MediaStats } from '../../metrics/media-stats.ts';
import { snapshotOf, type DownlinkSnapshot } from './downlink-snapshot.ts';
import { DownTrack, type DownTrackLink, type ReceiverReport, type VideoBounds } from './down-track.ts';
import { RtpRoute } from './rtp-route.ts';

export type { DownlinkSnapshot, VideoBounds };

/** Where a subscriber's estimate starts: a camera's middle layer fits, the top layer waits for feedback. */
const INITIAL_BPS = 300_000;
const MIN_BPS = 50_000;
const MAX_BPS = 20_000_000;
const TICK_MS = 50;
const DEFAULT_RTT_MS = 100;
/** Video and retransmissions leave at this multiple of the estimate: a key frame spreads over time, not into one burst. */
const PACE_FACTOR = 2;
/** The pacing rate never drops below this (bit/s), so a low estimate still lets a key frame out in time. */
const MIN_PACE_BPS = 1_000_000;
/** The pacer runs this often while packets wait. */
const PACE_INTERVAL_MS = 5;
/** Video waiting longer than this at the pacing rate is dropped, and its streams start again at a key frame. */
const MAX_PACE_QUEUE_MS = 700;
/** How often the downlink's state goes to the debug log. */
const SNAPSHOT_INTERVAL_MS = 1_000;

/** What the downlink tells its session; a video pauses when its smallest layer does not fit (`bandwidth`) or its source is out of reach (`relay`). */
export interface DownlinkEvents {
  paused(streamId: number, reason: 'bandwidth' | 'relay'): void;
  resumed(streamId: number): void;
  layer(streamId: number, layer: number, width: number, height: number): void;
  /** A down track was made for a stream the client receives: its published stream should feed it. */
  attach(streamId: number, track: DownTrack): void;
  /** Every few seconds: the estimate and what it was shared out to (for debug logs). */
  report(snapshot: DownlinkSnapshot): void;
}

/** The ids of the header extensions the downlink writes, as the answer negotiated them. */
export interface ExtensionIds {
  readonly mid: number | undefined;
  readonly twcc: number | undefined;
  readonly playoutDelay: number | undefined;
}

/** The client's link counts as lossy this long after its last NACK. */
const LOSSY_MEMORY_MS = 10_000;

interface QueuedPacket {
  readonly out: DownTrack;
  readonly seq: number;
  readonly timestamp: number;
  readonly marker: boolean;
  readonly payload: Buffer;
  /** A retransmission, charged to its own allowance when it was asked for (rtp/retransmit-budget.ts). */
  readonly charged: boolean;
}

/**
 * The sending half of a session's peer connection (docs/protocol/media.md, "Bandwidth"): it numbers
 * every packet for transport-wide feedback, estimates the client's downlink from that feedback, shares
 * the estimate out (audio first, then a simulcast layer per video that fits, else the video pauses),
 * paces video and retransmissions within the same budget, and probes with padding when a larger layer
 * waits for room. Each stream the client receives is a down track (down-track.ts), fed by its published
 * stream. werift's own sender is bypassed for RTP: it would retransmit every NACKed packet at once and
 * cannot switch layers.
 */
export class Downlink implements DownTrackLink {
  readonly stats: MediaStats;
  private readonly events: DownlinkEvents;
  private readonly clock: () => number;
  private readonly account: RtpAccount;
  private readonly estimator = new DownlinkEstimator({ initialBps: INITIAL_BPS, minBps: MIN_BPS, maxBps: MAX_BPS });
  private readonly tracks = new Map<number, DownTrack>();
  private readonly bySsrc = new Map<number, DownTrack>();
  private transport: RTCDtlsTransport | undefined;
  private readonly route = new RtpRoute();
  /** The peer connection is up (its state, apart from the transport's). */
  private connected = false;
  private readonly rtxBudget = new RetransmitBudget();
  private lastTickMs: number | undefined;
  private stopTicks: (() => void) | undefined;
  private readonly probes = new ProbeSchedule();
  /** The rate the last train stood for: its result is capped there. */
  private probeTrainBps = 0;
  private audioBytes = 0;
  private audioBps = 0;
  private lastAllocateMs = 0;
  private lastReportMs = 0;
  private lastSnapshotMs = 0;
  private lastNackMs = Number.NEGATIVE_INFINITY;
  /** Video and retransmissions wait here and leave at PACE_FACTOR x the estimate; audio goes at once. */
  private readonly pacer: Pacer<QueuedPacket> = new Pacer({
    send: (p) => this.send(p.out, p.seq, p.timestamp, p.marker, p.payload, this.clock(), 0, p.charged),
    rateBps: () => Math.max(this.estimator.bps * PACE_FACTOR, MIN_PACE_BPS),
    onOverflow: (dropped) => this.overflow(dropped),
    maxQueueMs: MAX_PACE_QUEUE_MS,
    intervalMs: PACE_INTERVAL_MS,
    now: () => this.clock(),
  });
  private ids: ExtensionIds = { mid: undefined, twcc: undefined, playoutDelay: undefined };

  constructor(events: DownlinkEvents, account: RtpAccount, now: () => number, stats: MediaStats) {
    this.events = events;
    this.account = account;
    this.clock = now;
    this.stats = stats;
  }

  now(): number {
    return this.clock();
  }

  get estimateBps(): number {
    return this.estimator.bps;
  }

  get transportUp(): boolean {
    return this.transport !== undefined && this.transport.state === 'connected';
  }

  get sendable(): boolean {
    return this.connected && this.transport !== undefined && this.transport.state === 'connected';
  }

  /** The transport RTP goes out on (max-bundle: one for the connection). */
  attach(transport: RTCDtlsTransport): void {
    if (this.transport === transport) return;
    this.transport = transport;
    this.stopTicks ??= everyShared(TICK_MS, () => this.tick());
  }

  /** Whether the peer connection is up: media goes out only while it is. */
  setConnected(connected: boolean): void {
    this.connected = connected;
  }

  /** The m-lines the client receives now, by stream id (after each negotiation). */
  setOutbound(
    entries: readonly { readonly streamId: number; readonly kind: MediaKind; readonly transceiver: RTCRtpTransceiver }[],
    ids: ExtensionIds,
  ): void {
    this.ids = ids;
    const next = new Map<number, DownTrack>();
    const added: DownTrack[] = [];
    for (const e of entries) {
      let track = this.tracks.get(e.streamId);
      if (!track || track.transceiver !== e.transceiver || track.kind !== e.kind) {
        const previous = track;
        track = new DownTrack(e.streamId, e.kind, e.transceiver, this, this.account);
        // a video the client was told is paused stays paused on its new m-line until it is resumed,
        // so that the client hears of the resume (a new track would start forwarding unannounced)
        if (previous?.paused && previous.kind === e.kind) {
          track.paused = true;
          track.target = -1;
        }
        added.push(track);
      }
      track.header = undefined; // the answer may have changed the extension ids or the codec
      next.set(e.streamId, track);
    }
    for (const [id, track] of this.tracks) if (next.get(id) !== track) track.detach();
    this.tracks.clear();
    this.bySsrc.clear();
    for (const [id, track] of next) {
      this.tracks.set(id, track);
      this.bySsrc.set(track.transceiver.sender.ssrc, track);
    }
    for (const track of added) this.events.attach(track.streamId, track);
    this.allocate();
  }

  /** The down track of a stream the client receives. */
  track(streamId: number): DownTrack | undefined {
    return this.tracks.get(streamId);
  }

  setBounds(streamId: number, bounds: VideoBounds): void {
    const track = this.tracks.get(streamId);
    if (!track) return;
    track.bounds = bounds;
    this.allocate();
  }

  /** RTCP from the client: transport-wide feedback, NACKs, receiver reports. */
  onRtcp(packet: RtcpPacket): void {
    if (packet.type === RtcpRrPacket.type || packet.type === RtcpSrPacket.type) return this.onReports(packet.reports);
    if (packet.type !== RtcpTransportLayerFeedback.type) return;
    const { feedback } = packet;
    if (feedback instanceof CompactTwcc) {
      const now = this.clock();
      this.estimator.onFeedback(feedbackResults(feedback), now);
      if (now - this.lastAllocateMs >= 200) this.allocate();
    } else if (feedback instanceof GenericNack) {
      this.stats.nacksReceived += 1;
      const track = this.bySsrc.get(feedback.mediaSourceSsrc);
      if (!track) return;
      const now = this.clock();
      this.lastNackMs = now;
      track.retransmit(feedback.lost, now);
    }
  }

  /** The loss the client last reported on a stream's m-line (fraction, 0 when unknown). */
  lossOf(streamId: number): number {
    return this.tracks.get(streamId)?.reportedLoss ?? 0;
  }

  /** The worst loss of the streams it receives (fraction), each over enough packets (rtp/loss-window.ts); undefined before any. */
  get worstLoss(): number | undefined {
    let worst: number | undefined;
    for (const track of this.tracks.values()) {
      const loss = track.loss.fraction;
      if (loss !== undefined) worst = Math.max(worst ?? 0, loss);
    }
    return worst;
  }

  /** The streams it receives, by id. */
  streamIds(): number[] {
    return [...this.tracks.keys()];
  }

  forwardedLayer(streamId: number): number | undefined {
    return this.tracks.get(streamId)?.forwardedLayer;
  }

  close(): void {
    this.stopTicks?.();
    this.stopTicks = undefined;
    this.pacer.close();
    for (const track of this.tracks.values()) track.detach();
    this.tracks.clear();
    this.bySsrc.clear();
    this.transport = undefined;
  }

  sendAudio(track: DownTrack, seq: number, timestamp: number, marker: boolean, payload: Buffer, nowMs: number): void {
    this.audioBytes += payload.length + OVERHEAD_BYTES;
    this.send(track, seq, timestamp, marker, payload, nowMs);
  }

  /** Retransmissions come `charged` to their own allowance (rtp/retransmit-budget.ts) and always queue. */
  pace(track: DownTrack, seq: number, timestamp: number, marker: boolean, payload: Buffer, charged: boolean): void {
    const bytes = payload.length + OVERHEAD_BYTES; // what the pacer lets out at once goes without a queue entry
    if (!charged && this.pacer.admit(bytes)) this.send(track, seq, timestamp, marker, payload, this.clock());
    else this.pacer.enqueue({ out: track, seq, timestamp, marker, payload, charged }, bytes);
  }

  makeRoom(bytes: number): void {
    if (!this.pacer.fits(bytes)) this.pacer.overflow();
  }

  takeRetransmitBudget(bytes: number): boolean {
    return this.rtxBudget.allow(bytes);
  }

  layerTold(streamId: number, layer: number, width: number, height: number): void {
    this.events.layer(streamId, layer, width, height);
  }

  rttMs(track: DownTrack): number {
    return track.rttMs === undefined ? this.rtt ?? DEFAULT_RTT_MS : Math.max(track.rttMs, 10);
  }

  /** The round trip to the client, from the last receiver report that answered a sender report. */
  get rtt(): number | undefined {
    for (const track of this.tracks.values()) if (track.rttMs !== undefined) return track.rttMs;
    return undefined;
  }

  private send(out: DownTrack, seq: number, timestamp: number, marker: boolean, payload: Buffer, now: number, probe = 0, charged = false): void {
    const transport = this.transport;
    if (!transport) return;
    const sender = out.transceiver.sender;
    const codec = sender.codec;
    if (!codec) return;
    out.header ??= new HeaderBytes(sender.ssrc, codec.payloadType, this.ids, out.transceiver.mid);
    let playoutUnits: number | undefined;
    if (this.ids.playoutDelay !== undefined && out.kind === 'video' && probe === 0) {
      const floor = this.playoutFloor(out, now);
      if (floor > 0) playoutUnits = Math.ceil(floor / 10);
    }
    let twccSeq: number | undefined;
    if (this.ids.twcc !== undefined) {
      twccSeq = (transport.transportSequenceNumber + 1) & 0xffff;
      transport.transportSequenceNumber = twccSeq;
    }
    const size = payload.length + OVERHEAD_BYTES;
    if (twccSeq !== undefined) this.estimator.onSent(twccSeq, size, now, probe);
    out.onSent(seq, timestamp, payload.length, now, !charged);
    this.stats.webrtcOut.add(out.kindCode, payload.length);
    this.route.send(transport, payload, out.header.write(seq, timestamp, marker, probe !== 0, twccSeq ?? 0, playoutUnits));
    if (probe === 0) out.markSent(seq, now);
  }

  /** docs/protocol/media.md, "Bandwidth": the repair of the publisher's uplink, and of the client's own link while it loses packets. */
  private playoutFloor(out: DownTrack, now: number): number {
    return playoutFloorMs(out.layers?.recoveryMs(now) ?? 0, now - this.lastNackMs <= LOSSY_MEMORY_MS ? this.rttMs(out) : 0);
  }

  /** The pacer's queue held more than the downlink can carry soon: its videos start again at key frames (DownTrack.dropped). */
  private overflow(dropped: readonly QueuedPacket[]): void {
    const now = this.clock();
    for (const out of new Set(dropped.map((p) => p.out))) {
      const media = dropped.filter((p) => p.out === out && !p.charged);
      if (!out.dropped(media.map((p) => p.seq), now)) continue;
      for (const p of media) this.send(out, p.seq, p.timestamp, false, EMPTY_PADDING, now, FILL_CLUSTER);
    }
  }

  /** Sender reports of every m-line that sent lately: lip sync for the client, round trips for the server. */
  private senderReports(now: number): void {
    const transport = this.transport;
    if (!transport) return;
    const packets: RtcpPacket[] = [];
    for (const track of this.tracks.values()) {
      const report = track.senderReport(now);
      if (report) packets.push(report);
    }
    if (packets.length > 0) this.route.sendRtcp(transport, packets);
  }

  private onReports(reports: readonly ReceiverReport[]): void {
    const now = this.clock();
    for (const report of reports) this.bySsrc.get(report.ssrc)?.onReceiverReport(report, now);
  }

  /** Shares the estimate out: audio first, then video layers (docs/protocol/media.md, "Bandwidth"). */
  private allocate(): void {
    const now = this.clock();
    this.lastAllocateMs = now;
    const demands: VideoDemand[] = [];
    const videos: DownTrack[] = [];
    for (const out of this.tracks.values()) {
      if (out.kind !== 'video') continue;
      videos.push(out);
      const layers = out.layers;
      demands.push({ layers: layers?.rates(now) ?? [], settled: layers?.settled(), sizes: layers?.sizes() ?? [], bounds: out.bounds, current: out.paused ? -1 : out.target });
    }
    if (videos.length === 0) return;
    const available = Math.max(this.estimator.bps - this.audioBps * 1.1, 0);
    const targets = allocate(demands, available);
    for (const [i, out] of videos.entries()) {
      const requested = demands[i]!;
      const hidden = (requested.bounds.maxWidth === 0 || requested.bounds.maxHeight === 0);
      const lowest = requested.layers.findIndex((r) => r > 0);
      const keepable = lowest >= 0 && requested.layers[lowest]! <= available * KEEP_MARGIN;
      const relayLost = out.stream?.sourceLost === true; // a relayed stream whose link to its origin is down pauses, as for bandwidth
      const target = relayLost ? -1 : out.hold.target({ target: targets[i]!, lowest, hidden, paused: out.paused, loss: this.estimator.loss, keepable }, now);
      const wanted = target >= 0;
      if (!wanted) {
        if (!out.paused) {
          out.paused = true;
          out.current = -1;
          out.rewriter.reset();
          // a tile the client hid is not a pause it needs telling about
          if (!hidden && (relayLost || requested.layers.some((r) => r > 0))) {
            if (!relayLost) { this.stats.bandwidthPauses += 1; this.probes.paused(now); }
            this.events.paused(out.streamId, relayLost ? 'relay' : 'bandwidth');
          }
        }
        out.target = -1;
        continue;
      }
      if (out.paused) {
        out.paused = false;
        out.current = -1;
        if (!hidden) this.events.resumed(out.streamId);
      }
      if (out.target !== target || out.current !== target) {
        out.target = target;
        if (out.current !== target) out.askKeyFrame(target, now);
      }
    }
  }

  private tick(): void {
    const now = this.clock();
    const elapsed = this.lastTickMs === undefined ? TICK_MS : Math.min(now - this.lastTickMs, 500);
    this.lastTickMs = now;
    this.rtxBudget.refill(this.estimator.bps, elapsed);
    // audio's share, measured over the last second
    this.audioBps = this.audioBps * 0.9 + ((this.audioBytes * 8 * 1000) / elapsed) * 0.1;
    this.audioBytes = 0;
    if (now - this.lastAllocateMs >= 500) this.allocate();
    if (now - this.lastReportMs >= 1_000) {
      this.lastReportMs = now;
      this.senderReports(now);
    }
    if (now - this.lastSnapshotMs >= SNAPSHOT_INTERVAL_MS) {
      this.lastSnapshotMs = now;
      this.events.report(snapshotOf(this.estimator, this.audioBps, this.rtt, this.tracks.values(), now, (track) => this.playoutFloor(track, now)));
    }
    this.probe(now);
  }

  /** Padding trains that show whether a larger layer, or a paused video, would fit now (rtp/probe-schedule.ts). */
  private probe(now: number): void {
    const pendingId = this.probes.pendingId;
    const due = this.probes.due(now, pendingId !== undefined && this.estimator.probeCameBack(pendingId));
    if (due) {
      const result = this.estimator.probeResult(due.id, this.probeTrainBps);
      if (result !== undefined) this.estimator.applyProbe(result);
      this.probes.settle(due, this.estimator.bps, now);
      this.allocate();
      return;
    }
    // the first probe, and one back right after a large drop, do not wait for the pacer: they relieve its queue
    const first = this.probes.first;
    const recoveryBps = this.estimator.recoveryProbeBps(now);
    if (!this.probes.mayStart(now, recoveryBps !== undefined) || this.estimator.delaySignal === 'overuse'
      || this.estimator.loss > PROBE_MAX_LOSS || (!first && recoveryBps === undefined && !this.pacer.idle)) return;
    // what the next step up needs: a paused video's smallest layer, the next layer of one below its
    // wish, the layer of one forwarded though it does not fit (it pauses unless the estimate grows), or
    // what the videos kept on their layers run over the estimate (a capped first probe leaves that)
    let need = 0;
    let forwarded = this.audioBps * 1.1 - this.estimator.bps;
    let carrier: DownTrack | undefined;
    for (const out of this.tracks.values()) {
      const layers = out.layers;
      if (out.kind !== 'video' || !layers) continue;
      if (out.rewriter.hasSent && out.lastMarker) carrier = out;
      const rates = layers.rates(now);
      if (!out.paused) forwarded += rates[out.target] ?? 0;
      if (out.hold.holding && !out.paused) need = Math.max(need, rates[out.target] ?? 0);
      const next = out.paused ? 0 : out.target + 1;
      if (next >= rates.length || (rates[next] ?? 0) <= 0) continue; // a video of one layer ends here, every tick
      if (next > ceiling({ layers: rates, sizes: layers.sizes(), bounds: out.bounds, current: out.target })) continue;
      const step = (rates[next] ?? 0) - (out.paused ? 0 : (rates[out.target] ?? 0));
      if (step > need) need = step;
    }
    need = Math.max(need, forwarded);
    if ((need <= 0 && !first) || !carrier) return;
    this.probeTrainBps = probeTargetBps(this.estimator.bps, need, { first, recoveryBps });
    const count = probeTrainPackets(this.probeTrainBps);
    const id = this.probes.start(now, this.estimator.bps);
    const padding = Buffer.alloc(PADDING_BYTES);
    padding[PADDING_BYTES - 1] = PADDING_BYTES;
    const ts = carrier.rewriter.timestamp;
    for (const seq of carrier.rewriter.takePadding(count)) this.send(carrier, seq, ts, false, padding, now, id);
  }
}
