import type { MediaKind } from '@rtc/protocol';
import { RtcpSenderInfo, RtcpSrPacket, type RTCRtpTransceiver } from 'werift';
import type { MediaStats } from '../../metrics/media-stats.ts';
import type { DownTrack as StreamDownTrack, RtpAccount } from '../room/member.ts';
import type { HeaderBytes } from '../rtp/header-bytes.ts';
import type { Stream } from '../room/stream.ts';
import { OVERHEAD_BYTES, type ForwardedRtp, type StreamLayers } from '../rtp/layers.ts';
import type { PayloadRing } from '../rtp/payload-ring.ts';
import { LossWindow } from '../rtp/loss-window.ts';
import { PauseHold } from '../rtp/pause-hold.ts';
import { cumulativeLost } from '../rtp/receive-stats.ts';
import { ReportedLoss } from '../rtp/reported-loss.ts';
import { StreamRewriter, seqAfter } from '../rtp/rewriter.ts';
import { rewriteVp8 } from '../rtp/vp8.ts';

/** Sent packets kept per m-line for retransmission (about 1.5 s of 720p video). */
export const HISTORY = 1024;
/** Key frame requests for one layer, at most this often. */
const KEY_FRAME_INTERVAL_MS = 300;

/** The client's bounds on a received video (`rtc_video`); null is no bound. */
export interface VideoBounds {
  readonly maxWidth: number | null;
  readonly maxHeight: number | null;
  readonly maxLayer: number | null;
}

/** One report block of a receiver report (RFC 3550 6.4.1), as werift parses it. */
export interface ReceiverReport {
  readonly ssrc: number;
  readonly fractionLost: number;
  readonly packetsLost: number;
  readonly highestSequence: number;
  readonly lsr: number;
  readonly dlsr: number;
}

/** What a down track needs of the subscriber's downlink (downlink.ts): its clock, transport, pacer and budget. */
export interface DownTrackLink {
  readonly stats: MediaStats;
  now(): number;
  /** Whether media can reach the client now (its connection and transport are up). */
  readonly sendable: boolean;
  /** Whether the client's transport is up (a key frame asked for now could reach it). */
  readonly transportUp: boolean;
  /** Audio: out at once, counted in audio's share of the estimate. */
  sendAudio(track: DownTrack, seq: number, timestamp: number, marker: boolean, payload: Buffer, nowMs: number): void;
  /** Video and retransmissions: through the pacer; `charged` for a retransmission, already taken from its allowance. */
  pace(track: DownTrack, seq: number, timestamp: number, marker: boolean, payload: Buffer, charged: boolean): void;
  /**
   * Video of `bytes` is about to be numbered: when it would wait in the pacer too long, what waits is
   * dropped whole first (its videos start again at key frames), before this packet takes a number.
   */
  makeRoom(bytes: number): void;
  /** Takes a retransmission's bytes from its allowance (rtp/retransmit-budget.ts); false while it holds too little. */
  takeRetransmitBudget(bytes: number): boolean;
  /** The round trip to use for this track's retransmissions (ms). */
  rttMs(track: DownTrack): number;
  /** The client gets this layer of the stream now, at this size (`stream_layer`). */
  layerTold(streamId: number, layer: number, width: number, height: number): void;
}

/**
 * One stream a subscriber receives over WebRTC (docs/protocol/media.md, "Bandwidth"), fed by the
 * published stream it is attached to: its m-line, its numbering (sequence numbers, timestamps, VP8
 * picture ids rewritten across layer switches), the layer the allocation lets through, what was sent
 * on it and its retransmission. The downlink it belongs to shares the estimate out and paces.
 */
export class DownTrack implements StreamDownTrack {
  readonly streamId: number;
  readonly kind: MediaKind;
  /** The kind's index in the traffic counts (stats.ts). */
  readonly kindCode: number;
  readonly transceiver: RTCRtpTransceiver;
  readonly rewriter: StreamRewriter;
  /** The published stream that feeds it, while it is attached (set by the stream). */
  stream: Stream | undefined;
  /** Layer the allocation wants forwarded; -1 paused. */
  target = 0;
  /** Layer now forwarded (its key frame went out); -1 none. */
  current = -1;
  /** The layer forwarded last, kept across pauses: a switch is counted up or down from it. */
  lastLayer = -1;
  /** The picture size last told with the layer (`stream_layer`). */
  toldSize = { width: 0, height: 0 };
  paused = false;
  readonly hold = new PauseHold();
  bounds: VideoBounds = { maxWidth: null, maxHeight: null, maxLayer: null };
  lastMarker = true;
  /** The header bytes of its packets, built at the first send after each negotiation. */
  header: HeaderBytes | undefined;
  /** The highest sequence number that went out on the m-line (media or padding); undefined before the first. */
  sentSeq: number | undefined;
  private readonly keyAskedMs: number[] = [];
  /** Key frames asked for since the last snapshot (debug log). */
  private keyFrameAsks = 0;
  // for sender reports (RFC 3550 6.4.1) and the round trip their receiver reports give back
  packetCount = 0;
  octetCount = 0;
  lastTimestamp = 0;
  lastSentMs = 0;
  srSentMs = new Map<number, number>();
  rttMs: number | undefined;
  /** The loss the client's receiver reports on this stream say, as far as what was sent bears them out. */
  readonly reported = new ReportedLoss();
  /** The loss over enough packets, for the quality figures. */
  readonly loss = new LossWindow();
  private readonly link: DownTrackLink;
  private readonly account: RtpAccount;
  /**
   * What it forwarded, for retransmission, by sequence number modulo HISTORY: the number, where its
   * stream keeps the payload (`Stream.recent`), the VP8 picture id and TL0PICIDX it was rewritten to
   * (-1: as published), and when it last went out (NaN: not yet). Typed arrays: no object per packet.
   */
  private readonly keptSeq = new Int32Array(HISTORY).fill(-1);
  private readonly keptAt = new Float64Array(HISTORY);
  private readonly keptTimestamp = new Uint32Array(HISTORY);
  private readonly keptMarker = new Uint8Array(HISTORY);
  private readonly keptPictureId = new Int32Array(HISTORY);
  private readonly keptTl0 = new Int32Array(HISTORY);
  private readonly keptSentMs = new Float64Array(HISTORY);
  /** Which of its streams' rings `keptAt` indexes: `keptGeneration` for `keptIn`, one less for `keptBefore`. */
  private readonly keptGen = new Uint32Array(HISTORY);
  private keptGeneration = 0;
  private keptIn: PayloadRing | undefined;
  /** The ring of the stream it was attached to before, for what it sent from that stream. */
  private keptBefore: PayloadRing | undefined;

  constructor(streamId: number, kind: MediaKind, transceiver: RTCRtpTransceiver, link: DownTrackLink, account: RtpAccount) {
    this.streamId = streamId;
    this.kind = kind;
    this.kindCode = kind === 'audio' ? 1 : 2;
    this.transceiver = transceiver;
    this.link = link;
    this.account = account;
    this.rewriter = new StreamRewriter(kind === 'audio' ? 48_000 : 90_000);
  }

  /** The simulcast layers of its stream, as the publisher sends them. */
  get layers(): StreamLayers | undefined {
    return this.stream?.layers;
  }

  get reportedLoss(): number {
    return this.reported.fraction ?? 0;
  }

  /** The layer sent now, or about to be; undefined while paused. */
  get forwardedLayer(): number | undefined {
    if (this.paused || this.target < 0) return undefined;
    return this.current >= 0 ? this.current : this.target;
  }

  /** Forwards a publisher's packet, if the allocation lets it through (Stream.forwardRtp calls it for each packet). */
  forward(packet: ForwardedRtp): boolean {
    const link = this.link;
    if (!link.sendable) return false;
    const now = link.now();
    if (this.kind === 'audio') {
      const mapped = this.rewriter.map(packet.ssrc, packet.seq, packet.timestamp, undefined, undefined, true, now);
      if (!mapped) return false;
      this.keep(mapped.seq, mapped.timestamp, packet.marker, packet.payload, -1, -1);
      link.sendAudio(this, mapped.seq, mapped.timestamp, packet.marker, packet.payload, now);
      return this.sent(packet, now);
    }
    if (this.paused || this.target < 0) return false;
    link.makeRoom(packet.payload.length + OVERHEAD_BYTES);
    let switching = false;
    if (packet.layer !== this.current) {
      if (packet.layer !== this.target) return false;
      if (!packet.vp8?.keyFrame) {
        this.askKeyFrame(this.target, now);
        return false;
      }
      switching = true;
    }
    const vp8 = packet.vp8;
    const mapped = this.rewriter.map(packet.ssrc, packet.seq, packet.timestamp, vp8?.pictureId, vp8?.tl0PicIdx, switching, now);
    if (!mapped) return false;
    if (switching) {
      this.current = packet.layer;
      if (this.lastLayer >= 0 && packet.layer !== this.lastLayer) {
        if (packet.layer > this.lastLayer) link.stats.layerSwitchesUp += 1;
        else link.stats.layerSwitchesDown += 1;
      }
      this.lastLayer = packet.layer;
    }
    this.tellLayer(packet.layer, switching, vp8);
    let payload = packet.payload;
    let pictureId = -1;
    if (vp8 && (mapped.pictureId !== vp8.pictureId || mapped.tl0PicIdx !== vp8.tl0PicIdx)) {
      pictureId = mapped.pictureId ?? 0;
      payload = Buffer.from(payload);
      rewriteVp8(payload, pictureId, mapped.tl0PicIdx);
    }
    this.keep(mapped.seq, mapped.timestamp, packet.marker, packet.payload, pictureId, mapped.tl0PicIdx ?? -1);
    link.pace(this, mapped.seq, mapped.timestamp, packet.marker, payload, false);
    this.lastMarker = packet.marker;
    return this.sent(packet, now);
  }

  /**
   * The stream's media resumes after a stop at its source (a mute by the customer's server): what comes
   * next starts a new source, numbered on from the last packet sent, a video from a key frame, so the
   * subscriber sees neither a gap of sequence numbers to ask again for nor a delta frame it cannot decode.
   */
  restart(): void {
    this.rewriter.reset();
    if (this.kind === 'video' && !this.paused) this.current = -1;
  }

  /**
   * The pacer dropped what waited of it, `numbered` its media packets' sequence numbers in order: the
   * video pauses whole and starts again at a key frame, numbered on from the last packet that left, so
   * the dropped packets leave no gap of sequence numbers (a NACK could not fill it, and the decoder
   * would wait for it). True when a probe numbered after them went out first: their numbers are
   * spent, and the caller sends them as empty padding.
   */
  dropped(numbered: readonly number[], nowMs: number): boolean {
    const first = numbered[0];
    const spent = first !== undefined && this.sentSeq !== undefined && !seqAfter(first, this.sentSeq);
    // with nothing of its own dropped, what the publisher sends until the key frame is skipped: a new source too
    if (first !== undefined && !spent) this.rewriter.rewind(first);
    else this.rewriter.reset();
    this.current = -1;
    if (this.target >= 0) this.askKeyFrame(this.target, nowMs);
    return spent;
  }

  /** A packet went out on its m-line; `numbered` unless it was a retransmission (its number went out before). */
  onSent(seq: number, timestamp: number, payloadBytes: number, nowMs: number, numbered: boolean): void {
    if (numbered && (this.sentSeq === undefined || seqAfter(seq, this.sentSeq))) this.sentSeq = seq;
    this.packetCount = (this.packetCount + 1) >>> 0;
    this.octetCount = (this.octetCount + payloadBytes) >>> 0;
    this.lastTimestamp = timestamp;
    this.lastSentMs = nowMs;
  }

  /** Keeps what it forwards as `seq` (its payload as published: `pictureId` >= 0 says how it was rewritten), for retransmission once it went out. */
  private keep(seq: number, timestamp: number, marker: boolean, published: Buffer, pictureId: number, tl0PicIdx: number): void {
    const ring = this.stream?.recent;
    if (!ring) return;
    if (ring !== this.keptIn) {
      this.keptBefore = this.keptIn;
      this.keptIn = ring;
      this.keptGeneration += 1;
    }
    const slot = seq % HISTORY;
    this.keptSeq[slot] = seq;
    this.keptGen[slot] = this.keptGeneration;
    this.keptAt[slot] = ring.put(published);
    this.keptTimestamp[slot] = timestamp;
    this.keptMarker[slot] = marker ? 1 : 0;
    this.keptPictureId[slot] = pictureId;
    this.keptTl0[slot] = tl0PicIdx;
    this.keptSentMs[slot] = Number.NaN;
  }

  /** A packet it keeps went out (again) on its m-line. */
  markSent(seq: number, nowMs: number): void {
    const slot = seq % HISTORY;
    if (this.keptSeq[slot] === seq) this.keptSentMs[slot] = nowMs;
  }

  /** Answers a NACK: each packet that went out, at most once per round trip, and only within the budget. */
  retransmit(lost: readonly number[], nowMs: number): void {
    const rtt = this.link.rttMs(this);
    for (const seq of lost) {
      const slot = seq % HISTORY;
      // NaN (never went out) fails the comparison too
      if (this.keptSeq[slot] !== seq || !(nowMs - this.keptSentMs[slot]! >= rtt)) continue;
      const generation = this.keptGen[slot]!;
      const ring = generation === this.keptGeneration ? this.keptIn : generation + 1 === this.keptGeneration ? this.keptBefore : undefined;
      const kept = ring?.get(this.keptAt[slot]!);
      if (!kept || !this.link.takeRetransmitBudget(kept.length + OVERHEAD_BYTES)) continue;
      // a copy: the ring may overwrite its bytes while the pacer holds it
      const payload = Buffer.from(kept);
      const pictureId = this.keptPictureId[slot]!;
      const tl0 = this.keptTl0[slot]!;
      if (pictureId >= 0) rewriteVp8(payload, pictureId, tl0 >= 0 ? tl0 : undefined);
      this.keptSentMs[slot] = nowMs;
      this.link.pace(this, seq, this.keptTimestamp[slot]!, this.keptMarker[slot] === 1, payload, true);
    }
  }

  /** The client asked for a key frame (PLI, FIR), or media can reach it now: the publisher sends one of the layer it gets. */
  requestKeyFrame(nowMs: number): void {
    const layer = this.forwardedLayer;
    if (layer !== undefined) this.stream?.askKeyFrame(layer, nowMs);
  }

  /** The forwarder needs a key frame of this layer to start or switch: asked of the stream at most every KEY_FRAME_INTERVAL_MS. */
  askKeyFrame(layer: number, nowMs: number): void {
    // before the client's transport is up a key frame could not reach it, and asking would hold back
    // the one the connection asks for (peer.ts) behind the publisher's request interval
    if (!this.link.transportUp) return;
    if (nowMs - (this.keyAskedMs[layer] ?? Number.NEGATIVE_INFINITY) < KEY_FRAME_INTERVAL_MS) return;
    this.keyAskedMs[layer] = nowMs;
    this.keyFrameAsks += 1;
    this.stream?.askKeyFrame(layer, nowMs);
  }

  /** The key frames asked for since the last call (the downlink's snapshot). */
  takeKeyFrameAsks(): number {
    const asks = this.keyFrameAsks;
    this.keyFrameAsks = 0;
    return asks;
  }

  /** Its sender report, if it sent lately (RFC 3550 6.4.1): lip sync for the client, the round trip for the server. */
  senderReport(nowMs: number): RtcpSrPacket | undefined {
    if (this.packetCount === 0 || nowMs - this.lastSentMs > 5_000) return undefined;
    const clock = this.kind === 'audio' ? 48 : 90;
    const ntp = ntpNow();
    const middle = Number((ntp >> 16n) & 0xffffffffn);
    this.srSentMs.set(middle, nowMs);
    if (this.srSentMs.size > 8) this.srSentMs.delete(this.srSentMs.keys().next().value!);
    return new RtcpSrPacket({
      ssrc: this.transceiver.sender.ssrc,
      senderInfo: new RtcpSenderInfo({
        ntpTimestamp: ntp, rtpTimestamp: (this.lastTimestamp + Math.round((nowMs - this.lastSentMs) * clock)) >>> 0,
        packetCount: this.packetCount, octetCount: this.octetCount,
      }),
    });
  }

  /** The client's receiver report on it: its loss, and the round trip when it answers one of its sender reports. */
  onReceiverReport(report: ReceiverReport, nowMs: number): void {
    const stats = this.link.stats;
    stats.packetsLostOut += this.reported.onReport(report.fractionLost, report.packetsLost, this.packetCount);
    this.loss.report(report.highestSequence, cumulativeLost(report.packetsLost));
    const sentMs = this.srSentMs.get(report.lsr);
    if (sentMs === undefined || report.lsr === 0) return;
    const rtt = nowMs - sentMs - (report.dlsr / 65536) * 1000;
    if (rtt < 0) return;
    this.rttMs = this.rttMs === undefined ? rtt : this.rttMs * 0.8 + rtt * 0.2;
    stats.observeRtt(rtt / 1000);
  }

  /** Its m-line or its peer connection went: the stream feeds it no more. */
  detach(): void {
    this.stream?.detach(this);
  }

  /** Counted for the subscriber: billed by the layer it receives, as verified at its publisher, and by what reached it. */
  private sent(packet: ForwardedRtp, nowMs: number): true {
    this.link.stats.rtpForwarded += 1;
    this.account.rtpOut(this.streamId, this.kind, packet, this.stream?.layers, nowMs);
    return true;
  }

  /**
   * Tells the client the layer it gets at each switch, and again at each key frame of that layer at
   * another size (docs/protocol/media.md, "Bandwidth"): a publisher's encoder scales a layer as its
   * uplink and CPU allow, and a change of size always starts with a key frame.
   */
  private tellLayer(layer: number, switching: boolean, vp8: ForwardedRtp['vp8']): void {
    if (!switching && !(vp8?.keyFrame && vp8.width > 0)) return;
    const info = this.layers?.get(layer);
    const size = { width: vp8?.width || info?.width || 0, height: vp8?.height || info?.height || 0 };
    if (!switching && size.width === this.toldSize.width && size.height === this.toldSize.height) return;
    this.toldSize = size;
    this.link.layerTold(this.streamId, layer, size.width, size.height);
  }
}

/** NTP time now, 64-bit fixed point, as sender reports carry it. */
function ntpNow(): bigint {
  const ms = Date.now() + 2_208_988_800_000;
  const seconds = BigInt(Math.floor(ms / 1000));
  const fraction = BigInt(Math.floor(((ms % 1000) / 1000) * 2 ** 32));
  return (seconds << 32n) | fraction;
}
