/**
 * The RTP header of one m-line a subscriber receives, as bytes built once and patched per packet
 * (docs/protocol/media.md, "Downlink"): what changes from one packet to the next (sequence number,
 * timestamp, marker and padding bits, transport-wide sequence number, playout delay) is written in
 * place, so that forwarding a packet to one more subscriber allocates no header object. The layout
 * is RFC 3550's fixed header and RFC 8285's one-byte extensions, in the order werift writes them:
 * MID, playout delay, transport-wide sequence number.
 */

/** The extension ids the answer negotiated for this m-line (undefined: not sent). */
export interface HeaderExtensionIds {
  readonly mid: number | undefined;
  readonly twcc: number | undefined;
  readonly playoutDelay: number | undefined;
}

/** What werift's SRTP session reads of a header to protect a packet. */
export interface SrtpHeaderView {
  readonly ssrc: number;
  readonly sequenceNumber: number;
  readonly serializeSize: number;
  serialize(size: number): Buffer;
}

import { PLAYOUT_DELAY_MAX_UNITS, playoutDelay } from './playout-delay.ts';

const FIXED = 12;
const ONE_BYTE_PROFILE = 0xbede;

/** One layout: with or without the playout delay extension. */
class Layout implements SrtpHeaderView {
  readonly bytes: Buffer;
  readonly twccAt: number;
  readonly playoutAt: number;
  readonly ssrc: number;
  sequenceNumber = 0;

  constructor(ssrc: number, payloadType: number, ids: HeaderExtensionIds, mid: Buffer | undefined, playout: boolean) {
    this.ssrc = ssrc;
    const elements: { id: number; length: number; data?: Buffer }[] = [];
    if (ids.mid !== undefined && mid !== undefined) elements.push({ id: ids.mid, length: mid.length, data: mid });
    if (playout && ids.playoutDelay !== undefined) elements.push({ id: ids.playoutDelay, length: 3 });
    if (ids.twcc !== undefined) elements.push({ id: ids.twcc, length: 2 });
    const body = elements.reduce((n, e) => n + 1 + e.length, 0);
    const extBytes = elements.length === 0 ? 0 : 4 + Math.ceil(body / 4) * 4;
    this.bytes = Buffer.alloc(FIXED + extBytes);
    this.bytes[0] = elements.length === 0 ? 0x80 : 0x90;
    this.bytes[1] = payloadType & 0x7f;
    this.bytes.writeUInt32BE(ssrc >>> 0, 8);
    let twccAt = -1;
    let playoutAt = -1;
    if (elements.length > 0) {
      this.bytes.writeUInt16BE(ONE_BYTE_PROFILE, FIXED);
      this.bytes.writeUInt16BE((extBytes - 4) / 4, FIXED + 2);
      let at = FIXED + 4;
      for (const e of elements) {
        this.bytes[at] = (e.id << 4) | (e.length - 1);
        if (e.data) e.data.copy(this.bytes, at + 1);
        if (e.id === ids.twcc && e.length === 2) twccAt = at + 1;
        else if (playout && e.id === ids.playoutDelay && e.length === 3) playoutAt = at + 1;
        at += 1 + e.length;
      }
    }
    this.twccAt = twccAt;
    this.playoutAt = playoutAt;
  }

  get serializeSize(): number {
    return this.bytes.length;
  }

  serialize(): Buffer {
    return this.bytes;
  }
}

export class HeaderBytes {
  private readonly plain: Layout;
  private readonly withPlayout: Layout | undefined;

  constructor(ssrc: number, payloadType: number, ids: HeaderExtensionIds, mid: string | undefined) {
    const midBytes = mid === undefined ? undefined : Buffer.from(mid);
    this.plain = new Layout(ssrc, payloadType, ids, midBytes, false);
    this.withPlayout = ids.playoutDelay === undefined ? undefined : new Layout(ssrc, payloadType, ids, midBytes, true);
  }

  /**
   * The header of one packet, valid until the next call: `twccSeq` is written when the m-line
   * carries the extension, `playoutMinUnits` (10 ms units, with no upper bound) adds the playout
   * delay extension when it was negotiated.
   */
  write(seq: number, timestamp: number, marker: boolean, padding: boolean, twccSeq: number, playoutMinUnits: number | undefined): SrtpHeaderView {
    const layout = playoutMinUnits !== undefined && this.withPlayout ? this.withPlayout : this.plain;
    const b = layout.bytes;
    b[0] = padding ? b[0]! | 0x20 : b[0]! & ~0x20;
    b[1] = marker ? b[1]! | 0x80 : b[1]! & 0x7f;
    b.writeUInt16BE(seq & 0xffff, 2);
    b.writeUInt32BE(timestamp >>> 0, 4);
    if (layout.twccAt >= 0) b.writeUInt16BE(twccSeq & 0xffff, layout.twccAt);
    if (layout.playoutAt >= 0 && playoutMinUnits !== undefined) playoutDelay(playoutMinUnits, PLAYOUT_DELAY_MAX_UNITS).copy(b, layout.playoutAt);
    layout.sequenceNumber = seq & 0xffff;
    return layout;
  }
}
