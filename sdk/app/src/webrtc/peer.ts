/**
 * The session's WebRTC peer connection (docs/protocol/media.md, "WebRTC media"): one per joined
 * media connection, negotiated with sealed `rtc_offer`/`rtc_answer` messages, the client always
 * offering. Each audio or video m-line is a slot bound to one stream id, sending a local track or
 * receiving a remote stream, with the frame encryption of the encryption worker on it.
 */
import type { RtcTrack } from '@rtc/protocol';
import { MediaError } from '../errors.ts';
import {
  browserWebRtc, type IceCandidateEventLike, type IceServer, type IceTransportPolicy, type MediaStreamTrackLike, type MediaTrackKind,
  type PeerConfiguration, type PeerConnectionLike, type RtpEncodingLike, type RtpSenderLike, type RtpTransceiverLike, type StatsReportLike,
} from './dom.ts';
import { E2eeWorker, e2eeWorkerSource, type E2eeStats, type TransformOptions, type WorkerCommand } from './e2ee-worker.ts';
import type { SendPlan } from './publish-plan.ts';

/** What the peer asks of its session. */
export interface PeerHost {
  /** Sends `rtc_offer` on the sealed connection; resolves with the reply. */
  offer(sdp: string, tracks: readonly RtcTrack[]): Promise<{ readonly sdp: string; readonly refused: readonly string[] }>;
  onTrack(slot: ReceiveSlot): void;
  onTrackEnded(slot: ReceiveSlot): void;
  onSendRefused(streamId: number): void;
  onQuality(quality: QualityReport): void;
  onState(state: string): void;
}

export interface PeerSettings {
  readonly iceServers: readonly IceServer[];
  readonly iceTransportPolicy: IceTransportPolicy;
  /** How long to wait for ICE gathering before offering what is gathered (ms). */
  readonly gatheringTimeoutMs: number;
  /**
   * Quiet time after the last usable candidate before offering without waiting for gathering to
   * complete (ms): see `gathered`.
   */
  readonly candidateSettleMs: number;
  readonly qualityIntervalMs: number;
  /**
   * Where this peer connection's frame numbering starts under a key: each fresh peer connection of
   * a media connection starts past the previous one's, so no sequence number repeats under a key.
   */
  readonly seqBase: number;
  /** Whether the server takes simulcast, when an earlier peer connection of the media connection learned it. */
  readonly simulcast?: boolean | undefined;
}

/** How well media flows now, from the peer connection's statistics. */
export interface QualityReport {
  readonly quality: 'excellent' | 'good' | 'poor' | 'lost';
  /** Round-trip time to the media server, ms (undefined before the first measurement). */
  readonly rttMs: number | undefined;
  /** Share of packets lost among those expected from the server since the last report, 0 to 1. */
  readonly packetLoss: number;
}

interface Slot {
  readonly index: number;
  readonly kind: MediaTrackKind;
  readonly direction: 'send' | 'recv';
  readonly transceiver: RtpTransceiverLike;
  streamId: number | undefined;
  /** A send slot's simulcast layers, smallest first (none: one layer). */
  layers?: readonly RtpEncodingLike[];
}

export interface ReceiveSlot {
  readonly streamId: number;
  readonly kind: MediaTrackKind;
  readonly track: MediaStreamTrackLike;
}

/** Whether this environment can carry audio and video (a browser with encoded transforms). */
export function webRtcAvailable(): boolean {
  const web = browserWebRtc();
  const transforms = typeof web.RTCRtpScriptTransform === 'function'
    || typeof (web.RTCRtpSender as { prototype?: { createEncodedStreams?: unknown } } | undefined)?.prototype?.createEncodedStreams === 'function';
  return typeof web.RTCPeerConnection === 'function' && typeof web.Worker === 'function' && typeof web.Blob === 'function' && transforms;
}

const ICE_RESTART_AFTER_MS = 2000;

export class Peer {
  private readonly host: PeerHost;
  private settings: PeerSettings;
  private pc: PeerConnectionLike | undefined;
  private worker: E2eeWorker | undefined;
  private scriptTransform = false;
  private readonly slots: Slot[] = [];
  /** Recv slots whose track was announced to the application, by stream id. */
  private readonly announced = new Map<number, Slot>();
  /** Keys given before the worker existed, replayed to it; the last two per stream and direction. */
  private readonly keyLog: WorkerCommand[] = [];
  private negotiating: Promise<void> = Promise.resolve();
  private dirty = false;
  private restartIce = false;
  private closed = false;
  private qualityTimer: ReturnType<typeof setInterval> | undefined;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private lastCounts = { received: 0, lost: 0 };
  /** Whether the server takes simulcast (`takesSimulcast`); undefined until an answer with a video m-line told. */
  private simulcastCapable: boolean | undefined;
  /** The m-line that asked whether the server takes simulcast, until a video takes it over. */
  private question: Slot | undefined;
  /** Candidates of the current ICE gathering that can carry media, and when the last one came. */
  private usable = { count: 0, at: 0 };
  private readonly candidateWaiters = new Set<() => void>();

  constructor(host: PeerHost, settings: PeerSettings) {
    this.host = host;
    this.settings = settings;
    this.simulcastCapable = settings.simulcast;
  }

  /** Whether the server takes simulcast, as far as its answers told (undefined: not yet known). */
  get simulcast(): boolean | undefined {
    return this.simulcastCapable;
  }

  /** New ICE servers (a renewed token's TURN credentials), used from the next ICE gathering on. */
  updateIceServers(iceServers: readonly IceServer[]): void {
    this.settings = { ...this.settings, iceServers };
    this.pc?.setConfiguration(this.configuration());
  }

  /**
   * Makes the peer connection now, before there is anything to negotiate: it starts gathering ICE
   * candidates at once (its candidate pool), so that the first offer finds them ready.
   */
  warm(): void {
    this.connection();
  }

  /**
   * Starts sending a track as `streamId` (already published with `publish`), with the plan's
   * simulcast layers when the server takes simulcast, else as one layer: the largest. Every stream
   * gets an m-line of its own: a browser and werift do not agree on an m-line brought back from
   * inactive. Every layer goes through the sender's one frame transform.
   */
  async send(streamId: number, track: MediaStreamTrackLike, plan: SendPlan): Promise<void> {
    let layers = plan.encodings;
    if (layers && layers.length > 1 && !(await this.takesSimulcast())) layers = [oneLayer(layers[layers.length - 1]!)];
    const pc = this.connection();
    if (plan.contentHint !== undefined && !track.contentHint) track.contentHint = plan.contentHint;
    const question = this.question;
    if (question && kindOf(track) === 'video' && (!layers || layers.length === 1)) {
      // one layer: the m-line that asked whether the server takes simulcast carries it (one m-line fewer)
      this.question = undefined;
      question.streamId = streamId;
      this.bind(question);
      await question.transceiver.sender.replaceTrack(track);
      void tuneSender(question.transceiver.sender, { layer: layers?.[0], degradationPreference: plan.degradationPreference });
      return this.renegotiate();
    }
    let transceiver: RtpTransceiverLike;
    try {
      transceiver = pc.addTransceiver(track, { direction: 'sendonly', ...(layers ? { sendEncodings: layers } : {}) });
    } catch (err) {
      // a browser that refuses these encodings sends one layer of its own
      if (!layers) throw err;
      layers = undefined;
      transceiver = pc.addTransceiver(track, { direction: 'sendonly' });
    }
    const slot = this.addSlot(transceiver, kindOf(track), 'send', streamId);
    if (layers && layers.length > 1) slot.layers = layers;
    this.protect(slot, 'encrypt');
    if (plan.degradationPreference) void tuneSender(transceiver.sender, { degradationPreference: plan.degradationPreference });
    return this.renegotiate();
  }

  /**
   * Whether the server takes simulcast. A sender with rids poisons the peer connection with a
   * server that does not negotiate the RID header extension (the browser refuses the answer, and
   * every later offer), so the SDK offers simulcast only once an answer showed the extension on a
   * video m-line. When no answer told yet, an m-line shaped like a one-layer camera (sending video,
   * without a track so without RTP, and left out of `tracks`) asks the question first; werift
   * mishandles a receiving m-line left out of `tracks`. The next one-layer video sent takes that
   * m-line over; its frame transform is in place from the start.
   */
  private async takesSimulcast(): Promise<boolean> {
    if (this.simulcastCapable !== undefined) return this.simulcastCapable;
    if (!this.slots.some((s) => s.kind === 'video' && s.direction === 'send')) {
      const question = this.addSlot(this.connection().addTransceiver('video', { direction: 'sendonly' }), 'video', 'send', undefined);
      this.protect(question, 'encrypt');
      this.question = question;
      void this.renegotiate().catch(() => undefined);
    }
    await this.negotiating.catch(() => undefined);
    return this.simulcastCapable ?? false;
  }

  /** A slot whose frames cannot be protected is never negotiated: it carries nothing. */
  private abandon(slot: Slot): void {
    slot.streamId = undefined;
    slot.transceiver.direction = 'inactive';
    slot.transceiver.sender.replaceTrack(null).catch(() => undefined);
  }

  /** Characters of the last offer (the server takes at most MAX_SDP_CHARS). */
  offerChars = 0;

  /** How many m-lines the peer connection has (the server takes at most 64). */
  get mlines(): number {
    return this.slots.length;
  }

  /** Swaps the track of a sending stream (camera to screen, say) without renegotiation. */
  async replace(streamId: number, track: MediaStreamTrackLike): Promise<void> {
    const slot = this.slots.find((s) => s.direction === 'send' && s.streamId === streamId);
    if (!slot) throw new MediaError('not_published', 'this stream is not sent');
    if (kindOf(track) !== slot.kind) throw new TypeError(`the track must be ${slot.kind}`);
    await slot.transceiver.sender.replaceTrack(track);
  }

  /** Stops sending a stream; its m-line stays, inactive. */
  async stopSending(streamId: number): Promise<void> {
    const slot = this.slots.find((s) => s.direction === 'send' && s.streamId === streamId);
    if (!slot) return;
    slot.streamId = undefined;
    this.bind(slot);
    this.post({ op: 'forget', streamId });
    slot.transceiver.direction = 'inactive';
    await slot.transceiver.sender.replaceTrack(null).catch(() => undefined);
    await this.renegotiate();
  }

  /** Starts receiving a stream the session may receive. */
  receive(streamId: number, kind: MediaTrackKind): Promise<void> {
    if (this.receives(streamId)) return this.negotiating;
    const slot = this.addSlot(this.connection().addTransceiver(kind, { direction: 'recvonly' }), kind, 'recv', streamId);
    this.protect(slot, 'decrypt');
    return this.renegotiate();
  }

  /** Whether a stream is received now. */
  receives(streamId: number): boolean {
    return this.slots.some((s) => s.direction === 'recv' && s.streamId === streamId);
  }

  /** Stops receiving a stream (removed, or no longer allowed). */
  stopReceiving(streamId: number): Promise<void> {
    const slot = this.slots.find((s) => s.direction === 'recv' && s.streamId === streamId);
    if (!slot) return this.negotiating;
    this.release(slot);
    return this.renegotiate();
  }

  /** A stream key: `own` for a stream this session sends, else for one it receives. */
  key(streamId: number, epoch: number, key: unknown, own: boolean): void {
    const command: WorkerCommand = { op: 'key', streamId, epoch, key, own, seqBase: this.settings.seqBase };
    if (this.worker) {
      this.worker.post(command);
      return;
    }
    this.keyLog.push(command);
    const same = this.keyLog.filter((c) => c.op === 'key' && c.streamId === streamId && c.own === own);
    if (same.length > 2) this.keyLog.splice(this.keyLog.indexOf(same[0]!), 1);
  }

  forget(streamId: number): void {
    this.post({ op: 'forget', streamId });
    for (let i = this.keyLog.length - 1; i >= 0; i--) {
      const c = this.keyLog[i]!;
      if (c.op === 'key' && c.streamId === streamId) this.keyLog.splice(i, 1);
    }
  }

  /** Frame counters of the encryption worker. */
  stats(): Promise<E2eeStats> {
    return this.worker?.stats() ?? Promise.resolve({ encrypted: 0, decrypted: 0, dropped: 0 });
  }

  /** The peer connection's own statistics (`RTCPeerConnection.getStats`). */
  rtcStats(): Promise<StatsReportLike | undefined> {
    return this.pc?.getStats() ?? Promise.resolve(undefined);
  }

  /** Ends the peer connection and every remote track. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.qualityTimer);
    clearTimeout(this.restartTimer);
    for (const slot of this.slots) if (slot.direction === 'recv' && slot.streamId !== undefined) this.release(slot);
    this.pc?.close();
    this.worker?.terminate();
    this.host.onState('closed');
  }

  private connection(): PeerConnectionLike {
    if (this.closed) throw new MediaError('closed', 'the session is closed');
    if (this.pc) return this.pc;
    const web = browserWebRtc();
    if (!webRtcAvailable()) throw new MediaError('rtc_unavailable', 'this environment has no WebRTC (RTCPeerConnection and Worker)');
    this.scriptTransform = typeof web.RTCRtpScriptTransform === 'function';
    const pc = new web.RTCPeerConnection!(this.configuration());
    const url = web.URL.createObjectURL!(new web.Blob!([e2eeWorkerSource()], { type: 'text/javascript' }));
    this.worker = new E2eeWorker(new web.Worker!(url, { name: 'rtc-e2ee' }));
    web.URL.revokeObjectURL?.(url);
    for (const command of this.keyLog.splice(0)) this.worker.post(command);
    pc.addEventListener('connectionstatechange', () => this.onConnectionState());
    pc.addEventListener('icecandidate', (event) => this.onCandidate(event));
    this.pc = pc;
    this.qualityTimer = setInterval(() => void this.measure(), this.settings.qualityIntervalMs);
    return pc;
  }

  private configuration(): PeerConfiguration {
    return {
      iceServers: this.settings.iceServers,
      iceTransportPolicy: this.settings.iceTransportPolicy,
      bundlePolicy: 'max-bundle',
      rtcpMuxPolicy: 'require',
      // gathering starts when the connection is made, while the media connection still joins
      iceCandidatePoolSize: 1,
      // Chromium without RTCRtpScriptTransform gives encoded frames only to a connection made for it
      ...(this.scriptTransform ? {} : { encodedInsertableStreams: true }),
    };
  }

  private addSlot(transceiver: RtpTransceiverLike, kind: MediaTrackKind, direction: 'send' | 'recv', streamId: number | undefined): Slot {
    preferServerCodecs(transceiver, kind);
    const slot: Slot = { index: this.slots.length, kind, direction, transceiver, streamId };
    this.slots.push(slot);
    this.bind(slot);
    return slot;
  }

  private bind(slot: Slot): void {
    this.post({ op: 'bind', slot: slot.index, streamId: slot.streamId });
  }

  private post(command: WorkerCommand, transfer: readonly unknown[] = []): void {
    this.worker?.post(command, transfer);
  }

  /** Puts the encryption worker on a slot's frames: never a frame in the clear, either way. */
  private protect(slot: Slot, role: TransformOptions['role']): void {
    const options: TransformOptions = { slot: slot.index, role, kind: slot.kind };
    const end = role === 'encrypt' ? slot.transceiver.sender : slot.transceiver.receiver;
    const web = browserWebRtc();
    if (web.RTCRtpScriptTransform && this.worker) {
      end.transform = new web.RTCRtpScriptTransform(this.worker.worker, options);
      return;
    }
    if (typeof end.createEncodedStreams !== 'function') {
      this.abandon(slot);
      throw new MediaError('rtc_unavailable', 'this browser has no encoded transforms: media cannot be encrypted end to end');
    }
    const { readable, writable } = end.createEncodedStreams();
    this.post({ op: 'streams', options, readable, writable }, [readable, writable]);
  }

  private release(slot: Slot): void {
    const streamId = slot.streamId;
    slot.streamId = undefined;
    this.bind(slot);
    if (!this.closed) slot.transceiver.direction = 'inactive';
    if (streamId !== undefined && this.announced.get(streamId) === slot) {
      this.announced.delete(streamId);
      this.host.onTrackEnded({ streamId, kind: slot.kind, track: slot.transceiver.receiver.track });
    }
  }

  /**
   * Queues a negotiation; changes made while one runs are covered by the next. A negotiation that
   * failed (its caller got the error) does not stop the next one.
   */
  private renegotiate(): Promise<void> {
    this.dirty = true;
    this.negotiating = this.negotiating.catch(() => undefined).then(() => (this.dirty && !this.closed ? this.negotiate() : undefined));
    return this.negotiating;
  }

  private async negotiate(): Promise<void> {
    this.dirty = false;
    const pc = this.connection();
    const iceRestart = this.restartIce;
    this.restartIce = false;
    const offer = await pc.createOffer(iceRestart ? { iceRestart: true } : {});
    // an ICE restart gathers afresh: only its own candidates count
    if (iceRestart) this.usable = { count: 0, at: 0 };
    await pc.setLocalDescription(offer);
    await this.gathered(pc);
    const sdp = pc.localDescription?.sdp;
    if (sdp === undefined || this.closed) return;
    this.offerChars = sdp.length;
    const tracks: RtcTrack[] = [];
    const inOffer = new Map<string, Slot>();
    for (const slot of this.slots) {
      const mid = slot.transceiver.mid;
      if (mid === null || slot.streamId === undefined) continue;
      inOffer.set(mid, slot);
      tracks.push({ mid, stream_id: slot.streamId, direction: slot.direction });
    }
    const answer = await this.host.offer(sdp, tracks);
    if (this.closed) return;
    await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    const video = readVideoAnswer(answer.sdp);
    // any video m-line with the RID extension says yes; a sending one without it (a camera, the question) says no
    const sendingVideo = this.slots.filter((s) => s.kind === 'video' && s.direction === 'send').map((s) => s.transceiver.mid);
    if ([...video.m.values()].some((m) => m.rid)) this.simulcastCapable = true;
    else if (sendingVideo.some((mid) => mid !== null && video.m.has(mid))) this.simulcastCapable ??= false;
    for (const [mid, slot] of inOffer) {
      // an m-line whose answer declined simulcast sends the first layer only: make it the largest
      if (!slot.layers || video.m.get(mid)?.simulcast === true) continue;
      const largest = slot.layers[slot.layers.length - 1]!;
      slot.layers = undefined;
      void tuneSender(slot.transceiver.sender, { layer: largest });
    }
    const refused = new Set(answer.refused);
    for (const [mid, slot] of inOffer) {
      const streamId = slot.streamId;
      if (streamId === undefined) continue;
      if (refused.has(mid)) {
        if (slot.direction === 'send') this.host.onSendRefused(streamId);
        continue;
      }
      if (slot.direction === 'recv' && this.announced.get(streamId) !== slot) {
        this.announced.set(streamId, slot);
        this.host.onTrack({ streamId, kind: slot.kind, track: slot.transceiver.receiver.track });
      }
    }
  }

  /**
   * Waits until the offer may go out (the server does not trickle: it has the candidates of the
   * offer, docs/protocol/media.md, 10.1): when gathering is complete, or once a usable candidate came
   * and no other one for `candidateSettleMs`, or after `gatheringTimeoutMs` in any case.
   *
   * Usable is a UDP candidate (the server speaks UDP only, so TCP candidates, which Chromium gathers
   * about 100 ms after the UDP ones, never are), and with the `relay` policy only a relay candidate.
   * With the `all` policy the host candidates suffice: every candidate gathered later (server
   * reflexive, or TURN relay when the network blocks direct UDP) still sends connectivity checks,
   * from which the server learns it as a peer reflexive candidate (RFC 8445, 7.3.1.3).
   */
  private gathered(pc: PeerConnectionLike): Promise<void> {
    const ready = (): boolean => pc.iceGatheringState === 'complete'
      || (this.usable.count > 0 && Date.now() - this.usable.at >= this.settings.candidateSettleMs);
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      let settle: ReturnType<typeof setTimeout> | undefined;
      const check = (): void => {
        clearTimeout(settle);
        if (!ready()) {
          if (this.usable.count > 0) settle = setTimeout(check, Math.max(0, this.usable.at + this.settings.candidateSettleMs - Date.now()));
          return;
        }
        done();
      };
      const done = (): void => {
        clearTimeout(settle);
        clearTimeout(limit);
        pc.removeEventListener('icegatheringstatechange', check);
        this.candidateWaiters.delete(check);
        resolve();
      };
      const limit = setTimeout(done, this.settings.gatheringTimeoutMs);
      pc.addEventListener('icegatheringstatechange', check);
      this.candidateWaiters.add(check);
      check();
    });
  }

  private onCandidate(event: IceCandidateEventLike): void {
    const line = event.candidate?.candidate;
    if (!line) return;
    const candidate = parseCandidate(line);
    if (!candidate || candidate.protocol !== 'udp' || (this.settings.iceTransportPolicy === 'relay' && candidate.type !== 'relay')) return;
    this.usable = { count: this.usable.count + 1, at: Date.now() };
    for (const check of [...this.candidateWaiters]) check();
  }

  private onConnectionState(): void {
    const state = this.pc?.connectionState ?? 'closed';
    this.host.onState(state);
    clearTimeout(this.restartTimer);
    if (this.closed) return;
    if (state === 'failed') {
      this.iceRestart();
    } else if (state === 'disconnected') {
      // often back on its own within a second or two; otherwise a new path is negotiated
      this.restartTimer = setTimeout(() => this.iceRestart(), ICE_RESTART_AFTER_MS);
    }
  }

  private iceRestart(): void {
    if (this.closed) return;
    this.restartIce = true;
    this.renegotiate().catch(() => undefined);
  }

  private async measure(): Promise<void> {
    const report = await this.pc?.getStats().catch(() => undefined);
    if (!report || this.closed) return;
    let rttMs: number | undefined;
    let received = 0;
    let lost = 0;
    report.forEach((stat) => {
      if (stat['type'] === 'candidate-pair' && stat['nominated'] === true && typeof stat['currentRoundTripTime'] === 'number') {
        rttMs = stat['currentRoundTripTime'] * 1000;
      }
      if (stat['type'] === 'inbound-rtp') {
        received += typeof stat['packetsReceived'] === 'number' ? stat['packetsReceived'] : 0;
        lost += typeof stat['packetsLost'] === 'number' ? stat['packetsLost'] : 0;
      }
    });
    const newReceived = Math.max(0, received - this.lastCounts.received);
    const newLost = Math.max(0, lost - this.lastCounts.lost);
    this.lastCounts = { received, lost };
    const packetLoss = newReceived + newLost === 0 ? 0 : newLost / (newReceived + newLost);
    this.host.onQuality({ quality: qualityOf(this.pc?.connectionState ?? 'closed', rttMs, packetLoss), rttMs, packetLoss });
  }
}

function qualityOf(state: string, rttMs: number | undefined, loss: number): QualityReport['quality'] {
  if (state !== 'connected') return 'lost';
  if (loss > 0.1 || (rttMs ?? 0) > 400) return 'poor';
  if (loss > 0.02 || (rttMs ?? 0) > 150) return 'good';
  return 'excellent';
}

/** The transport protocol and type of an `a=candidate` line (RFC 8839, 5.1). */
export function parseCandidate(line: string): { readonly protocol: string; readonly type: string } | undefined {
  const fields = line.replace(/^a=/, '').replace(/^candidate:/, '').trim().split(/\s+/);
  const typ = fields.indexOf('typ');
  const protocol = fields[2];
  const type = typ > 0 ? fields[typ + 1] : undefined;
  return protocol !== undefined && type !== undefined ? { protocol: protocol.toLowerCase(), type } : undefined;
}

const RID_EXTENSION = /^a=extmap:\d+(\/\w+)? urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id(\s|$)/;

/**
 * The video m-lines of an answer (those not rejected), by mid: whether each negotiates the RID
 * header extension (RFC 8852), which simulcast needs to tell layers apart, and takes simulcast.
 */
export function readVideoAnswer(sdp: string): { readonly m: ReadonlyMap<string, { readonly rid: boolean; readonly simulcast: boolean }> } {
  const m = new Map<string, { readonly rid: boolean; readonly simulcast: boolean }>();
  for (const section of sdp.split(/\r?\n(?=m=)/)) {
    const lines = section.split(/\r?\n/);
    const media = /^m=(\w+) (\d+)/.exec(lines[0] ?? '');
    const mid = lines.find((l) => l.startsWith('a=mid:'))?.slice('a=mid:'.length).trim();
    if (!media || media[1] !== 'video' || media[2] === '0' || mid === undefined) continue;
    const rid = lines.some((l) => RID_EXTENSION.test(l));
    m.set(mid, { rid, simulcast: rid && lines.some((l) => l.startsWith('a=simulcast:')) });
  }
  return { m };
}

/** The largest layer alone: no rid, its size and caps. */
function oneLayer(largest: RtpEncodingLike): RtpEncodingLike {
  const layer: RtpEncodingLike = {};
  if (largest.scaleResolutionDownBy !== undefined) layer.scaleResolutionDownBy = largest.scaleResolutionDownBy;
  if (largest.maxBitrate !== undefined) layer.maxBitrate = largest.maxBitrate;
  if (largest.maxFramerate !== undefined) layer.maxFramerate = largest.maxFramerate;
  return layer;
}

/**
 * Sets a sender's parameters in one change (the browser takes one `setParameters` per
 * `getParameters`): the size and caps of `layer` on its first encoding, for a one-layer video or one
 * whose answer declined simulcast (the browser then keeps the first encoding, the smallest layer;
 * it becomes the largest one instead, so that the single layer sent is the best); and a screen's
 * degradation preference, to keep its resolution when bandwidth drops (frames go first).
 */
async function tuneSender(sender: RtpSenderLike, tuning: {
  readonly layer?: RtpEncodingLike | undefined; readonly degradationPreference?: 'maintain-resolution' | undefined;
}): Promise<void> {
  const { layer, degradationPreference } = tuning;
  if ((!layer && !degradationPreference) || typeof sender.getParameters !== 'function' || typeof sender.setParameters !== 'function') return;
  try {
    const parameters = sender.getParameters();
    const [first] = parameters.encodings;
    if (layer && first) {
      if (layer.scaleResolutionDownBy !== undefined) first.scaleResolutionDownBy = layer.scaleResolutionDownBy;
      if (layer.maxBitrate !== undefined) first.maxBitrate = layer.maxBitrate;
      if (layer.maxFramerate !== undefined) first.maxFramerate = layer.maxFramerate;
    }
    if (degradationPreference) parameters.degradationPreference = degradationPreference;
    await sender.setParameters(parameters);
  } catch {
    // an older browser: its own defaults
  }
}

/** The codecs the server negotiates (docs/protocol/media.md, 10.3), and the retransmission format of VP8. */
const SERVER_CODECS: Readonly<Record<MediaTrackKind, readonly string[]>> = { audio: ['audio/opus'], video: ['video/vp8', 'video/rtx'] };

/**
 * Offers only what the server takes: every other codec (VP9, H.264, AV1, RED, FEC...) would be
 * refused anyway, and costs some 2 KB of SDP per video m-line; m-lines accumulate (one per stream)
 * and an offer must fit in 60,000 characters.
 */
function preferServerCodecs(transceiver: RtpTransceiverLike, kind: MediaTrackKind): void {
  const capabilities = browserWebRtc().RTCRtpReceiver?.getCapabilities?.(kind);
  if (!capabilities || typeof transceiver.setCodecPreferences !== 'function') return;
  const codecs = capabilities.codecs.filter((c) => SERVER_CODECS[kind].includes(c.mimeType.toLowerCase()));
  if (!codecs.some((c) => !c.mimeType.toLowerCase().endsWith('/rtx'))) return;
  try {
    transceiver.setCodecPreferences(codecs);
  } catch {
    // the browser's own list: larger offers, same answer
  }
}

function kindOf(track: MediaStreamTrackLike): MediaTrackKind {
  if (track.kind !== 'audio' && track.kind !== 'video') throw new TypeError('the track must be an audio or video MediaStreamTrack');
  return track.kind;
}
