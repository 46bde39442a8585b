/**
 * A WebRTC client of the media role in Node (docs/protocol/media.md, "WebRTC media"): the raw media
 * protocol client (wire-client.ts) for the sealed session, and a werift peer connection for RTP.
 * It sends and receives RTP as given (no frame encryption of section 11: the server forwards
 * payloads without looking at them), so tests can compare bytes. The synthetic participants of
 * `rtc load-test`, the tests and the benchmarks use it; the app SDK needs a browser's WebRTC.
 */
import { randomInt } from 'node:crypto';
import {
  GenericNack, RTP_EXTENSION_URI, MediaStreamTrack, RtcpTransportLayerFeedback, RtpHeader, RtpPacket,
  type PeerConfig, type RTCPeerConnection, type RTCRtpTransceiver, type RtcpPacket,
} from 'werift';
import {
  createLoopbackPeer, gatheredOffer, isPli, OPUS_PAYLOAD_TYPE, pliMediaSsrc, VP8_PAYLOAD_TYPE, WAIT_MS, waitFor,
} from './loopback-peer.ts';
import { WireClient, type Control, type WireCloseInfo, type WireCredentials } from './wire-client.ts';

/** How often `keepAlive` pings, as the app SDK does. */
export const KEEPALIVE_MS = 15_000;

export type RtcKind = 'audio' | 'video';
export type RtcDirection = 'send' | 'recv';

export interface RtcTrackSpec {
  readonly streamId: number;
  readonly kind: RtcKind;
  readonly direction: RtcDirection;
  /**
   * send, video: the rids of simulcast layers, smallest first (docs/protocol/media.md, section
   * 10.5); their RTP goes out with `sendLayerRtp`. Needs the RID header extension in the client's
   * werift settings.
   */
  readonly rids?: readonly string[];
}

/** One m-line of `tracks` as the protocol names it. */
export interface RtcOfferTrack {
  readonly mid: string;
  readonly stream_id: number;
  readonly direction: RtcDirection;
  /**
   * send, video: the rids of simulcast layers, smallest first (docs/protocol/media.md, section
   * 10.5); their RTP goes out with `sendLayerRtp`. Needs the RID header extension in the client's
   * werift settings.
   */
  readonly rids?: readonly string[];
}

interface Entry {
  readonly spec: RtcTrackSpec;
  readonly transceiver: RTCRtpTransceiver;
  /** send: the local track written to. */
  readonly track: MediaStreamTrack | undefined;
  readonly rtp: { ssrc: number; sequenceNumber: number; timestamp: number };
  /** recv: payloads received, in arrival order (when the client keeps them). */
  readonly received: Buffer[];
  /** recv: packets received. */
  count: number;
  /** recv: RTP sequence numbers received, in arrival order (when the client keeps payloads). */
  readonly seqs: number[];
  /** recv: SSRC of the server's packets (what a PLI names). */
  remoteSsrc: number | undefined;
  /** recv: sequence number of the last packet received. */
  lastSeq: number | undefined;
  /** send: picture loss indications the server sent. */
  plis: number;
  /** send with rids: each layer's own SSRC, sequence and picture loss indications. */
  readonly layers: Map<string, { readonly ssrc: number; sequenceNumber: number; timestamp: number; plis: number }>;
}

export interface JoinOptions {
  /** More werift settings (a DTLS certificate of its own, ...). */
  readonly peer?: Partial<PeerConfig>;
  /** Keep every received payload (default); false only counts them (load generation). */
  readonly keepPayloads?: boolean;
  /** Called with every RTP packet received on a receive m-line, with its stream id. */
  readonly onRtp?: (streamId: number, packet: RtpPacket) => void;
}

export interface NegotiateOptions {
  /** Rewrites the offer SDP before it is sent (tests of the server's checks). */
  readonly mungeSdp?: (sdp: string) => string;
}

export interface NegotiateResult {
  readonly refused: string[];
  readonly answer: Control;
  readonly mids: Map<string, RtcOfferTrack>;
}

/** A joined media session with one WebRTC peer connection. */
export class RtcClient {
  readonly wire: WireClient;
  readonly pc: RTCPeerConnection;
  /** Close code and reason of the media WebSocket, once closed. */
  closeInfo: WireCloseInfo | undefined;
  private readonly entries = new Map<string, Entry>();
  private readonly keepPayloads: boolean;
  private readonly onRtp: JoinOptions['onRtp'];

  private constructor(wire: WireClient, pc: RTCPeerConnection, options: JoinOptions) {
    this.wire = wire;
    this.pc = pc;
    this.keepPayloads = options.keepPayloads ?? true;
    this.onRtp = options.onRtp;
    void wire.closed.then((info) => {
      this.closeInfo = info;
    });
  }

  /** Joins with a token's media credentials (the token response, or any object with its `media`). */
  static async join(url: string, token: { readonly media: WireCredentials }, options: JoinOptions = {}): Promise<RtcClient> {
    const wire = await WireClient.join(url, token.media);
    return new RtcClient(wire, createLoopbackPeer(options.peer), options);
  }

  /** `publish` over the sealed session; resolves with the reply (`published` or `error`). */
  publish(streamId: number, kind: RtcKind): Promise<Control> {
    return this.wire.publish(streamId, kind);
  }

  /** Sends an `rtc_offer` as given; resolves with the reply. */
  offer(sdp: string, tracks: readonly RtcOfferTrack[]): Promise<Control> {
    return this.wire.request({ type: 'rtc_offer', sdp, tracks });
  }

  /**
   * Adds a transceiver for every new entry (send-only with a track, or receive-only), offers every
   * m-line in use and applies the answer. Rejects with the error code if the server refused the offer.
   */
  async negotiate(tracks: readonly RtcTrackSpec[], options: NegotiateOptions = {}): Promise<NegotiateResult> {
    for (const spec of tracks) {
      const key = entryKey(spec.direction, spec.streamId);
      if (this.entries.has(key)) continue;
      this.entries.set(key, this.addEntry(spec));
    }
    let sdp = await gatheredOffer(this.pc);
    if (options.mungeSdp) sdp = options.mungeSdp(sdp);
    const mids = new Map<string, RtcOfferTrack>();
    for (const entry of this.entries.values()) {
      const mid = entry.transceiver.mid;
      if (mid === undefined) throw new Error(`no mid for stream ${entry.spec.streamId}`);
      mids.set(mid, { mid, stream_id: entry.spec.streamId, direction: entry.spec.direction });
    }
    const answer = await this.offer(sdp, [...mids.values()]);
    if (answer.type !== 'rtc_answer') throw new RtcOfferError(answer);
    await this.pc.setRemoteDescription({ type: 'answer', sdp: answer['sdp'] as string });
    return { refused: answer['refused'] as string[], answer, mids };
  }

  /** The mid of the m-line of a stream in one direction. */
  mid(streamId: number, direction: RtcDirection): string {
    const mid = this.entry(direction, streamId).transceiver.mid;
    if (mid === undefined) throw new Error(`stream ${streamId} has no mid yet`);
    return mid;
  }

  /**
   * Writes one RTP packet carrying exactly `payload` on the send track of a stream; its timestamp
   * is the previous one plus `timestampStep` (default one 30 fps video frame or 20 ms of audio; 0
   * for the next packet of the same frame).
   */
  sendRtp(streamId: number, payload: Buffer, marker = true, timestampStep?: number): void {
    const entry = this.entry('send', streamId);
    const { rtp } = entry;
    rtp.sequenceNumber = (rtp.sequenceNumber + 1) & 0xffff;
    rtp.timestamp = (rtp.timestamp + (timestampStep ?? (entry.spec.kind === 'video' ? 3000 : 960))) >>> 0;
    const header = new RtpHeader({
      payloadType: entry.spec.kind === 'video' ? VP8_PAYLOAD_TYPE : OPUS_PAYLOAD_TYPE,
      sequenceNumber: rtp.sequenceNumber, timestamp: rtp.timestamp, ssrc: rtp.ssrc, marker,
    });
    // the sender rewrites the header of what it is given: a fresh packet and a copy of the payload each time
    entry.track!.writeRtp(new RtpPacket(header, Buffer.from(payload)));
  }

  /**
   * Writes one RTP packet of a simulcast layer of a stream (a send m-line with `rids`): on the
   * layer's own SSRC, with the MID, RID and transport-wide sequence extensions the answer
   * negotiated, as a browser's sender does. werift's own sender sends one SSRC per m-line only.
   */
  sendLayerRtp(streamId: number, rid: string, payload: Buffer, marker = true, timestampStep = 3000): void {
    const entry = this.entry('send', streamId);
    const layer = entry.layers.get(rid);
    const transport = this.pc.dtlsTransports[0];
    const mid = entry.transceiver.mid;
    if (!layer) throw new Error(`stream ${streamId} has no layer ${rid}`);
    if (!transport || transport.state !== 'connected' || mid === undefined) return;
    layer.sequenceNumber = (layer.sequenceNumber + 1) & 0xffff;
    layer.timestamp = (layer.timestamp + timestampStep) >>> 0;
    const extensions: { id: number; payload: Buffer }[] = [];
    for (const ext of entry.transceiver.headerExtensions) {
      if (ext.uri === RTP_EXTENSION_URI.sdesMid) extensions.push({ id: ext.id, payload: Buffer.from(mid) });
      else if (ext.uri === RTP_EXTENSION_URI.sdesRTPStreamID) extensions.push({ id: ext.id, payload: Buffer.from(rid) });
      else if (ext.uri === RTP_EXTENSION_URI.transportWideCC) {
        transport.transportSequenceNumber = (transport.transportSequenceNumber + 1) & 0xffff;
        const seq = Buffer.alloc(2);
        seq.writeUInt16BE(transport.transportSequenceNumber);
        extensions.push({ id: ext.id, payload: seq });
      }
    }
    const header = new RtpHeader({
      payloadType: VP8_PAYLOAD_TYPE, sequenceNumber: layer.sequenceNumber, timestamp: layer.timestamp, ssrc: layer.ssrc, marker,
      extension: extensions.length > 0, extensions: extensions.sort((a, b) => a.id - b.id),
    });
    transport.sendRtp(payload, header).catch(() => undefined);
  }

  /** Picture loss indications the server sent for one simulcast layer of a stream this client sends. */
  layerPliReceived(streamId: number, rid: string): number {
    return this.entry('send', streamId).layers.get(rid)?.plis ?? 0;
  }

  /** Numbers `count` packets of a stream's send track as sent without sending them: a loss on the way to the server. */
  skipRtp(streamId: number, count: number): void {
    const { rtp } = this.entry('send', streamId);
    rtp.sequenceNumber = (rtp.sequenceNumber + count) & 0xffff;
  }

  /** Asks the server again for packets of a stream this client receives (a generic NACK naming the server's SSRC). */
  async sendNack(streamId: number, lost: readonly number[]): Promise<void> {
    const entry = this.entry('recv', streamId);
    if (entry.remoteSsrc === undefined) throw new Error(`no RTP received on stream ${streamId} yet: no SSRC to name`);
    const nack = new GenericNack({ senderSsrc: entry.transceiver.receiver.rtcpSsrc, mediaSourceSsrc: entry.remoteSsrc, lost: [...lost] });
    await entry.transceiver.receiver.dtlsTransport.sendRtcp([new RtcpTransportLayerFeedback({ feedback: nack })]);
  }

  /** The sequence number of the last RTP packet received on a stream's receive m-line. */
  lastReceivedSeq(streamId: number): number | undefined {
    return this.entry('recv', streamId).lastSeq;
  }

  /** Payloads received so far on the receive m-line of a stream (padding-only packets left out). */
  received(streamId: number): Buffer[] {
    return this.entry('recv', streamId).received;
  }

  /** RTP sequence numbers received so far on the receive m-line of a stream, in arrival order. */
  receivedSeqs(streamId: number): number[] {
    return this.entry('recv', streamId).seqs;
  }

  /** Media packets received so far on the receive m-line of a stream (kept or not; padding-only packets left out). */
  receivedCount(streamId: number): number {
    return this.entry('recv', streamId).count;
  }

  /** Waits until at least `count` payloads arrived on the receive m-line of a stream. */
  async waitForRtp(streamId: number, count: number, timeoutMs = WAIT_MS): Promise<Buffer[]> {
    const received = this.received(streamId);
    await waitFor(() => received.length >= count, `${count} RTP packets of stream ${streamId} (have ${received.length})`, timeoutMs);
    return received;
  }

  /** Picture loss indications the server sent for a stream this client sends. */
  pliReceived(streamId: number): number {
    return this.entry('send', streamId).plis;
  }

  async waitForPli(streamId: number, count: number, timeoutMs = WAIT_MS): Promise<void> {
    await waitFor(() => this.pliReceived(streamId) >= count, `${count} PLIs for stream ${streamId}`, timeoutMs);
  }

  /** Asks the server for a key frame of a stream this client receives (a PLI naming the server's SSRC). */
  async sendPli(streamId: number): Promise<void> {
    const entry = this.entry('recv', streamId);
    if (entry.remoteSsrc === undefined) throw new Error(`no RTP received on stream ${streamId} yet: no SSRC to name`);
    await entry.transceiver.receiver.sendRtcpPLI(entry.remoteSsrc);
  }

  async waitConnected(timeoutMs = WAIT_MS): Promise<void> {
    await waitFor(() => {
      if (this.pc.connectionState === 'failed' || this.pc.connectionState === 'closed') {
        throw new Error(`peer connection ${this.pc.connectionState}`);
      }
      return this.pc.connectionState === 'connected';
    }, 'the peer connection to connect', timeoutMs);
  }

  /**
   * Sends `ping` every `intervalMs` until the returned function is called: a joined session that
   * sends nothing on its WebSocket for 45 s is closed, whatever media flows (docs/protocol/media.md,
   * section 6.1).
   */
  keepAlive(intervalMs = KEEPALIVE_MS): () => void {
    const timer = setInterval(() => {
      if (this.closeInfo === undefined) this.wire.sendControl({ type: 'ping' });
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Resolves with the close code once the media WebSocket closed. */
  closed(): Promise<WireCloseInfo> {
    return this.wire.closed;
  }

  async close(): Promise<void> {
    await this.pc.close().catch(() => undefined);
    if (this.closeInfo === undefined) {
      this.wire.close();
      await this.wire.closed;
    }
  }

  /** Counts, per layer, the PLIs naming a layer's SSRC: werift knows nothing of these SSRCs, so they are read off the transport. */
  private countLayerPlis(entry: Entry): void {
    let watched: unknown;
    const watch = (): void => {
      const transport = this.pc.dtlsTransports[0];
      if (!transport || transport === watched) return;
      watched = transport;
      transport.onRtcp.subscribe((packet) => {
        const ssrc = pliMediaSsrc(packet);
        for (const layer of entry.layers.values()) if (layer.ssrc === ssrc) layer.plis += 1;
      });
    };
    watch();
    this.pc.connectionStateChange.subscribe(watch);
  }

  private entry(direction: RtcDirection, streamId: number): Entry {
    const entry = this.entries.get(entryKey(direction, streamId));
    if (!entry) throw new Error(`no ${direction} m-line for stream ${streamId}`);
    return entry;
  }

  private addEntry(spec: RtcTrackSpec): Entry {
    const track = spec.direction === 'send' ? new MediaStreamTrack({ kind: spec.kind }) : undefined;
    const transceiver = track
      ? this.pc.addTransceiver(track, {
        direction: 'sendonly', ...(spec.rids ? { simulcast: spec.rids.map((rid) => ({ direction: 'send' as const, rid })) } : {}),
      })
      : this.pc.addTransceiver(spec.kind, { direction: 'recvonly' });
    const entry: Entry = {
      spec, transceiver, track,
      rtp: { ssrc: randomInt(1, 2 ** 32 - 1), sequenceNumber: randomInt(0, 0xffff), timestamp: randomInt(0, 2 ** 32 - 1) },
      received: [], count: 0, seqs: [], remoteSsrc: undefined, lastSeq: undefined, plis: 0, layers: new Map(),
    };
    for (const rid of spec.rids ?? []) {
      entry.layers.set(rid, { ssrc: randomInt(1, 2 ** 32 - 1), sequenceNumber: randomInt(0, 0xffff), timestamp: entry.rtp.timestamp, plis: 0 });
    }
    if (spec.direction === 'recv') {
      // werift announces the remote track while it applies the answer: listen before
      transceiver.onTrack.subscribe((remote) => {
        remote.onReceiveRtp.subscribe((packet) => {
          entry.remoteSsrc = packet.header.ssrc;
          entry.lastSeq = packet.header.sequenceNumber;
          this.onRtp?.(spec.streamId, packet);
          // padding alone (the server probing the path) carries no media: kept and counted are media packets
          if (packet.payload.length === 0 && packet.header.padding) return;
          entry.count += 1;
          if (this.keepPayloads) {
            entry.received.push(Buffer.from(packet.payload));
            entry.seqs.push(packet.header.sequenceNumber);
          }
        });
      });
    } else {
      // werift routes a PLI by its sender SSRC first, then by its media SSRC: it reaches either the
      // receiver or the sender of this transceiver, never both
      const count = (packet: RtcpPacket): void => {
        if (isPli(packet)) entry.plis += 1;
      };
      transceiver.receiver.onRtcp.subscribe(count);
      transceiver.sender.onRtcp.subscribe(count);
      if (entry.layers.size > 0) this.countLayerPlis(entry);
    }
    return entry;
  }
}

function entryKey(direction: RtcDirection, streamId: number): string {
  return `${direction}:${streamId}`;
}

/** The server answered an offer with `error`. */
export class RtcOfferError extends Error {
  readonly code: string;
  readonly reply: Control;

  constructor(reply: Control) {
    super(`rtc_offer refused: ${String(reply['code'])} ${String(reply['message'])}`);
    this.code = String(reply['code']);
    this.reply = reply;
  }
}
