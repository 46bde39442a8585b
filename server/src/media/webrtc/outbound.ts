/** What the downlink keeps of one stream a client receives (downlink.ts). */
import type { MediaKind } from '@rtc/protocol';
import type { RTCRtpTransceiver } from 'werift';
import { LossWindow } from '../rtp/loss-window.ts';
import { ReportedLoss } from '../rtp/reported-loss.ts';
import { StreamRewriter } from '../rtp/rewriter.ts';

/** Sent packets kept per m-line for retransmission (about 1.5 s of 720p video). */
export const HISTORY = 1024;

/** The client's bounds on a received video (`rtc_video`); null is no bound. */
export interface VideoBounds {
  readonly maxWidth: number | null;
  readonly maxHeight: number | null;
  readonly maxLayer: number | null;
}

export interface SentPacket {
  seq: number;
  timestamp: number;
  marker: boolean;
  payload: Buffer;
  lastSentMs: number;
}

/** One stream the client receives: its m-line, its numbering, what was sent on it. */
export class Outbound {
  readonly streamId: number;
  readonly kind: MediaKind;
  /** The kind's index in the traffic counts (stats.ts). */
  readonly kindCode: number;
  readonly transceiver: RTCRtpTransceiver;
  readonly rewriter: StreamRewriter;
  readonly history: (SentPacket | undefined)[] = new Array<SentPacket | undefined>(HISTORY);
  /** Layer the allocation wants forwarded; -1 paused. */
  target = 0;
  /** Layer now forwarded (its key frame went out); -1 none. */
  current = -1;
  /** The layer forwarded last, kept across pauses: a switch is counted up or down from it. */
  lastLayer = -1;
  /** The picture size last told with the layer (`stream_layer`). */
  toldSize = { width: 0, height: 0 };
  paused = false;
  /** Since when the smallest layer has not fitted while it was forwarded; undefined while it fits. */
  unfitSinceMs: number | undefined;
  bounds: VideoBounds = { maxWidth: null, maxHeight: null, maxLayer: null };
  lastMarker = true;
  readonly keyAskedMs: number[] = [];
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

  constructor(streamId: number, kind: MediaKind, transceiver: RTCRtpTransceiver) {
    this.streamId = streamId;
    this.kind = kind;
    this.kindCode = kind === 'audio' ? 1 : 2;
    this.transceiver = transceiver;
    this.rewriter = new StreamRewriter(kind === 'audio' ? 48_000 : 90_000);
  }
}
