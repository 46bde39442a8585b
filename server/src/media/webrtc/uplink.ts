import { randomBytes } from 'node:crypto';
import type { MediaKind } from '@rtc/protocol';
import {
  PictureLossIndication, RtcpPayloadSpecificFeedback, RtcpRrPacket, RtcpSrPacket, type RTCDtlsTransport, type RtcpPacket, type RtpPacket,
} from 'werift';
import type { ForwardedRtp } from '../rtp/layers.ts';
import { buildGenericNacks } from '../rtp/generic-nack.ts';
import { NackRequester } from '../rtp/nack-requester.ts';
import { LossWindow } from '../rtp/loss-window.ts';
import { cumulativeLost, ReceiveStats } from '../rtp/receive-stats.ts';
import { seqAfter } from '../rtp/rewriter.ts';
import { everyShared } from '../../core/shared-interval.ts';
import { TwccRecorder } from '../rtp/twcc-feedback.ts';
import { parseVp8 } from '../rtp/vp8.ts';
import { RtpRoute } from './rtp-route.ts';
import type { MediaStats } from '../../metrics/media-stats.ts';

/**
 * How often the transport-wide feedback (and the receiver reports, once a second) leave for the
 * publisher: every 50 ms, as a browser receiving this stream in a direct call sends its own
 * (libwebrtc's shortest interval), not more often. NACKs keep their own timer (scheduleNacks).
 */
const TICK_MS = 50;
/** A gap waits this long for a reordered packet before its NACK leaves. */
const NACK_REORDER_MS = 5;
const REPORT_INTERVAL_MS = 1_000;
const DEFAULT_RTT_MS = 100;

/** Header extension ids of the negotiated answer (one set for the bundle). */
export interface ExtensionIds {
  readonly mid: number | undefined;
  readonly rid: number | undefined;
  readonly twcc: number | undefined;
}

/** A published m-line: its stream, kind and simulcast rids (smallest first; empty for one layer). */
export interface SendingLine {
  readonly streamId: number;
  readonly kind: MediaKind;
  readonly rids: readonly string[];
  /** SSRCs the offer named for this m-line (`a=ssrc`). */
  readonly ssrcs: readonly number[];
}

interface Source {
  readonly streamId: number;
  readonly kind: MediaKind;
  /** The kind's index in the traffic counts (stats.ts). */
  readonly kindCode: number;
  readonly layer: number;
  readonly stats: ReceiveStats;
  readonly nack: NackRequester | undefined;
  /** The highest sequence number seen, to tell a gap as it opens. */
  highest: number | undefined;
  /** The cumulative loss of the last receiver report sent for it, so the counts grow by the difference. */
  lostReported: number;
  /** The loss over enough packets, for the quality figures. */
  readonly loss: LossWindow;
}

/** A stream the client publishes, as its uplink feeds it (room/stream.ts). */
export interface IngressStream {
  /** Fans a packet out to the stream's subscribers. */
  forwardRtp(packet: ForwardedRtp, nowMs: number): unknown;
  /** The loss its subscribers report, as the node relays it to the publisher (fraction, rtp/downstream-loss.ts). */
  downstreamLoss(): number;
}

/**
 * The receiving half of a session's peer connection: the streams the client publishes. It reads every
 * RTP packet off the DTLS transport and sorts it by mid, rid and SSRC itself; returns transport-wide
 * feedback so the client's encoder follows its uplink; asks again for lost video packets while they
 * can still be used; and sends receiver reports whose loss is the uplink's (a packet that came only as
 * a retransmission counts as lost), so the publisher sees the loss its NACKs hide; for audio, the
 * loss its subscribers report if higher, as relayedLoss aggregates it (one subscriber cannot set
 * it), so that Opus protects the audio for the whole path.
 */
export class Uplink {
  /** The streams the client publishes now, by id (a stream published again under an id is a new one). */
  private readonly streams: ReadonlyMap<number, IngressStream>;
  /** The round trip to the client as the downlink measured it, if it did. */
  private readonly rttMs: () => number | undefined;
  private readonly now: () => number;
  private readonly rtcpSsrc = randomBytes(4).readUInt32BE(0);
  private readonly twcc: TwccRecorder;
  private readonly route = new RtpRoute();
  private transport: RTCDtlsTransport | undefined;
  private ids: ExtensionIds = { mid: undefined, rid: undefined, twcc: undefined };
  private lines = new Map<string, SendingLine>();
  private readonly sources = new Map<number, Source>();
  private stopTicks: (() => void) | undefined;
  private nackTimer: NodeJS.Timeout | undefined;
  /** When the armed NACK timer fires (the clock's ms). */
  private nackDueMs = Number.POSITIVE_INFINITY;
  private lastReportMs = 0;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly stats: MediaStats;

  constructor(streams: ReadonlyMap<number, IngressStream>, rttMs: () => number | undefined, now: () => number, stats: MediaStats) {
    this.streams = streams;
    this.rttMs = rttMs;
    this.now = now;
    this.stats = stats;
    this.twcc = new TwccRecorder(this.rtcpSsrc);
  }

  attach(transport: RTCDtlsTransport): void {
    if (this.transport === transport) return;
    this.detach();
    this.transport = transport;
    this.unsubscribe.push(transport.onRtp.subscribe((rtp) => this.onRtp(rtp)).unSubscribe);
    this.unsubscribe.push(transport.onRtcp.subscribe((rtcp) => this.onRtcp(rtcp)).unSubscribe);
    this.stopTicks = everyShared(TICK_MS, () => this.tick());
  }

  /** After each negotiation: the extension ids and the m-lines the client publishes on, by mid. */
  configure(ids: ExtensionIds, lines: ReadonlyMap<string, SendingLine>): void {
    this.ids = ids;
    this.lines = new Map(lines);
    // a source whose m-line went, or now carries another stream, is learned again
    for (const [ssrc, source] of this.sources) {
      const still = [...lines.values()].some((l) => l.streamId === source.streamId && l.kind === source.kind);
      if (!still) this.sources.delete(ssrc);
    }
    for (const line of lines.values()) {
      if (line.rids.length === 0) for (const ssrc of line.ssrcs) this.learn(ssrc, line, 0);
    }
  }

  /**
   * The worst loss of the streams it receives (fraction), each over enough packets
   * (rtp/loss-window.ts); undefined while none has been measured.
   */
  get loss(): number | undefined {
    let worst: number | undefined;
    for (const source of this.sources.values()) {
      const loss = source.loss.fraction;
      if (loss !== undefined) worst = Math.max(worst ?? 0, loss);
    }
    return worst;
  }

  /** Asks the client for a key frame of one layer of a stream it publishes. */
  requestKeyFrame(streamId: number, layer: number): void {
    for (const [ssrc, source] of this.sources) {
      if (source.streamId === streamId && (source.layer === layer || layer < 0)) this.pli(ssrc);
    }
  }

  close(): void {
    this.detach();
    this.sources.clear();
  }

  private detach(): void {
    this.stopTicks?.();
    this.stopTicks = undefined;
    clearTimeout(this.nackTimer);
    this.nackTimer = undefined;
    this.nackDueMs = Number.POSITIVE_INFINITY;
    for (const off of this.unsubscribe.splice(0)) off();
    this.transport = undefined;
  }

  private learn(ssrc: number, line: SendingLine, layer: number): Source {
    const source: Source = {
      streamId: line.streamId, kind: line.kind, kindCode: line.kind === 'audio' ? 1 : 2, layer,
      stats: new ReceiveStats(line.kind === 'audio' ? 48_000 : 90_000),
      nack: line.kind === 'video' ? new NackRequester({ maxAgeMs: 1_000, maxRetries: 10, reorderDelayMs: NACK_REORDER_MS }) : undefined,
      highest: undefined,
      lostReported: 0,
      loss: new LossWindow(),
    };
    this.sources.set(ssrc, source);
    return source;
  }

  private extension(rtp: RtpPacket, id: number | undefined): Buffer | undefined {
    if (id === undefined || !rtp.header.extension) return undefined;
    for (const ext of rtp.header.extensions) if (ext.id === id) return ext.payload;
    return undefined;
  }

  private onRtp(rtp: RtpPacket): void {
    const now = this.now();
    const { header } = rtp;
    const twcc = this.extension(rtp, this.ids.twcc);
    if (twcc && twcc.length >= 2) this.twcc.record(twcc.readUInt16BE(0), Math.round(performance.now() * 1000));
    let source = this.sources.get(header.ssrc);
    if (!source) {
      const mid = this.extension(rtp, this.ids.mid)?.toString('ascii');
      const line = mid === undefined ? undefined : this.lines.get(mid);
      if (!line) return;
      const rid = this.extension(rtp, this.ids.rid)?.toString('ascii');
      const layer = line.rids.length === 0 ? 0 : rid === undefined ? -1 : line.rids.indexOf(rid);
      if (layer < 0) return;
      source = this.learn(header.ssrc, line, layer);
    }
    this.stats.webrtcIn.add(source.kindCode, rtp.payload.length);
    const retransmitted = source.nack?.onPacket(header.sequenceNumber, now) ?? false;
    const seq = header.sequenceNumber;
    if (source.highest === undefined || seqAfter(seq, source.highest)) {
      // a gap just opened: the NACK leaves once the reorder delay is over, not at the next tick
      if (source.nack && source.highest !== undefined && seq !== ((source.highest + 1) & 0xffff)) this.scheduleNacks(now);
      source.highest = seq;
    }
    if (!source.stats.onPacket(header.sequenceNumber, header.timestamp, now, retransmitted)) return;
    // a padding-only packet (the client probing its uplink) carries nothing to forward
    if (rtp.payload.length === 0) return;
    const vp8 = source.kind === 'video' ? parseVp8(rtp.payload) : undefined;
    if (source.kind === 'video' && !vp8) return;
    this.streams.get(source.streamId)?.forwardRtp({
      layer: source.layer, ssrc: header.ssrc, seq: header.sequenceNumber, timestamp: header.timestamp,
      marker: header.marker, payload: rtp.payload, vp8, recoveredAfterMs: retransmitted ? source.nack?.recoveredAfterMs : undefined,
    }, now);
  }

  private onRtcp(rtcp: RtcpPacket): void {
    if (rtcp.type === RtcpSrPacket.type) {
      const source = this.sources.get(rtcp.ssrc);
      if (source) source.stats.onSenderReport(Number((rtcp.senderInfo.ntpTimestamp >> 16n) & 0xffffffffn), this.now());
    }
  }

  /**
   * Arms the NACK timer for the earliest ask or give-up due on any stream (rtp/nack-requester.ts):
   * a first ask leaves the reorder delay after its gap opened and each retry one round trip after the
   * ask before, whatever the feedback's period; no timer while nothing is missing.
   */
  private scheduleNacks(now: number): void {
    const rtt = this.rttMs() ?? DEFAULT_RTT_MS;
    let next = Number.POSITIVE_INFINITY;
    for (const source of this.sources.values()) {
      const due = source.nack?.nextDueMs(rtt);
      if (due !== undefined && due < next) next = due;
    }
    if (next === Number.POSITIVE_INFINITY || (this.nackTimer !== undefined && this.nackDueMs <= next)) return;
    clearTimeout(this.nackTimer);
    this.nackDueMs = next;
    // a millisecond over: the timer's clock may run behind this one's by up to one
    this.nackTimer = setTimeout(() => this.onNackTimer(), Math.max(1, Math.ceil(next - now) + 1));
  }

  private onNackTimer(): void {
    this.nackTimer = undefined;
    this.nackDueMs = Number.POSITIVE_INFINITY;
    const transport = this.transport;
    if (!transport || transport.state !== 'connected') return;
    const now = this.now();
    const packets = this.nacks(now);
    if (packets.length > 0) this.route.sendRtcp(transport, packets);
    this.scheduleNacks(now);
  }

  /** NACKs due now for every lost video packet, and a PLI for each layer that gave some up. */
  private nacks(now: number): RtcpPacket[] {
    const packets: RtcpPacket[] = [];
    const rtt = this.rttMs() ?? DEFAULT_RTT_MS;
    for (const [ssrc, source] of this.sources) {
      const nack = source.nack;
      if (!nack) continue;
      const due = nack.due(now, rtt);
      if (due.length > 0) {
        const built = buildGenericNacks(this.rtcpSsrc, ssrc, due);
        this.stats.nacksSent += built.length;
        packets.push(...built);
      }
      if (nack.takeGivenUp() > 0) {
        this.stats.keyFrameRequestsSent += 1;
        packets.push(this.pliPacket(ssrc));
      }
    }
    return packets;
  }

  private tick(): void {
    const transport = this.transport;
    if (!transport || transport.state !== 'connected') return;
    const now = this.now();
    const packets: RtcpPacket[] = [];
    const mediaSsrc = this.sources.keys().next().value ?? 0;
    packets.push(...this.twcc.build(mediaSsrc));
    packets.push(...this.nacks(now));
    if (now - this.lastReportMs >= REPORT_INTERVAL_MS && this.sources.size > 0) {
      this.lastReportMs = now;
      const reports = [...this.sources].map(([ssrc, source]) => {
        const report = source.stats.report(ssrc, now);
        const lost = cumulativeLost(report.packetsLost);
        if (lost > source.lostReported) this.stats.packetsLostIn += lost - source.lostReported;
        source.lostReported = lost;
        source.loss.report(report.highestSequence, lost);
        // Opus sizes its in-band FEC by the loss it is told: for audio that is the loss of the whole
        // path to the subscribers, not of the uplink alone (video adapts per subscriber instead)
        if (source.kind === 'audio') {
          report.fractionLost = Math.max(report.fractionLost, Math.min(Math.floor((this.streams.get(source.streamId)?.downstreamLoss() ?? 0) * 256), 255));
        }
        return report;
      });
      for (let i = 0; i < reports.length; i += 31) packets.push(new RtcpRrPacket({ ssrc: this.rtcpSsrc, reports: reports.slice(i, i + 31) }));
    }
    if (packets.length > 0) this.route.sendRtcp(transport, packets);
    this.scheduleNacks(now);
  }

  private pliPacket(ssrc: number): RtcpPacket {
    return new RtcpPayloadSpecificFeedback({ feedback: new PictureLossIndication({ senderSsrc: this.rtcpSsrc, mediaSsrc: ssrc }) });
  }

  private pli(ssrc: number): void {
    if (!this.transport) return;
    this.stats.keyFrameRequestsSent += 1;
    this.route.sendRtcp(this.transport, [this.pliPacket(ssrc)]);
  }
}
