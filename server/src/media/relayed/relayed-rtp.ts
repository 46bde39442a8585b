/**
 * The RTP packet a relay datagram carries (docs/protocol/relay.md, "Datagrams"): a plain 12-byte
 * RTP header (the publisher's SSRC, sequence number and timestamp of the layer, and its marker) and
 * the payload as the origin forwards it, still an end-to-end encrypted frame's bytes.
 */
import type { MediaKind } from '@rtc/protocol';
import type { ForwardedRtp } from '../rtp/layers.ts';
import { parseVp8 } from '../rtp/vp8.ts';

const HEADER_BYTES = 12;
/** Payload types of relayed packets; the receiving node reads the kind from its subscription, not from these. */
const AUDIO_PAYLOAD_TYPE = 111;
const VIDEO_PAYLOAD_TYPE = 96;

/** One forwarded packet as the bytes of a relay datagram's RTP packet. */
export function packRelayedRtp(kind: MediaKind, packet: ForwardedRtp): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + packet.payload.length);
  out[0] = 0x80;
  out[1] = (packet.marker ? 0x80 : 0) | (kind === 'audio' ? AUDIO_PAYLOAD_TYPE : VIDEO_PAYLOAD_TYPE);
  out.writeUInt16BE(packet.seq & 0xffff, 2);
  out.writeUInt32BE(packet.timestamp >>> 0, 4);
  out.writeUInt32BE(packet.ssrc >>> 0, 8);
  packet.payload.copy(out, HEADER_BYTES);
  return out;
}

/**
 * A relayed packet as the stream forwards it, or undefined when it is not one (too short, not RTP
 * version 2 with a bare header, an empty payload, or a video payload without its VP8 descriptor).
 */
export function unpackRelayedRtp(kind: MediaKind, layer: number, data: Uint8Array): ForwardedRtp | undefined {
  if (data.length <= HEADER_BYTES || data[0] !== 0x80) return undefined;
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const payload = bytes.subarray(HEADER_BYTES);
  const vp8 = kind === 'video' ? parseVp8(payload) : undefined;
  if (kind === 'video' && !vp8) return undefined;
  return {
    layer, ssrc: bytes.readUInt32BE(8), seq: bytes.readUInt16BE(2), timestamp: bytes.readUInt32BE(4),
    marker: (bytes[1]! & 0x80) !== 0, payload, vp8,
  };
}
