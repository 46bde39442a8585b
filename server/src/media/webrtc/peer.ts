import type { ClientControl, MediaKind, RtcTrack, ServerControl } from '@rtc/protocol';
import type { Logger } from 'pino';
import { errorReply } from '../session/control.ts';
import {
  RTCPeerConnection, RTP_EXTENSION_URI, RtcpPayloadSpecificFeedback, type RTCDtlsTransport, type RtcpPacket, type RTCRtpTransceiver,
} from 'werift';
import type { KeyFrameSource, RtpAccount } from '../room/member.ts';
import type { Stream } from '../room/stream.ts';
import { PLAYOUT_DELAY_URI, peerAddressesOf, peerConfig, type PeerAddresses, type RtcOptions } from './options.ts';
import { installDtlsKeyCheck } from './dtls-verify.ts';
import { installInputGuard } from './input-guard.ts';
import { Downlink, type DownlinkSnapshot, type VideoBounds } from './downlink.ts';
import type { DownTrack } from './down-track.ts';
import { addFeedback, announce, extensionIds, keepInactiveOpen, scanOffer, withoutCandidates } from './sdp.ts';
import { retireLines } from './retired-lines.ts';
import { leaveMediaToSession } from './receive-path.ts';
import { takeMediaIngress } from './media-ingress.ts';
import { Uplink, type SendingLine } from './uplink.ts';
import type { IceOutcome, MediaStats } from '../../metrics/media-stats.ts';

installDtlsKeyCheck();
installInputGuard();

/** What a peer connection needs of its media session. */
export interface PeerOwner {
  /** Kinds of the streams the session publishes now, by stream id. */
  publishedKind(streamId: number): MediaKind | undefined;
  canSubscribe(streamId: number): boolean;
  /** The streams the session publishes now, by id: what its client sends goes to them. */
  readonly published: ReadonlyMap<number, Stream>;
  /** Where the down tracks count what they send to the client. */
  readonly account: RtpAccount;
  /** A down track was made for a stream the client receives: its stream feeds it if the session receives it. */
  attachTrack(streamId: number, track: DownTrack): void;
  /** The client's bounds on a received video (`rtc_video`), if it set any. */
  videoBounds(streamId: number): VideoBounds | undefined;
  sendControl(message: ServerControl): void;
  /** The selected ICE pair of the session's connection goes through one of the platform's TURN relays (docs/console.md, "Usage"). */
  onRelayed(): void;
  /** Every few seconds, the downlink's estimate and its sharing out (debug logs). */
  onDownlinkReport(snapshot: DownlinkSnapshot): void;
}

/**
 * Most m-lines an offer may have. An offer keeps every m-line of the earlier ones, so this bounds
 * the transceivers a session can make the server hold (docs/protocol/media.md, "Negotiation").
 */
export const MAX_MLINES = 64;
/** Distinct ICE candidates an offer may name: each one costs connectivity checks, again at every ICE restart. */
export const MAX_CANDIDATES = 32;

/**
 * A peer connection whose ICE has neither connected nor failed this long after it was opened counts
 * as timed out (docs/operations/metrics.md): a client's checks arrive within seconds, or not at all.
 */
export const ICE_TIMEOUT_MS = 30_000;

export type AnswerResult = { readonly ok: true; readonly sdp: string; readonly refused: string[] } | { readonly ok: false };

/** A received stream: the server-side sending transceiver and the kind its m-line carries. */
interface Outbound {
  readonly transceiver: RTCRtpTransceiver;
  readonly kind: MediaKind;
}

/**
 * The server end of a session's WebRTC peer connection (docs/protocol/media.md, "WebRTC media").
 * The client offers, this answers. What the client publishes comes in through the uplink (feedback,
 * NACKs, receiver reports); what it receives goes out through the downlink (its bandwidth estimate,
 * one simulcast layer per video, retransmissions). Which m-line carries which stream comes from the
 * offer's `tracks`, and is checked against the session's grant at each packet.
 */
/** What a peer connection measured of its client's link (RtcPeer.quality). */
export interface PeerQuality {
  readonly lossIn: number | undefined;
  readonly lossOut: number | undefined;
  readonly rttMs: number | undefined;
  /** stream id → the layer sent of it now (0 the smallest). */
  readonly layers: ReadonlyMap<number, number>;
}

export class RtcPeer implements KeyFrameSource {
  private readonly owner: PeerOwner;
  private readonly options: RtcOptions;
  private readonly addresses: PeerAddresses;
  private pc: RTCPeerConnection | undefined;
  /** Streams the client receives, by stream id. */
  private receiving = new Map<number, Outbound>();
  private fingerprint: string | undefined;
  private readonly watchedTransports = new WeakSet<RTCDtlsTransport>();
  private readonly uplink: Uplink;
  private readonly downlink: Downlink;
  private chain: Promise<unknown> = Promise.resolve();
  private connected = false;
  private closed = false;
  private readonly stats: MediaStats;
  private readonly now: () => number;
  /** Counts the ICE outcome of the current connection, once; undefined once counted. */
  private settleIce: ((outcome: IceOutcome) => void) | undefined;

  constructor(owner: PeerOwner, options: RtcOptions, now: () => number, stats: MediaStats) {
    this.owner = owner;
    this.options = options;
    this.addresses = peerAddressesOf(options);
    this.stats = stats;
    this.now = now;
    this.uplink = new Uplink(owner.published, () => this.downlink.rtt, now, stats);
    this.downlink = new Downlink({
      paused: (stream_id, reason) => owner.sendControl({ type: 'stream_paused', stream_id, reason }),
      resumed: (stream_id) => owner.sendControl({ type: 'stream_resumed', stream_id }),
      layer: (stream_id, layer, width, height) => owner.sendControl({ type: 'stream_layer', stream_id, layer, width, height }),
      attach: (streamId, track) => owner.attachTrack(streamId, track),
      report: (snapshot) => owner.onDownlinkReport(snapshot),
    }, owner.account, now, stats);
  }

  /** Answers an offer; offers are applied one at a time, in order. */
  answer(sdp: string, tracks: readonly RtcTrack[], newConnection = false): Promise<AnswerResult> {
    const next = this.chain.then(() => this.apply(sdp, tracks, newConnection));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Answers an `rtc_offer` with `rtc_answer`, or with `rtc_invalid_offer` (docs/protocol/media.md, "Negotiation"). */
  reply(control: ClientControl & { readonly type: 'rtc_offer' }, logger: Logger): void {
    this.answer(control.sdp, control.tracks, control.new_connection === true).then(
      (result) => {
        if (!result.ok) return this.owner.sendControl(errorReply(control.id, 'rtc_invalid_offer', 'the offer is not an SDP offer the server can answer'));
        this.owner.sendControl({ type: 'rtc_answer', id: control.id, sdp: result.sdp, refused: result.refused });
      },
      (err: unknown) => {
        logger.warn({ err }, 'media: answering a WebRTC offer failed');
        this.owner.sendControl(errorReply(control.id, 'rtc_invalid_offer', 'the offer could not be answered'));
      },
    );
  }

  /** The down track of a stream this client receives, once negotiated. */
  downTrack(streamId: number): DownTrack | undefined {
    return this.downlink.track(streamId);
  }

  /** The client changed its bounds on the video of `streamId` (`rtc_video`). */
  preferenceChanged(streamId: number): void {
    const bounds = this.owner.videoBounds(streamId);
    if (bounds) this.downlink.setBounds(streamId, bounds);
  }

  /**
   * What the media node sees of the connection (docs/reference/room-api.md, "Quality"): the loss of what
   * it receives and of what it sends, the round trip, and the layer sent of each stream received.
   */
  quality(): PeerQuality {
    const layers = new Map<number, number>();
    for (const id of this.downlink.streamIds()) {
      const layer = this.downlink.forwardedLayer(id);
      if (layer !== undefined) layers.set(id, layer);
    }
    return { lossIn: this.uplink.loss, lossOut: this.downlink.worstLoss, rttMs: this.downlink.rtt, layers };
  }

  /** Asks the client for a key frame of a layer of a stream it sends (-1: every layer). */
  requestKeyFrame(streamId: number, layer: number): void {
    this.uplink.requestKeyFrame(streamId, layer);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connected = false;
    const pc = this.pc;
    if (pc) this.checkRelayed(pc);
    this.pc = undefined;
    this.settleIce?.('abandoned');
    this.receiving.clear();
    this.uplink.close();
    this.downlink.close();
    if (pc) pc.close().catch(() => undefined);
  }

  private async apply(sdp: string, tracks: readonly RtcTrack[], newConnection: boolean): Promise<AnswerResult> {
    if (this.closed) return { ok: false };
    const scan = scanOffer(sdp);
    // the server is the DTLS client: that is the role where the peer's key is checked (dtls-verify.ts)
    if (!scan || !scan.fingerprint || !scan.mediaOnly || !scan.serverIsDtlsClient || !scan.simulcastOk || scan.mlines > MAX_MLINES
      || scan.candidates > MAX_CANDIDATES || tracks.some((t) => !scan.kinds.has(t.mid))) return { ok: false };
    // the DTLS certificate is bound to the peer connection by its first offer (docs/protocol/media.md,
    // 10.2); a new client peer connection brings its own, in an offer as sealed as the first
    if (this.fingerprint !== undefined && scan.fingerprint !== this.fingerprint && !newConnection) return { ok: false };
    // a new client peer connection (docs/protocol/media.md 10.4): a new one here too
    if (this.pc && newConnection) this.replaceConnection();
    const fresh = this.pc === undefined;
    const pc = this.pc ?? this.open();
    // m-lines the client rejected, or recycled under a new mid (RFC 8829 5.2.2)
    if (!fresh) retireLines(pc, scan);
    try {
      // docs/operations/configuration.md, "Peer addresses": no check goes where the node may not send
      await pc.setRemoteDescription({ type: 'offer', sdp: withoutCandidates(sdp, this.addresses.mayOffer) });
      this.watchTransports(pc);
      // an offer the stack refused left no connection to count
      if (fresh) this.watchIce(pc);
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
    const sending = new Map<string, SendingLine>();
    const receiving = new Map<number, Outbound>();
    const added: number[] = [];
    const byMid = new Map(pc.getTransceivers().filter((t) => t.mid !== undefined).map((t) => [t.mid!, t]));
    for (const track of tracks) {
      const transceiver = byMid.get(track.mid);
      const kind = scan.kinds.get(track.mid)!;
      // a rejected m-line carries nothing until the client recycles it under a new mid
      if (!transceiver || scan.rejected.has(track.mid)) {
        refused.push(track.mid);
      } else if (track.direction === 'send') {
        if (this.owner.publishedKind(track.stream_id) === kind) {
          sending.set(track.mid, { streamId: track.stream_id, kind, rids: scan.rids.get(track.mid) ?? [], ssrcs: scan.ssrcs.get(track.mid) ?? [] });
        } else {
          refused.push(track.mid);
        }
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
      // werift's receiver reports count retransmissions as received: the uplink sends its own
      transceiver.receiver.rtcpRunning = true;
      // werift would hand an inactive transceiver to the next new m-line of an offer, and the m-line
      // it served would then have none; only the offerer recycles m-lines (RFC 8829, 5.2.2)
      transceiver.usedForSender = true;
    }
    this.receiving = receiving;

    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    if (this.closed) return { ok: false };
    const local = addFeedback(pc.localDescription?.sdp ?? answer.sdp, sdp);
    const ids = extensionIds(local);
    const twcc = ids.get(RTP_EXTENSION_URI.transportWideCC);
    this.uplink.configure({ mid: ids.get(RTP_EXTENSION_URI.sdesMid), rid: ids.get(RTP_EXTENSION_URI.sdesRTPStreamID), twcc }, sending);
    // the layer state of what the client publishes is its stream's (room/stream.ts)
    for (const line of sending.values()) this.owner.published.get(line.streamId)?.setSimulcast(line.rids);
    this.downlink.setOutbound([...receiving].map(([streamId, o]) => ({ streamId, kind: o.kind, transceiver: o.transceiver })),
      { mid: ids.get(RTP_EXTENSION_URI.sdesMid), twcc, playoutDelay: ids.get(PLAYOUT_DELAY_URI) });
    for (const streamId of receiving.keys()) this.preferenceChanged(streamId);
    if (this.connected && added.length > 0) this.askKeyFrames(added);
    return { ok: true, sdp: announce(keepInactiveOpen(local, scan.rejected), this.options.publicIp), refused };
  }

  /**
   * Tells the owner when the nominated ICE pair's remote address is one of the platform's TURN relay
   * addresses: the client reaches the node through its TURN server. The candidate's type is the
   * client's word and is not weighed (docs/console.md, "Usage kind of a session"). Checked when the
   * connection is up, and at its end, since a pair can be nominated again meanwhile.
   */
  private checkRelayed(pc: RTCPeerConnection): void {
    if (this.isRelayed(pc)) this.owner.onRelayed();
  }

  private isRelayed(pc: RTCPeerConnection): boolean {
    return pc.iceTransports.some((t) => {
      const remote = t.connection.nominated?.remoteCandidate;
      return remote !== undefined && this.addresses.isTurnRelay(remote.host);
    });
  }

  /** Closes the peer connection for the client's new one; what it sent and received is negotiated afresh. */
  private replaceConnection(): void {
    const old = this.pc;
    if (old) this.checkRelayed(old);
    this.pc = undefined;
    this.settleIce?.('abandoned');
    this.connected = false;
    this.downlink.setConnected(false);
    this.receiving = new Map();
    old?.close().catch(() => undefined);
  }

  private open(): RTCPeerConnection {
    const pc = new RTCPeerConnection(peerConfig(this.options));
    leaveMediaToSession(pc);
    this.pc = pc;
    pc.connectionStateChange.subscribe((state) => {
      // a replaced connection closing says nothing of its successor
      if (this.pc !== pc) return;
      const was = this.connected;
      this.connected = state === 'connected' && !this.closed;
      this.downlink.setConnected(this.connected);
      if (this.connected && !was) {
        this.askKeyFrames([...this.receiving.keys()]);
        this.checkRelayed(pc);
      }
    });
    return pc;
  }

  /**
   * Counts the first ICE outcome of a connection (docs/operations/metrics.md): connected (with
   * whether its selected pair is relayed), failed, no outcome within ICE_TIMEOUT_MS, or closed before any.
   */
  private watchIce(pc: RTCPeerConnection): void {
    const settle = (outcome: IceOutcome): void => {
      if (this.settleIce !== settle) return;
      this.settleIce = undefined;
      clearTimeout(timer);
      this.stats.ice[outcome] += 1;
      if (outcome !== 'connected') return;
      this.stats.icePaths[this.isRelayed(pc) ? 'relay' : 'direct'] += 1;
    };
    const timer = setTimeout(() => settle('timed_out'), ICE_TIMEOUT_MS);
    timer.unref();
    this.settleIce = settle;
    pc.iceConnectionStateChange.subscribe((state) => {
      // werift's agent also says `completed` once it has gathered its candidates: connected is
      // when a pair is nominated
      const nominated = pc.iceTransports.some((t) => t.connection.nominated !== undefined);
      if ((state === 'connected' || state === 'completed') && nominated) settle('connected');
      else if (state === 'failed') settle('failed');
    });
    // DTLS up means ICE connected, whatever order the events came in
    pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') settle('connected');
    });
  }

  /** Media can reach the client on these streams now: their publishers send a key frame at once. */
  private askKeyFrames(streamIds: readonly number[]): void {
    const now = this.now();
    for (const id of streamIds) this.downlink.track(id)?.requestKeyFrame(now);
  }

  /**
   * RTCP of the transport: the downlink's feedback, and key frame requests (PLI, FIR), which name the
   * SSRC of the m-line that sends to the client; werift would hand them to whichever receiver owns
   * the packet's sender SSRC, the client's own publishing SSRC when it publishes too.
   */
  private watchTransports(pc: RTCPeerConnection): void {
    for (const transport of pc.dtlsTransports) {
      if (this.watchedTransports.has(transport)) continue;
      this.watchedTransports.add(transport);
      this.uplink.attach(transport);
      this.downlink.attach(transport);
      // SRTP is up when the transport connects; a restarted ICE agent's sockets are taken when it connects again
      transport.onStateChange.subscribe((state) => {
        if (state === 'connected') takeMediaIngress(transport);
      });
      transport.iceTransport.onStateChange.subscribe((state) => {
        if (state === 'connected' || state === 'completed') takeMediaIngress(transport);
      });
      takeMediaIngress(transport);
      transport.onRtcp.subscribe((packet: RtcpPacket) => {
        this.downlink.onRtcp(packet);
        if (packet.type !== RtcpPayloadSpecificFeedback.type) return;
        const { feedback } = packet;
        const asked = 'fir' in feedback ? feedback.fir.map((entry) => entry.ssrc)
          : feedback.count === 1 && 'mediaSsrc' in feedback ? [feedback.mediaSsrc] : [];
        if (asked.length === 0) return;
        this.stats.keyFrameRequestsReceived += 1;
        for (const [streamId, out] of this.receiving) {
          if (asked.includes(out.transceiver.sender.ssrc)) this.downlink.track(streamId)?.requestKeyFrame(this.now());
        }
      });
    }
  }
}
