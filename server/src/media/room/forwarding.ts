import { NONCE_LABEL, type FrameHeader } from '@rtc/protocol';
import { open } from '../frames/frame.ts';
import type { Stream } from './room.ts';

/**
 * What became of a media frame: sent on, dropped (late, replayed, crossed an unpublish), held back
 * (its stream is muted by the customer's server), or a protocol violation.
 */
export type ForwardResult = 'forwarded' | 'dropped' | 'muted' | 'violation';

/**
 * Authenticates one media frame of a stream the sender publishes, under the stream key of its
 * epoch, and queues the same bytes for every subscriber (docs/protocol/media.md, "Keys and nonces").
 */
export function forwardFrame(
  message: Buffer, header: FrameHeader, published: ReadonlyMap<number, Stream>, mayHavePublished: ReadonlySet<number>, nowMs: () => number,
): ForwardResult {
  const stream = published.get(header.streamId);
  if (!stream) {
    // a stream this session was allowed to publish but does not publish (now): a frame that crossed
    // an unpublish or a permission change on the wire, dropped; a stream id never allowed is a violation
    return mayHavePublished.has(header.streamId) ? 'dropped' : 'violation';
  }
  if (header.kind !== stream.kindCode) return 'violation';
  const generation = stream.generation(header.epoch, header.epoch === stream.current.epoch ? 0 : nowMs());
  if (!generation || !generation.window.check(header.seq)) return 'dropped';
  if (!open(generation.key, NONCE_LABEL.streamFrame, message)) return 'violation';
  generation.window.commit(header.seq);
  // authenticated all the same: a muted stream's publisher still breaks the protocol with a bad frame
  if (stream.muted) return 'muted';
  for (const subscriber of stream.subscribers) subscriber.pushMedia(header.kind, message);
  // the room's other media nodes that asked for it (docs/protocol/relay.md, "In the media path")
  for (const relay of stream.relayed) relay.forwardFrame(message);
  return 'forwarded';
}
