import type { MediaKind } from '@rtc/protocol';
import {
  GenericNack, RtcpRrPacket, RtcpSenderInfo, RtcpSrPacket, RtcpTransportLayerFeedback, RtpHeader,
  type RTCDtlsTransport, type RTCRtpTransceiver, type RtcpPacket,
} from 'werift';
import { DownlinkEstimator, feedbackResults } from '../rtp/downlink-estimator.ts';
import { CompactTwcc } from '../rtp/twcc-compact.ts';
import { rewriteVp8 } from '../rtp/vp8.ts';
import { OVERHEAD_BYTES, type ForwardedRtp, type StreamLayers } from '../rtp/layers.ts';
import { allocate, ceiling, type VideoDemand } from '../rtp/allocation.ts';
import { Pacer } from '../rtp/pacer.ts';
import { cumulativeLost } from '../rtp/receive-stats.ts';
import type { MediaStats } from '../../metrics/media-stats.ts';
import { HISTORY, Outbound, type VideoBounds } from './outbound.ts';

export type { VideoBounds };

/** Where a subscriber's estimate starts: a camera's middle layer fits, the top layer waits for feedback. */
const INITIAL_BPS = 300_000;
const MIN_BPS = 50_000;
const MAX_BPS = 20_000_000;
/** The send budget holds at most this much of the estimate (a key frame burst fits). */
const BUDGET_MS = 250;
/** Retransmissions only while the budget holds at least this share of it: media comes first. */
const RTX_FLOOR = 0.1;
const TICK_MS = 50;
/** Padding bytes of one probe packet (the most one RTP padding length byte can say). */
const PADDING_BYTES = 255;
/** A probe train carries this much of the target rate, at once: the bottleneck spreads it. */
const PROBE_TRAIN_MS = 120;
const PROBE_MIN_INTERVAL_MS = 2_000;
const PROBE_MAX_INTERVAL_MS = 16_000;
/** The probe's outcome is read this long after its train left. */
const PROBE_SETTLE_MS = 600;
/** A probe train goes at most this multiple of the estimate. */
const PROBE_MAX_FACTOR = 2;
const DEFAULT_RTT_MS = 100;
/** Key frame requests for one layer, at most this often. */
const KEY_FRAME_INTERVAL_MS = 300;
/** Video and retransmissions leave at this multiple of the estimate: a key frame spreads over time, not into one burst. */
const PACE_FACTOR = 2;
/** The pacing rate never drops below this (bit/s), so a low estimate still lets a key frame out in time. */
const MIN_PACE_BPS = 1_000_000;
/** The pacer runs this often while packets wait. */
const PACE_INTERVAL_MS = 5;
/** Video waiting longer than this at the pacing rate is dropped, and its streams start again at a key frame. */
const MAX_PACE_QUEUE_MS = 700;
/**
 * A forwarded video pauses only once its smallest layer has not fitted for this long, unless the
 * client's link loses more than LOSS_PAUSE of what is sent: a dip of the estimate (each key frame
 * queues for a moment on a slow link) is not a link that cannot carry the video.
 */
const PAUSE_AFTER_MS = 2_000;
const LOSS_PAUSE = 0.1;
/** How often the downlink's state goes to the debug log. */
const SNAPSHOT_INTERVAL_MS = 2_000;

/** What the downlink tells its session. */
export interface DownlinkEvents {
  paused(streamId: number): void;
  resumed(streamId: number): void;
  layer(streamId: number, layer: number, width: number, height: number): void;
  /** The forwarder needs a key frame of this layer of a stream to start or switch. */
  keyFrame(streamId: number, layer: number): void;
  /** Every few seconds: the estimate and what it was shared out to (for debug logs). */
  report(snapshot: DownlinkSnapshot): void;
}

/** The downlink's state as the media role's debug log line `media: downlink bandwidth` shows it. */
export interface DownlinkSnapshot {
  readonly estimateKbps: number;
  readonly ackedKbps: number;
  readonly lossPercent: number;
  readonly delay: string;
  readonly rttMs: number | undefined;
  readonly audioKbps: number;
  readonly videos: readonly {
    readonly streamId: number; readonly target: number; readonly current: number; readonly layerKbps: readonly number[]; readonly layerFps: readonly number[];
  }[];
}

/** The ids of the header extensions the downlink writes, as the answer negotiated them. */
export interface ExtensionIds {
  readonly mid: number | undefined;
  readonly twcc: number | undefined;
  readonly playoutDelay: number | undefined;
}

/** Playout delay bounds are in units of 10 ms, 12 bits each; the largest is no upper bound to speak of. */
const PLAYOUT_DELAY_MAX_UNITS = 0xfff;
/** The playout floor adds this to the repair times it covers, and stays under PLAYOUT_FLOOR_MAX_MS. */
const PLAYOUT_FLOOR_MARGIN_MS = 30;
const PLAYOUT_FLOOR_MAX_MS = 400;
/** The client's link counts as lossy this long after its last NACK. */
const LOSSY_MEMORY_MS = 10_000;

interface QueuedPacket {
  readonly out: Outbound;
  readonly seq: number;
  readonly timestamp: number;
  readonly marker: boolean;
  readonly payload: Buffer;
  /** A retransmission, charged to the budget when it was queued. */
  readonly charged: boolean;
}

/**
 * The sending half of a session's peer connection (docs/protocol/media.md, "Bandwidth"): it numbers
 * every packet for transport-wide feedback, estimates the client's downlink from that feedback, shares
 * the estimate out (audio first, then a simulcast layer per video that fits, else the video pauses),
 * answers the client's NACKs once per packet per round trip within the same budget, and probes with
 * padding when a larger layer waits for room. werift's own sender is bypassed for RTP: it would
 * retransmit every NACKed packet at once and cannot switch layers.
 */
export class Downlink {
  private readonly events: DownlinkEvents;
  private readonly now: () => number;
  private readonly estimator = new DownlinkEstimator({ initialBps: INITIAL_BPS, minBps: MIN_BPS, maxBps: MAX_BPS });
  private readonly outbound = new Map<number, Outbound>();
  private readonly bySsrc = new Map<number, Outbound>();
  private transport: RTCDtlsTransport | undefined;
  private tokens = 0;
  private lastTickMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextProbeMs = 0;
  private probeInterval = PROBE_MIN_INTERVAL_MS;
  private probeId = 0;
  private pendingProbe: { id: number; readAtMs: number; before: number } | undefined;
  private audioBytes = 0;
  private audioBps = 0;
  private lastAllocateMs = 0;
  private lastReportMs = 0;
  private lastSnapshotMs = 0;
  private lastNackMs = Number.NEGATIVE_INFINITY;
  /** Video and retransmissions wait here and leave at PACE_FACTOR x the estimate; audio goes at once. */
  private readonly pacer: Pacer<QueuedPacket> = new Pacer({
    send: (p) => this.send(p.out, p.seq, p.timestamp, p.marker, p.payload, this.now(), 0, p.charged),
    rateBps: () => Math.max(this.estimator.bps * PACE_FACTOR, MIN_PACE_BPS),
    onOverflow: (dropped) => this.overflow(dropped),
    maxQueueMs: MAX_PACE_QUEUE_MS,
    intervalMs: PACE_INTERVAL_MS,
    now: () => this.now(),
  });
  private ids: ExtensionIds = { mid: undefined, twcc: undefined, playoutDelay: undefined };

  private readonly layersOf: (streamId: number) => StreamLayers | undefined;
  private readonly stats: MediaStats;

  constructor(events: DownlinkEvents, layersOf: (streamId: number) => StreamLayers | undefined, now: () => number, stats: MediaStats) {
    this.events = events;
    this.layersOf = layersOf;
    this.now = now;
    this.stats = stats;
  }

  get estimateBps(): number {
    return this.estimator.bps;
  }

  /** The transport RTP goes out on (max-bundle: one for the connection). */
  attach(transport: RTCDtlsTransport): void {
    if (this.transport === transport) return;
    this.transport = transport;
    this.timer ??= setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** The m-lines the client receives now, by stream id (after each negotiation). */
  setOutbound(
    entries: readonly { readonly streamId: number; readonly kind: MediaKind; readonly transceiver: RTCRtpTransceiver }[],
    ids: ExtensionIds,
  ): void {
    this.ids = ids;
    const next = new Map<number, Outbound>();
    for (const e of entries) {
      let out = this.outbound.get(e.streamId);
      if (!out || out.transceiver !== e.transceiver || out.kind !== e.kind) out = new Outbound(e.streamId, e.kind, e.transceiver);
      next.set(e.streamId, out);
    }
    this.outbound.clear();
    this.bySsrc.clear();
    for (const [id, out] of next) {
      this.outbound.set(id, out);
      this.bySsrc.set(out.transceiver.sender.ssrc, out);
    }
    this.allocate();
  }

  setBounds(streamId: number, bounds: VideoBounds): void {
    const out = this.outbound.get(streamId);
    if (!out) return;
    out.bounds = bounds;
    this.allocate();
  }

  /**
   * The stream's media resumes after a stop at its source (a mute by the customer's server): what comes
   * next starts a new source, numbered on from the last packet sent, a video from a key frame, so the
   * subscriber sees neither a gap of sequence numbers to ask again for nor a delta frame it cannot decode.
   */
  restart(streamId: number): void {
    const out = this.outbound.get(streamId);
    if (!out) return;
    out.rewriter.reset();
    if (out.kind === 'video' && !out.paused) out.current = -1;
  }

  /** Forwards a publisher's packet on the stream's m-line, if the allocation lets it through. */
  forward(streamId: number, packet: ForwardedRtp): boolean {
    const out = this.outbound.get(streamId);
    if (!out || !this.transport || this.transport.state !== 'connected') return false;
    const now = this.now();
    if (out.kind === 'audio') {
      const mapped = out.rewriter.map(packet.ssrc, packet.seq, packet.timestamp, undefined, undefined, true, now);
      if (!mapped) return false;
      this.audioBytes += packet.payload.length + OVERHEAD_BYTES;
      this.send(out, mapped.seq, mapped.timestamp, packet.marker, packet.payload, now);
      return true;
    }
    if (out.paused || out.target < 0) return false;
    let switching = false;
    if (packet.layer !== out.current) {
      if (packet.layer !== out.target) return false;
      if (!packet.vp8?.keyFrame) {
        this.askKeyFrame(out, out.target, now);
        return false;
      }
      switching = true;
    }
    const vp8 = packet.vp8;
    const mapped = out.rewriter.map(packet.ssrc, packet.seq, packet.timestamp, vp8?.pictureId, vp8?.tl0PicIdx, switching, now);
    if (!mapped) return false;
    if (switching) {
      out.current = packet.layer;
      if (out.lastLayer >= 0 && packet.layer !== out.lastLayer) {
        if (packet.layer > out.lastLayer) this.stats.layerSwitchesUp += 1;
        else this.stats.layerSwitchesDown += 1;
      }
      out.lastLayer = packet.layer;
    }
    this.tellLayer(out, packet.layer, switching, vp8);
    let payload = packet.payload;
    if (vp8 && (mapped.pictureId !== vp8.pictureId || mapped.tl0PicIdx !== vp8.tl0PicIdx)) {
      payload = Buffer.from(payload);
      rewriteVp8(payload, mapped.pictureId ?? 0, mapped.tl0PicIdx);
    }
    this.pacer.enqueue({ out, seq: mapped.seq, timestamp: mapped.timestamp, marker: packet.marker, payload, charged: false }, payload.length + OVERHEAD_BYTES);
    out.lastMarker = packet.marker;
    return true;
  }

  /**
   * Tells the client the layer it gets at each switch, and again at each key frame of that layer at
   * another size (docs/protocol/media.md, "Bandwidth"): a publisher's encoder scales a layer as its
   * uplink and CPU allow, and a change of size always starts with a key frame.
   */
  private tellLayer(out: Outbound, layer: number, switching: boolean, vp8: ForwardedRtp['vp8']): void {
    if (!switching && !(vp8?.keyFrame && vp8.width > 0)) return;
    const info = this.layersOf(out.streamId)?.get(layer);
    const size = { width: vp8?.width || info?.width || 0, height: vp8?.height || info?.height || 0 };
    if (!switching && size.width === out.toldSize.width && size.height === out.toldSize.height) return;
    out.toldSize = size;
    this.events.layer(out.streamId, layer, size.width, size.height);
  }

  /** RTCP from the client: transport-wide feedback, NACKs, receiver reports. */
  onRtcp(packet: RtcpPacket): void {
    if (packet.type === RtcpRrPacket.type || packet.type === RtcpSrPacket.type) return this.onReports(packet.reports);
    if (packet.type !== RtcpTransportLayerFeedback.type) return;
    const { feedback } = packet;
    if (feedback instanceof CompactTwcc) {
      const now = this.now();
      this.estimator.onFeedback(feedbackResults(feedback), now);
      if (now - this.lastAllocateMs >= 200) this.allocate();
    } else if (feedback instanceof GenericNack) {
      this.stats.nacksReceived += 1;
      const out = this.bySsrc.get(feedback.mediaSourceSsrc);
      if (out) this.retransmit(out, feedback.lost);
    }
  }

  /** The loss the client last reported on a stream's m-line (fraction, 0 when unknown). */
  lossOf(streamId: number): number {
    return this.outbound.get(streamId)?.reported.fraction ?? 0;
  }

  /** The layer whose key frame a subscriber's PLI for this stream should ask for. */
  /**
   * The worst loss of the streams it receives (fraction), each over enough packets
   * (rtp/loss-window.ts); undefined while none has been measured.
   */
  get worstLoss(): number | undefined {
    let worst: number | undefined;
    for (const out of this.outbound.values()) {
      const loss = out.loss.fraction;
      if (loss !== undefined) worst = Math.max(worst ?? 0, loss);
    }
    return worst;
  }

  /** The streams it receives, by id. */
  streamIds(): number[] {
    return [...this.outbound.keys()];
  }

  forwardedLayer(streamId: number): number | undefined {
    const out = this.outbound.get(streamId);
    if (!out || out.paused || out.target < 0) return undefined;
    return out.current >= 0 ? out.current : out.target;
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.pacer.close();
    this.outbound.clear();
    this.bySsrc.clear();
    this.transport = undefined;
  }

  private send(out: Outbound, seq: number, timestamp: number, marker: boolean, payload: Buffer, now: number, probe = 0, charged = false): void {
    const transport = this.transport;
    if (!transport) return;
    const sender = out.transceiver.sender;
    const codec = sender.codec;
    if (!codec) return;
    const header = new RtpHeader({ ssrc: sender.ssrc, payloadType: codec.payloadType, sequenceNumber: seq, timestamp, marker });
    let twccSeq: number | undefined;
    if (this.ids.mid !== undefined && out.transceiver.mid !== undefined) {
      header.extensions.push({ id: this.ids.mid, payload: Buffer.from(out.transceiver.mid) });
    }
    if (this.ids.playoutDelay !== undefined && out.kind === 'video' && probe === 0) {
      const floor = this.playoutFloorMs(out, now);
      if (floor > 0) header.extensions.push({ id: this.ids.playoutDelay, payload: playoutDelay(Math.ceil(floor / 10), PLAYOUT_DELAY_MAX_UNITS) });
    }
    if (this.ids.twcc !== undefined) {
      twccSeq = (transport.transportSequenceNumber + 1) & 0xffff;
      transport.transportSequenceNumber = twccSeq;
      const b = Buffer.alloc(2);
      b.writeUInt16BE(twccSeq);
      header.extensions.push({ id: this.ids.twcc, payload: b });
    }
    header.extension = header.extensions.length > 0;
    if (probe !== 0) header.padding = true;
    const size = payload.length + OVERHEAD_BYTES;
    if (!charged) this.tokens -= size;
    if (twccSeq !== undefined) this.estimator.onSent(twccSeq, size, now, probe);
    out.packetCount = (out.packetCount + 1) >>> 0;
    out.octetCount = (out.octetCount + payload.length) >>> 0;
    out.lastTimestamp = timestamp;
    out.lastSentMs = now;
    this.stats.webrtcOut.add(out.kindCode, payload.length);
    void transport.sendRtp(payload, header);
    if (probe === 0) {
      const slot = seq % HISTORY;
      const kept = out.history[slot];
      if (kept) {
        kept.seq = seq;
        kept.timestamp = timestamp;
        kept.marker = marker;
        kept.payload = payload;
        kept.lastSentMs = now;
      } else {
        out.history[slot] = { seq, timestamp, marker, payload, lastSentMs: now };
      }
    }
  }

  /** The pacer's queue held more than the downlink can carry soon: its video starts again at key frames. */
  private overflow(dropped: readonly QueuedPacket[]): void {
    const now = this.now();
    for (const out of new Set(dropped.map((p) => p.out))) {
      out.current = -1;
      if (out.target >= 0) this.askKeyFrame(out, out.target, now);
    }
  }

  /**
   * How long the client should hold this video's frames before playing them (ms; 0: no floor).
   * While the publisher's uplink loses packets, one the server asked for again comes that much
   * later; while the client's own link loses packets, its repair takes a round trip more. A client
   * that plays frames sooner drops the late one and the frames after it.
   */
  private playoutFloorMs(out: Outbound, now: number): number {
    const uplink = this.layersOf(out.streamId)?.recoveryMs(now) ?? 0;
    const downlink = now - this.lastNackMs <= LOSSY_MEMORY_MS ? this.rttMs(out) : 0;
    return uplink + downlink === 0 ? 0 : Math.min(uplink + downlink + PLAYOUT_FLOOR_MARGIN_MS, PLAYOUT_FLOOR_MAX_MS);
  }

  /** Answers a NACK: each packet at most once per round trip, and only within the budget. */
  private retransmit(out: Outbound, lost: readonly number[]): void {
    const now = this.now();
    this.lastNackMs = now;
    const rtt = this.rttMs(out);
    const floor = (this.estimator.bps / 8) * (BUDGET_MS / 1000) * RTX_FLOOR;
    for (const seq of lost) {
      const kept = out.history[seq % HISTORY];
      if (!kept || kept.seq !== seq || now - kept.lastSentMs < rtt) continue;
      if (this.tokens < floor) continue;
      this.tokens -= kept.payload.length + OVERHEAD_BYTES;
      kept.lastSentMs = now;
      this.pacer.enqueue({ out, seq: kept.seq, timestamp: kept.timestamp, marker: kept.marker, payload: kept.payload, charged: true }, kept.payload.length + OVERHEAD_BYTES);
    }
  }

  private rttMs(out: Outbound): number {
    return out.rttMs === undefined ? this.rtt ?? DEFAULT_RTT_MS : Math.max(out.rttMs, 10);
  }

  /** The round trip to the client, from the last receiver report that answered a sender report. */
  get rtt(): number | undefined {
    for (const out of this.outbound.values()) if (out.rttMs !== undefined) return out.rttMs;
    return undefined;
  }

  /** Sender reports of every m-line that sent lately: lip sync for the client, round trips for the server. */
  private senderReports(now: number): void {
    const transport = this.transport;
    if (!transport) return;
    const packets: RtcpPacket[] = [];
    for (const out of this.outbound.values()) {
      if (out.packetCount === 0 || now - out.lastSentMs > 5_000) continue;
      const clock = out.kind === 'audio' ? 48 : 90;
      const ntp = ntpNow();
      const middle = Number((ntp >> 16n) & 0xffffffffn);
      out.srSentMs.set(middle, now);
      if (out.srSentMs.size > 8) out.srSentMs.delete(out.srSentMs.keys().next().value!);
      packets.push(new RtcpSrPacket({
        ssrc: out.transceiver.sender.ssrc,
        senderInfo: new RtcpSenderInfo({
          ntpTimestamp: ntp, rtpTimestamp: (out.lastTimestamp + Math.round((now - out.lastSentMs) * clock)) >>> 0,
          packetCount: out.packetCount, octetCount: out.octetCount,
        }),
      }));
    }
    if (packets.length > 0) transport.sendRtcp(packets).catch(() => undefined);
  }

  private onReports(reports: readonly {
    readonly ssrc: number; readonly fractionLost: number; readonly packetsLost: number; readonly highestSequence: number;
    readonly lsr: number; readonly dlsr: number;
  }[]): void {
    const now = this.now();
    for (const report of reports) {
      const out = this.bySsrc.get(report.ssrc);
      if (!out) continue;
      this.stats.packetsLostOut += out.reported.onReport(report.fractionLost, report.packetsLost, out.packetCount);
      out.loss.report(report.highestSequence, cumulativeLost(report.packetsLost));
      const sentMs = out.srSentMs.get(report.lsr);
      if (sentMs === undefined || report.lsr === 0) continue;
      const rtt = now - sentMs - (report.dlsr / 65536) * 1000;
      if (rtt < 0) continue;
      out.rttMs = out.rttMs === undefined ? rtt : out.rttMs * 0.8 + rtt * 0.2;
      this.stats.observeRtt(rtt / 1000);
    }
  }

  private askKeyFrame(out: Outbound, layer: number, now: number): void {
    // before the client's transport is up a key frame could not reach it, and asking would hold back
    // the one the connection asks for (peer.ts) behind the publisher's request interval
    if (!this.transport || this.transport.state !== 'connected') return;
    if (now - (out.keyAskedMs[layer] ?? Number.NEGATIVE_INFINITY) < KEY_FRAME_INTERVAL_MS) return;
    out.keyAskedMs[layer] = now;
    this.events.keyFrame(out.streamId, layer);
  }

  /** Shares the estimate out: audio first, then video layers (docs/protocol/media.md, "Bandwidth"). */
  private allocate(): void {
    const now = this.now();
    this.lastAllocateMs = now;
    const demands: VideoDemand[] = [];
    const videos: Outbound[] = [];
    for (const out of this.outbound.values()) {
      if (out.kind !== 'video') continue;
      videos.push(out);
      const layers = this.layersOf(out.streamId);
      demands.push({ layers: layers?.rates(now) ?? [], sizes: layers?.sizes() ?? [], bounds: out.bounds, current: out.paused ? -1 : out.target });
    }
    if (videos.length === 0) return;
    const available = Math.max(this.estimator.bps - this.audioBps * 1.1, 0);
    const targets = allocate(demands, available);
    for (const [i, out] of videos.entries()) {
      const requested = demands[i]!;
      const hidden = (requested.bounds.maxWidth === 0 || requested.bounds.maxHeight === 0);
      let target = targets[i]!;
      const lowest = requested.layers.findIndex((r) => r > 0);
      if (target >= 0 || hidden || out.paused || lowest < 0) {
        out.unfitSinceMs = undefined;
      } else {
        out.unfitSinceMs ??= now;
        if (now - out.unfitSinceMs < PAUSE_AFTER_MS && this.estimator.loss <= LOSS_PAUSE) target = lowest;
      }
      const wanted = target >= 0;
      if (!wanted) {
        if (!out.paused) {
          out.paused = true;
          out.current = -1;
          out.rewriter.reset();
          // a tile the client hid is not a pause it needs telling about
          if (!hidden && requested.layers.some((r) => r > 0)) {
            this.stats.bandwidthPauses += 1;
            this.events.paused(out.streamId);
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
        if (out.current !== target) this.askKeyFrame(out, target, now);
      }
    }
  }

  private tick(): void {
    const now = this.now();
    const elapsed = this.lastTickMs === undefined ? TICK_MS : Math.min(now - this.lastTickMs, 500);
    this.lastTickMs = now;
    const rate = this.estimator.bps / 8;
    this.tokens = Math.min(this.tokens + (rate * elapsed) / 1000, (rate * BUDGET_MS) / 1000);
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
      this.events.report(this.snapshot(now));
    }
    this.probe(now);
  }

  private snapshot(now: number): DownlinkSnapshot {
    const kbps = (bps: number): number => Math.round(bps / 1000);
    return {
      estimateKbps: kbps(this.estimator.bps),
      ackedKbps: kbps(this.estimator.ackedBps),
      lossPercent: Math.round(this.estimator.loss * 1000) / 10,
      delay: this.estimator.delaySignal,
      rttMs: this.rtt === undefined ? undefined : Math.round(this.rtt),
      audioKbps: kbps(this.audioBps),
      videos: [...this.outbound.values()].filter((o) => o.kind === 'video').map((o) => ({
        streamId: o.streamId, target: o.target, current: o.current, layerKbps: (this.layersOf(o.streamId)?.rates(now) ?? []).map(kbps),
        layerFps: this.layersOf(o.streamId)?.frameRates() ?? [],
      })),
    };
  }

  /** Padding trains that show whether a larger layer, or a paused video, would fit now. */
  private probe(now: number): void {
    const pending = this.pendingProbe;
    if (pending && now >= pending.readAtMs) {
      this.pendingProbe = undefined;
      const result = this.estimator.probeResult(pending.id);
      if (result !== undefined) this.estimator.applyProbe(result);
      const grew = this.estimator.bps > pending.before * 1.05;
      this.probeInterval = grew ? PROBE_MIN_INTERVAL_MS : Math.min(this.probeInterval * 2, PROBE_MAX_INTERVAL_MS);
      this.nextProbeMs = now + this.probeInterval;
      this.allocate();
      return;
    }
    if (pending || now < this.nextProbeMs || this.estimator.delaySignal === 'overuse' || this.estimator.loss > 0.1
      || !this.pacer.idle) return;
    // what the next step up needs: a paused video's smallest layer, or the next layer of one below its wish
    let need = 0;
    let carrier: Outbound | undefined;
    for (const out of this.outbound.values()) {
      const layers = this.layersOf(out.streamId);
      if (out.kind !== 'video' || !layers) continue;
      const rates = layers.rates(now);
      const top = ceiling({ layers: rates, sizes: layers.sizes(), bounds: out.bounds, current: out.target });
      const next = out.paused ? 0 : out.target + 1;
      if (next > top || next >= rates.length || (rates[next] ?? 0) <= 0) continue;
      const step = (rates[next] ?? 0) - (out.paused ? 0 : (rates[out.target] ?? 0));
      if (step > need) need = step;
      if (out.rewriter.hasSent && out.lastMarker) carrier = out;
    }
    if (need <= 0 || !carrier) return;
    // a step the estimate cannot double into is reached by growing, not by one probe
    const target = Math.min((this.estimator.bps + need) * 1.25, this.estimator.bps * PROBE_MAX_FACTOR);
    const bytes = (target / 8) * (PROBE_TRAIN_MS / 1000);
    const count = Math.min(Math.ceil(bytes / (PADDING_BYTES + OVERHEAD_BYTES)), 80);
    this.probeId += 1;
    const padding = Buffer.alloc(PADDING_BYTES);
    padding[PADDING_BYTES - 1] = PADDING_BYTES;
    const ts = carrier.rewriter.timestamp;
    for (const seq of carrier.rewriter.takePadding(count)) this.send(carrier, seq, ts, false, padding, now, this.probeId);
    this.pendingProbe = { id: this.probeId, readAtMs: now + PROBE_SETTLE_MS, before: this.estimator.bps };
  }
}

/** The playout delay extension's 3 bytes: minimum and maximum, 12 bits each, in 10 ms units. */
function playoutDelay(minUnits: number, maxUnits: number): Buffer {
  const min = Math.min(minUnits, 0xfff);
  return Buffer.from([min >> 4, ((min & 0xf) << 4) | (maxUnits >> 8), maxUnits & 0xff]);
}

/** NTP time now, 64-bit fixed point, as sender reports carry it. */
function ntpNow(): bigint {
  const ms = Date.now() + 2_208_988_800_000;
  const seconds = BigInt(Math.floor(ms / 1000));
  const fraction = BigInt(Math.floor(((ms % 1000) / 1000) * 2 ** 32));
  return (seconds << 32n) | fraction;
}

