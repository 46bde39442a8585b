/**
 * RTCP and RTP a hostile client can send the media node, built byte by byte (RFC 3550, RFC 4585,
 * draft-holmer-rmcat-transport-wide-cc-extensions-01, RFC 8285), for the input checks' tests and
 * bench/rtcp-flood.bench.ts.
 */

/** One RTCP sub-packet: version 2, `count` (RC or FMT), `type`, the body padded to 32 bits by zeros. */
export function rtcpPacket(type: number, count: number, body: Buffer): Buffer {
  const padded = Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
  const header = Buffer.alloc(4);
  header[0] = 0x80 | (count & 0x1f);
  header[1] = type;
  header.writeUInt16BE(padded.length / 4, 2);
  return Buffer.concat([header, padded]);
}

/** Sender SSRC and media SSRC, the start of every feedback message. */
function ssrcs(sender: number, media: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(sender >>> 0, 0);
  b.writeUInt32BE(media >>> 0, 4);
  return b;
}

/**
 * A transport-cc feedback claiming `statusCount` packets with only the packet chunks given (16-bit
 * words) and `deltas` bytes of receive deltas.
 */
export function twccFeedback(statusCount: number, chunks: readonly number[], deltas = Buffer.alloc(0), mediaSsrc = 1): Buffer {
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16BE(0, 0);
  fixed.writeUInt16BE(statusCount, 2);
  const words = Buffer.alloc(chunks.length * 2);
  chunks.forEach((c, i) => words.writeUInt16BE(c, i * 2));
  return rtcpPacket(205, 15, Buffer.concat([ssrcs(1, mediaSsrc), fixed, words, deltas]));
}

/** Run-length chunk: status (0 not received, 1 small delta, 2 large delta) for `run` packets. */
export function runChunk(status: number, run: number): number {
  return ((status & 0x3) << 13) | (run & 0x1fff);
}

/**
 * The 40-byte feedback that stalled werift: 65,535 packets claimed received with a small delta, in eight
 * run-length chunks of 8,191 and one of 7, and no delta at all. werift 0.23.0 builds an object per
 * claimed packet before reading past the end.
 */
export function hostileTwcc(mediaSsrc = 1): Buffer {
  return twccFeedback(65_535, [...Array.from({ length: 8 }, () => runChunk(1, 8191)), runChunk(1, 7)], Buffer.alloc(0), mediaSsrc);
}

/** The worst such datagram: as many hostile feedbacks as fit in 1,200 bytes (30). */
export function hostileDatagram(mediaSsrc = 1): Buffer {
  const one = hostileTwcc(mediaSsrc);
  return Buffer.concat(Array.from({ length: Math.floor(1200 / one.length) }, () => one));
}

/** A generic NACK (RFC 4585 6.2.1) with one FCI entry per packet ID given, each with bitmask `blp`. */
export function nack(mediaSsrc: number, pids: readonly number[], blp = 0): Buffer {
  const fci = Buffer.alloc(pids.length * 4);
  pids.forEach((pid, i) => {
    fci.writeUInt16BE(pid & 0xffff, i * 4);
    fci.writeUInt16BE(blp, i * 4 + 2);
  });
  return rtcpPacket(205, 1, Buffer.concat([ssrcs(1, mediaSsrc), fci]));
}

/** A receiver report (RFC 3550 6.4.2) with `blocks` report blocks for `ssrc`, each with this loss. */
export function receiverReport(ssrc: number, blocks: number, fractionLost = 0, packetsLost = 0, claimedBlocks = blocks): Buffer {
  const body = Buffer.alloc(4 + 24 * blocks);
  body.writeUInt32BE(7, 0);
  for (let i = 0; i < blocks; i++) {
    const at = 4 + 24 * i;
    body.writeUInt32BE(ssrc >>> 0, at);
    body[at + 4] = fractionLost;
    body.writeUIntBE(packetsLost & 0xffffff, at + 5, 3);
  }
  return rtcpPacket(201, claimedBlocks, body);
}

/** A REMB (draft-alvestrand-rmcat-remb-03) naming `claimed` SSRCs and carrying `present` of them. */
export function remb(claimed: number, present: number): Buffer {
  const fixed = Buffer.from([0x52, 0x45, 0x4d, 0x42, claimed, 0x03, 0xff, 0xff]);
  return rtcpPacket(206, 15, Buffer.concat([ssrcs(1, 0), fixed, Buffer.alloc(4 * present)]));
}

/** A picture loss indication (RFC 4585 6.3.1). */
export function pli(mediaSsrc: number): Buffer {
  return rtcpPacket(206, 1, ssrcs(1, mediaSsrc));
}

/** An SDES (RFC 3550 6.5) with one chunk carrying a CNAME. */
export function sdes(cname: string): Buffer {
  const text = Buffer.from(cname);
  return rtcpPacket(202, 1, Buffer.concat([Buffer.from([0, 0, 0, 7, 1, text.length]), text, Buffer.alloc(1)]));
}

/**
 * An RTP packet whose one-byte header extension block claims `words` 32-bit words and holds
 * `elements` elements of one byte of payload each (padded with zeros to the words it has).
 */
export function rtpWithExtensions(elements: number, words = Math.ceil((elements * 2) / 4)): Buffer {
  const header = Buffer.alloc(12);
  header[0] = 0x90;
  header[1] = 96;
  header.writeUInt32BE(1234, 8);
  const block = Buffer.alloc(Math.ceil((elements * 2) / 4) * 4);
  for (let i = 0; i < elements; i++) {
    block[i * 2] = ((1 + (i % 14)) << 4) | 0;
    block[i * 2 + 1] = i & 0xff;
  }
  const profile = Buffer.from([0xbe, 0xde, (words >> 8) & 0xff, words & 0xff]);
  return Buffer.concat([header, profile, block, Buffer.from([1, 2, 3, 4])]);
}
