import { randomBytes } from 'node:crypto';
import { KEY_BYTES, KIND_CODE, REPLAY_WINDOW, ReplayWindow, type MediaKind, type ServerControl, type StreamInfo, type StreamSource } from '@rtc/protocol';
import { KEY_ROTATION_GRACE_MS } from '../node/limits.ts';
import { relayedLoss } from '../rtp/downstream-loss.ts';
import { StreamLayers, type ForwardedRtp } from '../rtp/layers.ts';
import { PayloadRing } from '../rtp/payload-ring.ts';
import type { DownTrack, Member } from './member.ts';

interface KeyGeneration {
  readonly epoch: number;
  readonly key: Buffer;
  readonly window: ReplayWindow;
}

/** A publisher is asked for a key frame of one stream at most this often, whatever the subscribers ask. */
const KEY_FRAME_REQUEST_INTERVAL_MS = 250;
/** How often the layers a simulcast video's subscribers need are counted (ms, at its packets). */
const LAYER_CHECK_INTERVAL_MS = 250;
/**
 * A layer rests once no subscriber, here or on another node, has needed it for this long (ms): a
 * subscriber moving between layers does not turn the publisher's encoder off and on.
 */
export const LAYER_REST_AFTER_MS = 3_000;

/**
 * A relay of the stream to another media node (media/relayed/relay-consumer.ts): fed every packet
 * before the down tracks, it sends on the layers that node asked for.
 */
export interface StreamRelay {
  forward(packet: ForwardedRtp): boolean;
  /** A sealed media frame of a WebSocket stream (`data`), authenticated here, as its publisher sent it. */
  forwardFrame(frame: Buffer): boolean;
  /** The simulcast layers the other node asked for: needed, so the publisher keeps sending them. */
  readonly layers: readonly number[];
  /** The stream's key changed: the other node must hold it before the publisher uses it. */
  sendKey(): void;
  /** The stream ended. */
  end(): void;
}

/**
 * One published stream and its fan-out. Its key is the stream key: the publisher seals frames under
 * it, the server authenticates each frame once and forwards the same bytes to every subscriber, who
 * received the key inside its own sealed session. The key rotates when a subscriber loses access.
 * Over WebRTC the stream owns its subscriptions' down tracks: it feeds each packet to every one of
 * them, asks its publisher for the key frames they need (per layer, coalesced), tells the publisher
 * the loss they report, and keeps the state of its simulcast layers.
 */
export class Stream {
  readonly id: number;
  readonly kind: MediaKind;
  readonly kindCode: number;
  readonly publisher: Member;
  /** What the publisher said the stream carries. */
  readonly source: StreamSource;
  /** Members that receive it (both transports); change it through subscribe and unsubscribe. */
  readonly subscribers = new Set<Member>();
  /** The origin node of a stream fed here by a relay (its `host:port`); undefined for one published on this node. */
  relayedFrom: string | undefined;
  /**
   * Its source is out of reach for now: a relayed stream whose link to its origin is down. Its video
   * down tracks pause as under a bandwidth pause (`stream_paused` with reason `relay`) until it is back.
   */
  sourceLost = false;
  /** For a stream fed by a relay: asks its origin to rotate the key (a rotation happens there, never here). */
  rotateAtOrigin: (() => void) | undefined;
  /** Muted by the customer's server: none of its media is forwarded (docs/reference/room-api.md, "Muting a stream"). */
  muted = false;
  /** The simulcast rids of a WebRTC video, smallest first, once its m-line is negotiated (empty: one layer). */
  rids: readonly string[] = [];
  current: KeyGeneration;
  previous: (KeyGeneration & { readonly until: number }) | undefined;
  rotationPending = false;
  live = true;
  /** Simulcast layers of a video published over WebRTC, once its m-line is negotiated. */
  layers: StreamLayers | undefined;
  /** Its recent payloads, from which its down tracks answer NACKs. */
  readonly recent = new PayloadRing();
  /** When the publisher was last asked for a key frame of each layer (ms). */
  private readonly keyFrameAskedAtMs: number[] = [];
  /** When some subscriber last needed each simulcast layer (ms), the layers the publisher was last told to send, and the next count. */
  private layerNeededAtMs: number[] = [];
  private toldActive: readonly boolean[] | undefined;
  private nextLayerCheckMs = Number.NEGATIVE_INFINITY;
  /** The down track of each subscriber that receives it over WebRTC. */
  private readonly trackOf = new Map<Member, DownTrack>();
  /** The same tracks, as an array the packet path walks without allocating. */
  private tracks: DownTrack[] = [];
  /** Relays to other media nodes of the room, fed beside the down tracks. */
  private relays: StreamRelay[] = [];
  private readonly layersChanged: ((stream: Stream) => void) | undefined;

  constructor(id: number, kind: MediaKind, publisher: Member, source: StreamSource = 'unknown', layersChanged?: (stream: Stream) => void) {
    this.id = id;
    this.kind = kind;
    this.source = source;
    this.kindCode = KIND_CODE[kind];
    this.publisher = publisher;
    this.layersChanged = layersChanged;
    this.current = { epoch: 1, key: randomBytes(KEY_BYTES), window: new ReplayWindow(REPLAY_WINDOW) };
  }

  /** The key generation a frame names by its epoch, while it may still be used. */
  generation(epoch: number, nowMs: number): KeyGeneration | undefined {
    if (epoch === this.current.epoch) return this.current;
    const previous = this.previous;
    return previous && previous.epoch === epoch && nowMs < previous.until ? previous : undefined;
  }

  rotate(nowMs: number): void {
    this.previous = { ...this.current, until: nowMs + KEY_ROTATION_GRACE_MS };
    const epoch = this.current.epoch === 0xffff ? 1 : this.current.epoch + 1;
    this.current = { epoch, key: randomBytes(KEY_BYTES), window: new ReplayWindow(REPLAY_WINDOW) };
  }

  keyMessage(): ServerControl {
    return { type: 'stream_key', stream_id: this.id, epoch: this.current.epoch, key: this.current.key.toString('base64url') };
  }

  /** How a member sees this stream; the key only for those who receive it. */
  describe(forMember: Member): StreamInfo {
    const base = {
      stream_id: this.id,
      kind: this.kind,
      participant_id: this.publisher.participantId,
      user_id: this.publisher.userId,
    };
    if (!this.subscribers.has(forMember)) return { ...base, subscribed: false };
    return { ...base, subscribed: true, epoch: this.current.epoch, key: this.current.key.toString('base64url') };
  }

  /** A member receives it from now on: over WebRTC too, once (or if) its peer connection has a down track for it. */
  subscribe(member: Member): void {
    if (!this.live || this.subscribers.has(member)) return;
    this.subscribers.add(member);
    const track = member.downTrack(this.id);
    if (track) this.attach(member, track);
  }

  /** A member no longer receives it; true if it did. */
  unsubscribe(member: Member): boolean {
    if (!this.subscribers.delete(member)) return false;
    const track = this.trackOf.get(member);
    if (track) this.drop(member, track);
    return true;
  }

  /** A subscriber's peer connection negotiated a down track for it: fed from now on (if of its kind). */
  attach(member: Member, track: DownTrack): void {
    if (!this.live || !this.subscribers.has(member) || track.kind !== this.kind) return;
    const earlier = this.trackOf.get(member);
    if (earlier === track) return;
    if (earlier) earlier.stream = undefined;
    this.trackOf.set(member, track);
    track.stream = this;
    this.tracks = [...this.trackOf.values()];
  }

  /** A down track went with its m-line or its peer connection. */
  detach(track: DownTrack): void {
    for (const [member, attached] of this.trackOf) if (attached === track) return this.drop(member, track);
  }

  private drop(member: Member, track: DownTrack): void {
    this.trackOf.delete(member);
    track.stream = undefined;
    this.tracks = [...this.trackOf.values()];
  }

  /** Another media node receives the stream through `relay` from now on. */
  addRelay(relay: StreamRelay): void {
    if (this.live && !this.relays.includes(relay)) this.relays = [...this.relays, relay];
  }

  removeRelay(relay: StreamRelay): void {
    this.relays = this.relays.filter((r) => r !== relay);
  }

  /** The relays it feeds (each remote node's subscription). */
  get relayed(): readonly StreamRelay[] {
    return this.relays;
  }

  /** Unpublished: no subscriber, no down track, no relay any more (each relay's node is told). */
  end(): void {
    this.live = false;
    const relays = this.relays;
    this.relays = [];
    for (const relay of relays) relay.end();
    this.subscribers.clear();
    for (const track of this.tracks) track.stream = undefined;
    this.trackOf.clear();
    this.tracks = [];
    this.recent.release();
  }

  /**
   * A packet from the publisher's uplink: counted in its layers and its publisher's account, then
   * fed to every down track, each taking the layer that fits its subscriber. The number sent on.
   */
  forwardRtp(packet: ForwardedRtp, nowMs: number): number {
    const layers = this.layers;
    layers?.onPacket(packet.layer, packet.ssrc, packet.payload.length, packet.marker, packet.vp8, nowMs);
    this.publisher.account.rtpIn(this.id, this.kind, packet, layers, nowMs);
    if (packet.recoveredAfterMs !== undefined) layers?.onRecovered(packet.recoveredAfterMs, nowMs);
    if (layers && layers.count > 1 && nowMs >= this.nextLayerCheckMs) this.restLayers(layers.count, nowMs);
    if (this.muted) return 0;
    let sent = 0;
    const relays = this.relays;
    for (let i = 0; i < relays.length; i += 1) if (relays[i]!.forward(packet)) sent += 1;
    const tracks = this.tracks;
    for (let i = 0; i < tracks.length; i += 1) if (tracks[i]!.forward(packet)) sent += 1;
    return sent;
  }

  /** A subscriber needs a key frame of `layer`: the publisher is asked, at most every KEY_FRAME_REQUEST_INTERVAL_MS whatever the subscribers ask. */
  askKeyFrame(layer: number, nowMs: number): void {
    const asked = this.keyFrameAskedAtMs;
    if (nowMs - (asked[layer] ?? Number.NEGATIVE_INFINITY) < KEY_FRAME_REQUEST_INTERVAL_MS) return;
    asked[layer] = nowMs;
    this.requestKeyFrame(layer);
  }

  /** Asks the publisher for a key frame of a layer (-1: every layer) now, as an unmute or a new subscription needs. */
  requestKeyFrame(layer: number): void {
    this.publisher.keyFrames?.requestKeyFrame(this.id, layer);
  }

  /** The source stopped and resumes (an unmute): every down track starts a new source. */
  restartTracks(): void {
    for (const track of this.tracks) track.restart();
  }

  /**
   * The loss to tell the publisher (rtp/downstream-loss.ts): what each subscriber's client reports,
   * none for a subscriber without a down track (it receives WebSocket frames).
   */
  downstreamLoss(): number {
    const losses = new Array<number>(this.subscribers.size).fill(0);
    let i = 0;
    for (const track of this.tracks) losses[i++] = track.reportedLoss;
    return relayedLoss(losses);
  }

  /**
   * The simulcast layers some subscriber needs: the lowest always (a new subscriber starts at once),
   * each down track's target and the layer above the highest of them (so that an estimate that grows
   * finds it measured), and every layer another node's relay asked for (it adds its own layer above).
   */
  neededLayers(count: number): Set<number> {
    const needed = this.trackLayers(count);
    needed.add(0);
    for (const relay of this.relays) for (const layer of relay.layers) if (layer < count) needed.add(layer);
    return needed;
  }

  /**
   * The simulcast layers this node's down tracks need: each one's target (the lowest while it is
   * paused or has none yet) and the layer above the highest of them; none without a down track.
   */
  trackLayers(count: number): Set<number> {
    const needed = new Set<number>();
    let top = -1;
    for (const t of this.tracks) {
      const layer = Math.min(Math.max(t.target ?? 0, 0), count - 1);
      needed.add(layer);
      top = Math.max(top, layer);
    }
    if (top >= 0 && top + 1 < count) needed.add(top + 1);
    return needed;
  }

  /**
   * Tells the publisher which layers to send (docs/protocol/media.md, "publish_layers"): a layer no
   * subscriber of any node has needed for LAYER_REST_AFTER_MS rests, so that its encoder spares it;
   * one needed again is sent at once. Only when that changes; a stream relayed here has its publisher
   * on its origin, which counts this node's needs in its relay's layers.
   */
  private restLayers(count: number, nowMs: number): void {
    this.nextLayerCheckMs = nowMs + LAYER_CHECK_INTERVAL_MS;
    if (this.relayedFrom !== undefined) return;
    const needed = this.neededLayers(count);
    const active = Array.from({ length: count }, (_, i) => {
      if (needed.has(i)) this.layerNeededAtMs[i] = nowMs;
      return nowMs - (this.layerNeededAtMs[i] ??= nowMs) < LAYER_REST_AFTER_MS;
    });
    const told = this.toldActive ?? active.map(() => true);
    if (active.every((a, i) => a === told[i])) return;
    this.toldActive = active;
    this.layers?.setRested(active.map((a) => !a));
    this.publisher.sendControl({ type: 'publish_layers', stream_id: this.id, active });
  }

  /** The publisher's m-line for it was negotiated with these simulcast rids (smallest first; empty for one layer). */
  setSimulcast(rids: readonly string[]): void {
    if (this.kind !== 'video') return;
    const count = Math.max(rids.length, 1);
    let changed = this.rids.length !== rids.length || this.rids.some((r, i) => r !== rids[i]);
    this.rids = [...rids];
    if (this.layers?.count !== count) {
      this.layers = new StreamLayers(count);
      this.layerNeededAtMs = [];
      this.toldActive = undefined;
      changed = true;
    }
    if (changed && this.live) this.layersChanged?.(this);
  }
}
