/**
 * The session's WebRTC peer connection (docs/protocol/media.md, "WebRTC media"): one per joined
 * media connection, negotiated with sealed `rtc_offer`/`rtc_answer` messages, the client always
 * offering. Each audio or video m-line is a slot bound to one stream id, sending a local track or
 * receiving a remote stream, with the frame encryption of the encryption worker on it.
 */
import type { RtcTrack } from '@rtc/protocol';
import { MediaError } from '../errors.ts';
import {
  browserWebRtc, type IceServer, type MediaStreamTrackLike, type MediaTrackKind, type PeerConfiguration, type PeerConnectionLike,
  type RtpEncodingLike, type RtpTransceiverLike, type StatsReportLike,
} from './dom.ts';
import { E2eeWorker, e2eeWorkerSource, type E2eeStats, type TransformOptions, type WorkerCommand } from './e2ee-worker.ts';
import { CandidateWait, type GatheringSettings } from './gathering.ts';
import type { SendPlan } from './publish-plan.ts';
import { QualityMeter, type QualityReport } from './quality.ts';
import { kindOf, oneLayer, preferServerCodecs, setLayersActive, tuneSender } from './sender.ts';
import { SimulcastAnswers } from './simulcast.ts';

export type { QualityReport };

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

export interface PeerSettings extends GatheringSettings {
  readonly iceServers: readonly IceServer[];
  readonly qualityIntervalMs: number;
  /**
   * Where this peer connection's frame numbering starts under a key: each fresh peer connection of
   * a media connection starts past the previous one's, so no sequence number repeats under a key.
   */
  readonly seqBase: number;
  /** Whether the server takes simulcast, when an earlier peer connection of the media connection learned it. */
  readonly simulcast?: boolean | undefined;
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
  private readonly quality = new QualityMeter();
  /** Settle the `getStats()` calls in flight when the peer connection closes: Firefox's never would. */
  private readonly statsInFlight = new Set<() => void>();
  /** Whether the server takes simulcast (`takesSimulcast`), as the answers told. */
  private readonly simulcastAnswers: SimulcastAnswers;
  /** The m-line that asked whether the server takes simulcast, until a video takes it over. */
  private question: Slot | undefined;
  private readonly candidates = new CandidateWait(() => this.settings);

  constructor(host: PeerHost, settings: PeerSettings) {
    this.host = host;
    this.settings = settings;
    this.simulcastAnswers = new SimulcastAnswers(settings.simulcast);
  }

  /** Whether the server takes simulcast, as far as its answers told (undefined: not yet known). */
  get simulcast(): boolean | undefined {
    return this.simulcastAnswers.capable;
  }

  /** New ICE servers (a renewed token's TURN credentials), used from the next ICE gathering on. */
  updateIceServers(iceServers: readonly IceServer[]): void {
    this.settings = { ...this.settings, iceServers };
    this.pc?.setConfiguration(this.configuration());
  }

  /** Makes the peer connection now, before there is anything to negotiate: its ICE candidates gather at once (its pool), ready for the first offer. */
  warm(): void {
    this.connection();
  }

  /**
   * Starts sending a track as `streamId` (already published with `publish`), with the plan's
   * simulcast layers when the server takes simulcast (or when only layers can ask: Firefox), else
   * as one layer: the largest. Every stream gets an m-line of its own: a browser and werift do not
   * agree on an m-line brought back from inactive. Every layer goes through the sender's one frame
   * transform.
   */
  async send(streamId: number, track: MediaStreamTrackLike, plan: SendPlan): Promise<void> {
    let layers = plan.encodings;
    if (layers && layers.length > 1 && (await this.takesSimulcast()) === false) layers = [oneLayer(layers[layers.length - 1]!)];
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
   * Whether a video goes out as layers (`SimulcastAnswers.layers`, simulcast.ts). When no answer
   * told yet, an m-line shaped like a one-layer camera (sending video, without a track so without
   * RTP, and left out of `tracks`) asks the question first; werift mishandles a receiving m-line
   * left out of `tracks`. The next one-layer video sent takes that m-line over; its frame transform
   * is in place from the start. A browser that offers the RID extension only with rids leaves the
   * question unanswered: the layers ask instead.
   */
  private async takesSimulcast(): Promise<boolean | undefined> {
    if (!this.simulcastAnswers.askable) return this.simulcastAnswers.layers;
    if (!this.slots.some((s) => s.kind === 'video' && s.direction === 'send')) {
      const question = this.addSlot(this.connection().addTransceiver('video', { direction: 'sendonly' }), 'video', 'send', undefined);
      this.protect(question, 'encrypt');
      this.question = question;
      void this.renegotiate().catch(() => undefined);
    }
    await this.negotiating.catch(() => undefined);
    return this.simulcastAnswers.layers;
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

  /** The server's `publish_layers`: the simulcast layers of a sent stream that some subscriber needs; the others rest. */
  restLayers(streamId: number, active: readonly boolean[]): void {
    const slot = this.slots.find((s) => s.direction === 'send' && s.streamId === streamId);
    if (slot?.layers) void setLayersActive(slot.transceiver.sender, active);
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

  /** The peer connection's own statistics (`RTCPeerConnection.getStats`); undefined once it closed. */
  rtcStats(): Promise<StatsReportLike | undefined> {
    const pc = this.pc;
    if (!pc || this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const settle = (report: StatsReportLike | undefined): void => {
        this.statsInFlight.delete(abandon);
        resolve(report);
      };
      const abandon = (): void => settle(undefined);
      this.statsInFlight.add(abandon);
      pc.getStats().then(settle, abandon);
    });
  }

  /** Ends the peer connection and every remote track. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.qualityTimer);
    clearTimeout(this.restartTimer);
    for (const slot of this.slots) if (slot.direction === 'recv' && slot.streamId !== undefined) this.release(slot);
    this.pc?.close();
    for (const abandon of [...this.statsInFlight]) abandon();
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
    pc.addEventListener('icecandidate', (event) => this.candidates.onCandidate(event));
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
    if (iceRestart) this.candidates.restart();
    await pc.setLocalDescription(offer);
    await this.candidates.gathered(pc);
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
    const sendingVideo = this.slots.filter((s) => s.kind === 'video' && s.direction === 'send').map((s) => s.transceiver.mid);
    const video = this.simulcastAnswers.learn(sdp, answer.sdp, sendingVideo);
    for (const [mid, slot] of inOffer) {
      // an m-line whose answer declined simulcast sends the first layer only: make it the largest
      if (!slot.layers || video.get(mid)?.simulcast === true) continue;
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
    const report = await this.rtcStats();
    if (report && !this.closed) this.host.onQuality(this.quality.read(report, this.pc?.connectionState ?? 'closed'));
  }
}
