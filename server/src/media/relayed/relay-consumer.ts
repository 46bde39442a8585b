/**
 * The origin's end of one relayed stream (docs/protocol/relay.md, "Control messages"): one more
 * consumer of a published Stream beside its subscribers' down tracks, fed only the simulcast layers
 * the remote node asked for. It keeps what it sent of each layer for a while, so that the remote
 * node's NACK misses are answered here, and passes its key-frame requests to the stream, which asks
 * the publisher at most once per layer and interval however many nodes and subscribers ask.
 */
import type { ForwardedRtp } from '../rtp/layers.ts';
import type { Stream, StreamRelay } from '../room/stream.ts';
import { packRelayedRtp } from './relayed-rtp.ts';

/** What a consumer sends through: the relay link (or channel) to the node that subscribed. */
export interface RelayConsumerSink {
  sendRtp(track: number, layer: number, packet: Uint8Array): boolean;
  sendStreamKey(track: number, epoch: number, key: Uint8Array): boolean;
  endStream(track: number): boolean;
  sendFrame(track: number, frame: Uint8Array): boolean;
}

/** Packets kept per layer for NACK misses (about 1.5 s of 720p video, as a down track keeps). */
const HISTORY = 512;

export class RelayConsumer implements StreamRelay {
  readonly track: number;
  readonly stream: Stream;
  private readonly sink: RelayConsumerSink;
  private wanted = new Set<number>();
  private readonly history = new Map<number, (Buffer | undefined)[]>();
  private readonly now: () => number;
  private readonly onEnd: (() => void) | undefined;
  /** Packets sent, and NACK misses answered from the history. */
  sent = 0;
  resent = 0;

  constructor(track: number, stream: Stream, sink: RelayConsumerSink, layers: readonly number[], now: () => number, onEnd?: () => void) {
    this.track = track;
    this.onEnd = onEnd;
    this.stream = stream;
    this.sink = sink;
    this.now = now;
    this.setLayers(layers);
  }

  /** The layers the remote node needs now (`[]`: none crosses, the subscription stays). */
  get layers(): readonly number[] {
    return [...this.wanted].sort((a, b) => a - b);
  }

  setLayers(layers: readonly number[]): void {
    const added = layers.filter((l) => !this.wanted.has(l));
    this.wanted = new Set(layers);
    for (const layer of this.history.keys()) if (!this.wanted.has(layer)) this.history.delete(layer);
    // a layer that starts crossing is of no use to the remote subscribers before its next key frame
    for (const layer of added) if (this.stream.kind === 'video') this.stream.askKeyFrame(layer, this.now());
  }

  /** A packet of the stream: sent on when its layer is wanted; true if it was. */
  forward(packet: ForwardedRtp): boolean {
    if (!this.wanted.has(packet.layer)) return false;
    const bytes = packRelayedRtp(this.stream.kind, packet);
    if (this.stream.kind === 'video') {
      let kept = this.history.get(packet.layer);
      if (!kept) this.history.set(packet.layer, kept = new Array<Buffer | undefined>(HISTORY));
      kept[packet.seq % HISTORY] = bytes;
    }
    this.sent += 1;
    return this.sink.sendRtp(this.track, packet.layer, bytes);
  }

  /** A sealed media frame of a WebSocket stream: sent on while the remote node wants its one layer. */
  forwardFrame(frame: Buffer): boolean {
    if (!this.wanted.has(0)) return false;
    this.sent += 1;
    return this.sink.sendFrame(this.track, frame);
  }

  /** The remote node's subscribers need a key frame of `layer`. */
  onKeyFrameRequest(layer: number): void {
    if (this.wanted.has(layer)) this.stream.askKeyFrame(layer, this.now());
  }

  /** Packets the remote node's own history could not repair: sent again from this one's. */
  onNackMiss(layer: number, seqs: readonly number[]): void {
    const kept = this.history.get(layer);
    if (!kept) return;
    for (const seq of seqs) {
      const bytes = kept[seq % HISTORY];
      if (!bytes || bytes.readUInt16BE(2) !== seq) continue;
      this.resent += 1;
      this.sink.sendRtp(this.track, layer, bytes);
    }
  }

  /** Sends the stream's current key (at the subscription and at each rotation). */
  sendKey(): void {
    this.sink.sendStreamKey(this.track, this.stream.current.epoch, this.stream.current.key);
  }

  /** The stream ended: the remote node is told, and nothing more crosses. */
  end(): void {
    this.wanted.clear();
    this.history.clear();
    this.sink.endStream(this.track);
    this.onEnd?.();
  }
}
