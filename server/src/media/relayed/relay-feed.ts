/**
 * The relaying node's end of one stream published on another node (docs/protocol/relay.md): a
 * Stream of the local room fed by the relay instead of a local uplink, so that its local
 * subscribers' down tracks work unchanged. It asks the origin for the layers its down tracks need,
 * passes their key-frame requests on (the stream coalesces them per layer), asks the origin again
 * only for packets that did not cross (each subscriber's NACKs are answered by its own down track's
 * history), and takes the stream's key from the origin, delivered to the local subscribers inside
 * their sealed sessions as for a stream published here.
 */
import { KIND_CODE, REPLAY_WINDOW, ReplayWindow, type MediaKind, type ServerControl } from '@rtc/protocol';
import type { RelayStreamRef } from '../relay/index.ts';
import { NackRequester } from '../rtp/nack-requester.ts';
import type { KeyFrameSource, Member } from '../room/member.ts';
import { Stream } from '../room/stream.ts';
import { unpackRelayedRtp } from './relayed-rtp.ts';

/** What a feed asks of the relay link to the origin. */
export interface RelayFeedLink {
  subscribe(track: number, stream: RelayStreamRef, layers: readonly number[]): boolean;
  unsubscribe(track: number): boolean;
  requestKeyFrame(track: number, layer: number): boolean;
  sendNackMiss(track: number, layer: number, seqs: readonly number[]): boolean;
  requestKeyRotation(track: number): boolean;
}

/** The publisher as the relaying node knows it: from the origin's announcement. */
export interface RemotePublisher {
  readonly participantId: string;
  readonly userId: string;
}

export interface RelayFeedOptions {
  readonly track: number;
  readonly ref: RelayStreamRef;
  readonly kind: MediaKind;
  /** Simulcast layers the origin announced (1 for audio and single-layer video); see setLayerCount. */
  readonly layerCount: number;
  readonly publisher: RemotePublisher;
  readonly link: RelayFeedLink;
  readonly now: () => number;
}

/** Round trip assumed between nodes for NACK retries (ms): nodes of one deployment are close. */
const RELAY_RTT_MS = 20;
const NACK_MAX_AGE_MS = 1_000;
const NACK_MAX_RETRIES = 5;

export class RelayFeed {
  readonly stream: Stream;
  private readonly o: RelayFeedOptions;
  private readonly nacks = new Map<number, NackRequester>();
  private requested: readonly number[] | undefined;
  private keyed = false;
  private rotationOwed = false;
  private layerCount: number;

  constructor(options: RelayFeedOptions) {
    this.o = options;
    this.layerCount = options.layerCount;
    const keyFrames: KeyFrameSource = { requestKeyFrame: (_id, layer) => this.requestKeyFrame(layer) };
    this.stream = new Stream(options.ref.stream_id, options.kind, remoteMember(options.publisher, keyFrames));
    // asked on the next flush, once for every subscriber that left meanwhile (and again once the link
    // is back if it is down then): the departed subscribers hold the key
    this.stream.rotateAtOrigin = () => {
      this.rotationOwed = true;
    };
    this.setLayerCount(options.layerCount);
  }

  /**
   * The layers the origin announces: a camera is announced as it is published, with one layer, and
   * again with its simulcast layers once its m-line is negotiated there.
   */
  setLayerCount(count: number): void {
    this.layerCount = count;
    if (this.o.kind === 'video') this.stream.setSimulcast(count > 1 ? Array.from({ length: count }, (_, i) => `r${i}`) : []);
  }

  /** Whether the origin's key arrived: until then the stream is not shown to local members. */
  get ready(): boolean {
    return this.keyed;
  }

  /** The layers asked of the origin now. */
  get layers(): readonly number[] {
    return this.requested ?? [];
  }

  /**
   * Asks the origin for the layers the local down tracks need: each one's target (the lowest before
   * it has one) and, for video, the layer above the highest of them, so that a subscriber whose
   * estimate grows sees it available and can climb; layers above it do not cross. Sent only when
   * it changes. Called at the subscription and on each refresh.
   */
  refresh(): void {
    const layers = this.neededLayers();
    const before = this.requested;
    if (before && before.length === layers.length && before.every((l, i) => l === layers[i])) return;
    this.requested = layers;
    this.o.link.subscribe(this.o.track, this.o.ref, layers);
  }

  /** An RTP datagram of the track: forwarded to the local down tracks; a gap is asked of the origin. */
  onRtp(layer: number, data: Uint8Array): void {
    if (!this.stream.live || layer >= this.layerCount) return;
    const packet = unpackRelayedRtp(this.o.kind, layer, data);
    if (!packet) return;
    const nowMs = this.o.now();
    let retransmitted = false;
    if (this.o.kind === 'video') {
      let nack = this.nacks.get(layer);
      if (!nack) this.nacks.set(layer, nack = new NackRequester({ maxAgeMs: NACK_MAX_AGE_MS, maxRetries: NACK_MAX_RETRIES, reorderDelayMs: 0 }));
      retransmitted = nack.onPacket(packet.seq, nowMs);
    }
    this.stream.forwardRtp(retransmitted ? { ...packet, recoveredAfterMs: this.nacks.get(layer)!.recoveredAfterMs } : packet, nowMs);
  }

  /**
   * A sealed media frame of a stream its publisher sends over the WebSocket (data, or audio and
   * video of a client without WebRTC): queued for each local subscriber as the origin queues it for
   * its own (the origin authenticated it; each client checks it again).
   */
  onFrame(frame: Buffer): void {
    if (!this.stream.live || this.stream.muted) return;
    for (const member of this.stream.subscribers) member.pushMedia(KIND_CODE[this.o.kind], frame);
  }

  /**
   * Sends the origin what is owed: a key rotation asked since the last flush (one `rotate_key`
   * however many subscribers left), and the packets still missing (NACK misses). The owner calls it
   * on a short timer.
   */
  flush(): void {
    if (this.rotationOwed) this.rotationOwed = !this.o.link.requestKeyRotation(this.o.track);
    this.flushNacks();
  }

  private flushNacks(): void {
    const nowMs = this.o.now();
    for (const [layer, nack] of this.nacks) {
      const due = nack.due(nowMs, RELAY_RTT_MS);
      for (let i = 0; i < due.length; i += 512) this.o.link.sendNackMiss(this.o.track, layer, due.slice(i, i + 512));
      nack.takeGivenUp();
    }
  }

  /** The origin's stream key: the local subscribers get it under their session keys, as for a local stream. */
  onStreamKey(epoch: number, key: Uint8Array): ServerControl | undefined {
    const current = this.stream.current;
    this.keyed = true;
    if (current.epoch === epoch && current.key.equals(key)) return undefined;
    this.stream.current = { epoch, key: Buffer.from(key), window: new ReplayWindow(REPLAY_WINDOW) };
    const message = this.stream.keyMessage();
    for (const member of this.stream.subscribers) member.sendControl(message);
    return message;
  }

  /** The link broke: nothing arrives, so the video down tracks pause (`stream_paused`, reason `relay`), as under a bandwidth pause. */
  linkDown(): void {
    this.stream.sourceLost = true;
    this.requested = undefined;
    this.nacks.clear();
  }

  /** The link is up again (the link sent the subscription again): the tracks restart on the next key frame. */
  linkUp(): void {
    this.stream.sourceLost = false;
    this.refresh();
    if (this.rotationOwed) this.rotationOwed = !this.o.link.requestKeyRotation(this.o.track);
    this.stream.restartTracks();
    if (this.o.kind === 'video') this.requestKeyFrame(-1);
  }

  /** No local subscriber needs it any more, or the origin ended it. */
  close(): void {
    this.o.link.unsubscribe(this.o.track);
    this.stream.end();
    this.nacks.clear();
  }

  private requestKeyFrame(layer: number): void {
    const layers = layer < 0 ? this.layers : [layer];
    for (const l of layers) if (this.layers.includes(l)) this.o.link.requestKeyFrame(this.o.track, l);
  }

  private neededLayers(): number[] {
    if (this.o.kind !== 'video') return [0];
    const needed = this.stream.trackLayers(this.layerCount);
    // subscribers without a down track of it take a video sent as WebSocket frames: its one layer
    if (needed.size === 0) return this.stream.subscribers.size > 0 ? [0] : [];
    return [...needed].sort((a, b) => a - b);
  }
}

/** The publisher of a relayed stream: not a member of the local room; it only takes key-frame requests. */
function remoteMember(publisher: RemotePublisher, keyFrames: KeyFrameSource): Member {
  return {
    participantId: publisher.participantId, userId: publisher.userId, role: 'speaker', metadata: '', attributes: {},
    published: new Map(), keyFrames,
    account: { rtpIn: () => undefined, rtpOut: () => undefined },
    canSubscribe: () => false,
    sendControl: () => undefined,
    pushMedia: () => undefined,
    downTrack: () => undefined,
  };
}
