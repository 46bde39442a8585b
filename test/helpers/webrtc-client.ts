/**
 * A WebRTC test client of the media role (docs/protocol/media.md, "WebRTC media"): the raw media
 * protocol client of the tests and benchmarks (media-wire.ts) for the sealed session, and a werift
 * peer connection for RTP. It sends and receives RTP as given (no frame encryption of section 11:
 * the server forwards payloads without looking at them), so tests can compare bytes.
 */
import { randomBytes, randomInt } from 'node:crypto';
import {
  CipherContext, HashAlgorithm, MediaStreamTrack, NamedCurveAlgorithm, RTCPeerConnection, SignatureAlgorithm, RTCRtpCodecParameters, RtcpPayloadSpecificFeedback, RtpHeader, RtpPacket,
  type DtlsKeys, type PeerConfig, type RTCRtpTransceiver, type RtcpPacket,
} from 'werift';
import { WireClient, type Control, type WireCloseInfo, type WireCredentials } from './media-wire.ts';

export type RtcKind = 'audio' | 'video';
export type RtcDirection = 'send' | 'recv';

export interface RtcTrackSpec {
  readonly streamId: number;
  readonly kind: RtcKind;
  readonly direction: RtcDirection;
}

/** One m-line of `tracks` as the protocol names it. */
export interface RtcOfferTrack {
  readonly mid: string;
  readonly stream_id: number;
  readonly direction: RtcDirection;
}

export const VP8_PAYLOAD_TYPE = 96;
export const OPUS_PAYLOAD_TYPE = 111;

/** Failure bound of every waiter: generous, tests run on a loaded machine. */
export const WAIT_MS = 20_000;

/** VP8 and Opus only, as the server negotiates (docs/protocol/media.md, "Codecs, key frames and ICE"). */
export function testCodecs(): PeerConfig['codecs'] {
  return {
    video: [new RTCRtpCodecParameters({
      mimeType: 'video/VP8', clockRate: 90000, payloadType: VP8_PAYLOAD_TYPE,
      rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }, { type: 'goog-remb' }],
    })],
    audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: OPUS_PAYLOAD_TYPE })],
  };
}

/** A werift peer connection whose only candidate is 127.0.0.1 (werift skips loopback unless told). */
export function createLoopbackPeer(extra: Partial<PeerConfig> = {}): RTCPeerConnection {
  return new RTCPeerConnection({
    codecs: testCodecs(),
    iceServers: [],
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceUseIpv4: false,
    iceUseIpv6: false,
    bundlePolicy: 'max-bundle',
    ...extra,
  });
}

/**
 * A DTLS certificate of its own: werift otherwise gives every peer connection of a process the same
 * one (pass it as `{ dtls: { keys } }`).
 */
export function generateDtlsKeys(): Promise<DtlsKeys> {
  return CipherContext.createSelfSignedCertificateWithKey(
    { signature: SignatureAlgorithm.ecdsa_3, hash: HashAlgorithm.sha256_4 }, NamedCurveAlgorithm.secp256r1_23);
}

/** werift adds a public STUN server even with no ICE servers; unreachable here, it would delay gathering. */
export function clearStun(pc: RTCPeerConnection): void {
  for (const transport of pc.iceTransports) transport.connection.stunServer = undefined;
}

/** Polls `check` until true; rejects after `timeoutMs` (a failure bound, not a delay). */
export async function waitFor(check: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Sets a fresh local offer and resolves with its SDP once ICE gathering is complete (werift does not trickle). */
export async function gatheredOffer(pc: RTCPeerConnection): Promise<string> {
  const offer = await pc.createOffer();
  clearStun(pc);
  await pc.setLocalDescription(offer);
  clearStun(pc);
  await waitFor(() => pc.iceGatheringState === 'complete', 'ICE gathering');
  const sdp = pc.localDescription?.sdp;
  if (!sdp) throw new Error('no local description');
  return sdp;
}

/** The SHA-256 fingerprint line of an SDP. */
export function fingerprintLine(sdp: string): string {
  const line = sdp.split(/\r?\n/).find((l) => l.startsWith('a=fingerprint:sha-256'));
  if (!line) throw new Error('no sha-256 fingerprint in the SDP');
  return line;
}

/** A payload that looks like VP8 to a packetizer: a payload descriptor (S bit, partition 0), then a frame's bytes. */
export function vp8Payload(size: number, keyFrame = false): Buffer {
  const payload = randomBytes(Math.max(size, 4));
  payload[0] = 0x10;
  // VP8 payload header: lowest bit 0 = key frame, 1 = inter frame
  payload[1] = keyFrame ? payload[1]! & 0xfe : payload[1]! | 0x01;
  return payload;
}

/** Whether an RTCP packet is a picture loss indication. */
export function isPli(packet: RtcpPacket): boolean {
  if (packet.type !== RtcpPayloadSpecificFeedback.type) return false;
  const { feedback } = packet;
  return feedback.count === 1 && 'mediaSsrc' in feedback;
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
  /** send: picture loss indications the server sent. */
  plis: number;
}

export interface JoinOptions {
  /** More werift settings (a DTLS certificate of its own, ...). */
  readonly peer?: Partial<PeerConfig>;
  /** Keep every received payload (default); false only counts them (load generation). */
  readonly keepPayloads?: boolean;
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
export class RtcTestClient {
  readonly wire: WireClient;
  readonly pc: RTCPeerConnection;
  /** Close code and reason of the media WebSocket, once closed. */
  closeInfo: WireCloseInfo | undefined;
  private readonly entries = new Map<string, Entry>();
  private readonly keepPayloads: boolean;

  private constructor(wire: WireClient, pc: RTCPeerConnection, keepPayloads: boolean) {
    this.wire = wire;
    this.pc = pc;
    this.keepPayloads = keepPayloads;
    void wire.closed.then((info) => {
      this.closeInfo = info;
    });
  }

  /** Joins with a token's media credentials (the token response, or any object with its `media`). */
  static async join(url: string, token: { readonly media: WireCredentials }, options: JoinOptions = {}): Promise<RtcTestClient> {
    const wire = await WireClient.join(url, token.media);
    return new RtcTestClient(wire, createLoopbackPeer(options.peer), options.keepPayloads ?? true);
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

  /** Writes one RTP packet carrying exactly `payload` on the send track of a stream. */
  sendRtp(streamId: number, payload: Buffer, marker = true): void {
    const entry = this.entry('send', streamId);
    const { rtp } = entry;
    rtp.sequenceNumber = (rtp.sequenceNumber + 1) & 0xffff;
    rtp.timestamp = (rtp.timestamp + (entry.spec.kind === 'video' ? 3000 : 960)) >>> 0;
    const header = new RtpHeader({
      payloadType: entry.spec.kind === 'video' ? VP8_PAYLOAD_TYPE : OPUS_PAYLOAD_TYPE,
      sequenceNumber: rtp.sequenceNumber, timestamp: rtp.timestamp, ssrc: rtp.ssrc, marker,
    });
    // the sender rewrites the header of what it is given: a fresh packet and a copy of the payload each time
    entry.track!.writeRtp(new RtpPacket(header, Buffer.from(payload)));
  }

  /** Payloads received so far on the receive m-line of a stream. */
  received(streamId: number): Buffer[] {
    return this.entry('recv', streamId).received;
  }

  /** RTP sequence numbers received so far on the receive m-line of a stream, in arrival order. */
  receivedSeqs(streamId: number): number[] {
    return this.entry('recv', streamId).seqs;
  }

  /** Packets received so far on the receive m-line of a stream (kept or not). */
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

  private entry(direction: RtcDirection, streamId: number): Entry {
    const entry = this.entries.get(entryKey(direction, streamId));
    if (!entry) throw new Error(`no ${direction} m-line for stream ${streamId}`);
    return entry;
  }

  private addEntry(spec: RtcTrackSpec): Entry {
    const track = spec.direction === 'send' ? new MediaStreamTrack({ kind: spec.kind }) : undefined;
    const transceiver = track
      ? this.pc.addTransceiver(track, { direction: 'sendonly' })
      : this.pc.addTransceiver(spec.kind, { direction: 'recvonly' });
    const entry: Entry = {
      spec, transceiver, track,
      rtp: { ssrc: randomInt(1, 2 ** 32 - 1), sequenceNumber: randomInt(0, 0xffff), timestamp: randomInt(0, 2 ** 32 - 1) },
      received: [], count: 0, seqs: [], remoteSsrc: undefined, plis: 0,
    };
    if (spec.direction === 'recv') {
      // werift announces the remote track while it applies the answer: listen before
      transceiver.onTrack.subscribe((remote) => {
        remote.onReceiveRtp.subscribe((packet) => {
          entry.remoteSsrc = packet.header.ssrc;
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
