import type { MediaKind, RtcTrack } from '@rtc/protocol';
import {
  RTCPeerConnection, RtcpPayloadSpecificFeedback, type MediaStreamTrack, type RTCDtlsTransport, type RtcpPacket, type RtpPacket,
  type RTCRtpTransceiver,
} from 'werift';
import { peerConfig, type RtcOptions } from './options.ts';
import { installDtlsKeyCheck } from './dtls-verify.ts';
import { announce, keepInactiveOpen, scanOffer } from './sdp.ts';

installDtlsKeyCheck();

/** What a peer connection needs of its media session. */
export interface PeerOwner {
  /** Kinds of the streams the session publishes now, by stream id. */
  publishedKind(streamId: number): MediaKind | undefined;
  canSubscribe(streamId: number): boolean;
  /** RTP of a stream the session publishes, for its subscribers. */
  onRtp(streamId: number, packet: RtpPacket): void;
  /** A subscriber asked for a key frame of a stream it receives. */
  onKeyFrameRequest(streamId: number): void;
  /** The peer connection can carry media now (first connect, or a renegotiation added received streams). */
  onReceiving(streamIds: readonly number[]): void;
}

/**
 * Most m-lines an offer may have. An offer keeps every m-line of the earlier ones, so this bounds
 * the transceivers a session can make the server hold (docs/protocol/media.md, "Negotiation").
 */
export const MAX_MLINES = 64;
/** Distinct ICE candidates an offer may name: each one costs connectivity checks, again at every ICE restart. */
export const MAX_CANDIDATES = 32;

export type AnswerResult = { readonly ok: true; readonly sdp: string; readonly refused: string[] } | { readonly ok: false };

/** A received stream: the server-side sending transceiver and the kind its m-line carries. */
interface Outbound {
  readonly transceiver: RTCRtpTransceiver;
  readonly kind: MediaKind;
}

/**
 * The server end of a session's WebRTC peer connection (docs/protocol/media.md, "WebRTC media").
 * The client offers, this answers; it forwards RTP without decoding it. Which m-line carries which
 * stream comes from the offer's `tracks`, and is checked against the session's grant at each packet.
 */
export class RtcPeer {
  private readonly owner: PeerOwner;
  private readonly options: RtcOptions;
  private pc: RTCPeerConnection | undefined;
  /** Streams the client sends, by mid. */
  private sending = new Map<string, number>();
  /** Streams the client receives, by stream id. */
  private receiving = new Map<number, Outbound>();
  private readonly watchedTracks = new WeakSet<MediaStreamTrack>();
  private fingerprint: string | undefined;
  private readonly watchedTransports = new WeakSet<RTCDtlsTransport>();
  /** Publisher SSRC of each stream the client sends: key frame requests name it. */
  private readonly ssrcs = new Map<number, { readonly ssrc: number; readonly transceiver: RTCRtpTransceiver }>();
  private chain: Promise<unknown> = Promise.resolve();
  private connected = false;
  private closed = false;

  constructor(owner: PeerOwner, options: RtcOptions) {
    this.owner = owner;
    this.options = options;
  }

  /** Answers an offer; offers are applied one at a time, in order. */
  answer(sdp: string, tracks: readonly RtcTrack[]): Promise<AnswerResult> {
    const next = this.chain.then(() => this.apply(sdp, tracks));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Sends a packet of a stream this client receives, if it may receive it now. */
  forward(streamId: number, kind: MediaKind, packet: Buffer): boolean {
    const out = this.receiving.get(streamId);
    if (!out || out.kind !== kind || !this.connected || !this.owner.canSubscribe(streamId)) return false;
    // the sender rewrites the header of what it sends: each gets its own parsed copy
    out.transceiver.sender.sendRtp(packet).catch(() => undefined);
    return true;
  }

  /** The client changed its bounds on the video of `streamId` (`rtc_video`). */
  preferenceChanged(streamId: number): void {
    void streamId;
  }

  /** Asks the client for a key frame of a stream it sends. */
  requestKeyFrame(streamId: number): void {
    const source = this.ssrcs.get(streamId);
    if (source) source.transceiver.receiver.sendRtcpPLI(source.ssrc).catch(() => undefined);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connected = false;
    const pc = this.pc;
    this.pc = undefined;
    this.receiving.clear();
    this.sending.clear();
    if (pc) pc.close().catch(() => undefined);
  }

  private async apply(sdp: string, tracks: readonly RtcTrack[]): Promise<AnswerResult> {
    if (this.closed) return { ok: false };
    const scan = scanOffer(sdp);
    // the server is the DTLS client: that is the role where the peer's key is checked (dtls-verify.ts)
    if (!scan || !scan.fingerprint || !scan.mediaOnly || !scan.serverIsDtlsClient || scan.mlines > MAX_MLINES || scan.candidates > MAX_CANDIDATES
      || tracks.some((t) => !scan.kinds.has(t.mid))) return { ok: false };
    // the DTLS certificate is bound to the session by its first offer (docs/protocol/media.md, 10.2)
    if (this.fingerprint !== undefined && scan.fingerprint !== this.fingerprint) return { ok: false };
    const fresh = this.pc === undefined;
    const pc = this.pc ?? this.open();
    try {
      await pc.setRemoteDescription({ type: 'offer', sdp });
      this.watchRtcp(pc);
    } catch {
      // the stack refused it (no common codec, broken lines); a first offer leaves no connection behind
      if (fresh) {
        this.pc = undefined;
        pc.close().catch(() => undefined);
      }
      return { ok: false };
    }
    this.fingerprint = scan.fingerprint;
    // docs/operations/configuration.md, "WebRTC": the server's candidates are its own addresses
    for (const transport of pc.iceTransports) transport.connection.stunServer = undefined;

    const refused: string[] = [];
    const sending = new Map<string, number>();
    const receiving = new Map<number, Outbound>();
    const added: number[] = [];
    const byMid = new Map(pc.getTransceivers().filter((t) => t.mid !== undefined).map((t) => [t.mid!, t]));
    for (const track of tracks) {
      const transceiver = byMid.get(track.mid);
      const kind = scan.kinds.get(track.mid)!;
      if (!transceiver) {
        refused.push(track.mid);
      } else if (track.direction === 'send') {
        if (this.owner.publishedKind(track.stream_id) === kind) sending.set(track.mid, track.stream_id);
        else refused.push(track.mid);
      } else if (this.owner.canSubscribe(track.stream_id)) {
        transceiver.setDirection('sendonly');
        receiving.set(track.stream_id, { transceiver, kind });
        if (this.receiving.get(track.stream_id)?.transceiver !== transceiver) added.push(track.stream_id);
      } else {
        transceiver.setDirection('inactive');
        refused.push(track.mid);
      }
    }
    // m-lines the offer no longer maps carry nothing
    for (const transceiver of byMid.values()) {
      const mid = transceiver.mid!;
      if (!sending.has(mid) && ![...receiving.values()].some((o) => o.transceiver === transceiver) && transceiver.direction === 'sendonly') {
        transceiver.setDirection('inactive');
      }
    }
    this.sending = sending;
    this.receiving = receiving;

    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    if (this.closed) return { ok: false };
    if (this.connected && added.length > 0) this.owner.onReceiving(added);
    return { ok: true, sdp: announce(keepInactiveOpen(pc.localDescription?.sdp ?? answer.sdp, sdp), this.options.publicIp), refused };
  }

  private open(): RTCPeerConnection {
    const pc = new RTCPeerConnection(peerConfig(this.options));
    this.pc = pc;
    // werift announces remote tracks while it applies the offer
    pc.ontrack = ({ track, transceiver }) => {
      if (this.watchedTracks.has(track)) return;
      this.watchedTracks.add(track);
      track.onReceiveRtp.subscribe((packet) => this.onRtp(transceiver, packet));
    };
    pc.connectionStateChange.subscribe((state) => {
      const was = this.connected;
      this.connected = state === 'connected' && !this.closed;
      if (this.connected && !was) this.owner.onReceiving([...this.receiving.keys()]);
    });
    return pc;
  }

  private onRtp(transceiver: RTCRtpTransceiver, packet: RtpPacket): void {
    const mid = transceiver.mid;
    const streamId = mid === undefined ? undefined : this.sending.get(mid);
    if (streamId === undefined) return;
    const kind = this.owner.publishedKind(streamId);
    if (kind === undefined || kind !== transceiver.kind) return;
    if (this.ssrcs.get(streamId)?.ssrc !== packet.header.ssrc) this.ssrcs.set(streamId, { ssrc: packet.header.ssrc, transceiver });
    this.owner.onRtp(streamId, packet);
  }

  /**
   * Key frame requests (PLI, FIR) from the client name the SSRC of the transceiver that sends to it.
   * werift hands a feedback packet to whichever receiver owns the packet's sender SSRC, which is the
   * client's own publishing SSRC when it publishes too; so every RTCP packet of the transport is read here.
   */
  private watchRtcp(pc: RTCPeerConnection): void {
    for (const transport of pc.dtlsTransports) {
      if (this.watchedTransports.has(transport)) continue;
      this.watchedTransports.add(transport);
      transport.onRtcp.subscribe((packet: RtcpPacket) => {
        if (packet.type !== RtcpPayloadSpecificFeedback.type) return;
        const { feedback } = packet;
        const asked = 'fir' in feedback ? feedback.fir.map((entry) => entry.ssrc)
          : feedback.count === 1 && 'mediaSsrc' in feedback ? [feedback.mediaSsrc] : [];
        if (asked.length === 0) return;
        for (const [streamId, out] of this.receiving) {
          if (asked.includes(out.transceiver.sender.ssrc)) this.owner.onKeyFrameRequest(streamId);
        }
      });
    }
  }
}
