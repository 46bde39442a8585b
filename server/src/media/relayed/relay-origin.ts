/**
 * The origin side of every relay link of a node, accepted or opened (a link is symmetric): each
 * subscription of the peer node becomes a RelayConsumer of the local stream it names, answered with
 * the stream's key; the peer's layer changes, key-frame requests and NACK misses go to it; a
 * subscription to a stream this node does not originate is answered with `stream_end`.
 */
import type { RelayHandlers, RelayStreamRef } from '../relay/index.ts';
import type { Stream } from '../room/stream.ts';
import { RelayConsumer, type RelayConsumerSink } from './relay-consumer.ts';

/** The local stream a peer names, if this node originates it. */
export type FindStream = (ref: RelayStreamRef) => Stream | undefined;
/** Rotates the key of a stream this node originates (its room coalesces and sends the new key). */
export type RotateKey = (ref: RelayStreamRef, stream: Stream) => void;

export class RelayOrigin {
  private readonly consumers = new Map<number, RelayConsumer>();
  private readonly refs = new Map<number, RelayStreamRef>();
  private readonly sink: RelayConsumerSink;
  private readonly find: FindStream;
  private readonly rotate: RotateKey;
  private readonly now: () => number;

  constructor(sink: RelayConsumerSink, find: FindStream, rotate: RotateKey, now: () => number) {
    this.sink = sink;
    this.find = find;
    this.rotate = rotate;
    this.now = now;
  }

  /** The handlers of the link's origin side, to merge with its relaying side's. */
  get handlers(): Required<Pick<RelayHandlers, 'onSubscribe' | 'onUnsubscribe' | 'onKeyFrameRequest' | 'onNackMiss' | 'onRotateKey'>> {
    return {
      onSubscribe: (track, ref, layers) => this.subscribe(track, ref, layers),
      onUnsubscribe: (track) => this.unsubscribe(track),
      onKeyFrameRequest: (track, layer) => this.consumers.get(track)?.onKeyFrameRequest(layer),
      onNackMiss: (track, layer, seqs) => this.consumers.get(track)?.onNackMiss(layer, seqs),
      onRotateKey: (track) => {
        const consumer = this.consumers.get(track);
        const ref = this.refs.get(track);
        if (consumer && ref) this.rotate(ref, consumer.stream);
      },
    };
  }

  get size(): number {
    return this.consumers.size;
  }

  /**
   * The link closed: its consumers stop (the peer subscribes again once it is back), and their
   * streams' keys rotate, as when a subscription ends.
   */
  close(): void {
    for (const track of [...this.consumers.keys()]) this.unsubscribe(track);
  }

  private subscribe(track: number, ref: RelayStreamRef, layers: readonly number[]): void {
    const existing = this.consumers.get(track);
    if (existing) return existing.setLayers(layers);
    const stream = this.find(ref);
    if (!stream || !stream.live || stream.relayedFrom !== undefined) {
      // not (or no longer) originated here: a node relays from the origin only, never in a chain
      this.sink.endStream(track);
      return;
    }
    const consumer = new RelayConsumer(track, stream, this.sink, layers, this.now, () => {
      this.consumers.delete(track);
      this.refs.delete(track);
    });
    this.consumers.set(track, consumer);
    this.refs.set(track, ref);
    consumer.sendKey();
    stream.addRelay(consumer);
  }

  /**
   * A subscription ends: the stream's key rotates, as when a subscriber of its own leaves. The peer
   * node also asks for a rotation when one of its subscribers leaves (`rotate_key`), but a request
   * made while its link is down, or queued as the link closes, may never arrive; a key its
   * subscribers held must not open what follows (the room coalesces rotations of one turn).
   */
  private unsubscribe(track: number): void {
    const consumer = this.consumers.get(track);
    const ref = this.refs.get(track);
    if (!consumer || !ref) return;
    this.consumers.delete(track);
    this.refs.delete(track);
    consumer.stream.removeRelay(consumer);
    this.rotate(ref, consumer.stream);
  }
}
