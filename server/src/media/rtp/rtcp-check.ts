/**
 * The checks a decrypted RTCP datagram from a client passes before anything parses it (docs/decisions.md,
 * "What a client's RTP and RTCP may cost"). Pure: bytes in, a verdict out, in one pass over the bytes.
 *
 * werift's parsers trust the counts a packet claims: a transport-cc feedback of 40 bytes claiming
 * 65,535 packets makes it build one object per claimed packet (the node reads transport-cc itself,
 * twcc-compact.ts), and each sub-packet of a compound datagram is handed the rest of the datagram, not
 * its own bytes. A datagram passes here only when every sub-packet's claims fit in its own bytes, and
 * the objects parsing it would build (its `work`) stay under WORK_PER_BYTE per byte of the datagram.
 */
import { readTwccChunks } from './twcc-compact.ts';

/** RTCP packet types (RFC 3550 section 12.1, RFC 4585 section 6.1). */
export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_RTPFB = 205;
export const RTCP_PSFB = 206;
/** Feedback formats: generic NACK and transport-cc (RTPFB); PLI, FIR and application layer (REMB) (PSFB). */
export const FMT_NACK = 1;
export const FMT_TWCC = 15;
export const FMT_PLI = 1;
export const FMT_FIR = 4;
export const FMT_AFB = 15;

/** Sub-packets a compound datagram may hold: a client sends a receiver report, an SDES and a few feedback messages. */
export const MAX_RTCP_PACKETS = 32;
/**
 * Objects parsing a datagram may build, per byte of it: report blocks, NACKed sequence numbers (17
 * per 4 bytes), REMB SSRCs, FIR entries, transport-cc statuses and deltas. A transport-cc feedback is
 * read into a compact form (twcc-compact.ts) whose objects its bytes bound: at most one per delta byte
 * and per status run, whatever status count it claims.
 */
export const WORK_PER_BYTE = 16;

/** Why a datagram was refused (for tests and debug logs; never a client value). */
export type RtcpRefusal = 'truncated' | 'version' | 'padding' | 'too_many_packets' | 'malformed' | 'too_costly';

/** A sub-packet to parse: its type, its count or format field, and where its body (after the 4-byte header, padding excluded) lies. */
export interface RtcpPart {
  readonly type: number;
  readonly count: number;
  readonly start: number;
  readonly end: number;
}

export type RtcpCheck =
  | { readonly ok: true; readonly parts: readonly RtcpPart[]; readonly work: number }
  | { readonly ok: false; readonly reason: RtcpRefusal };

/** What one sub-packet's body costs to parse; undefined when it is malformed; `parse` false: nothing on the node reads it. */
interface BodyCost {
  readonly work: number;
  readonly parse: boolean;
}

/**
 * Checks a decrypted compound RTCP datagram: sub-packets of version 2 whose lengths add up to the
 * datagram exactly (RFC 3550 appendix A.2), padding within its sub-packet, at most MAX_RTCP_PACKETS of
 * them, each body as long as its counts say, and the work of parsing them bounded by its bytes.
 * `parts` lists the sub-packets the node parses (reports and the feedback it acts on); the others
 * (SDES, BYE, APP, XR, feedback formats it has no use for) are checked for their length only, or
 * their structure where they have one, and skipped.
 */
export function checkRtcp(data: Uint8Array): RtcpCheck {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length < 4 || data.length % 4 !== 0) return { ok: false, reason: 'truncated' };
  const parts: RtcpPart[] = [];
  let work = 0;
  let pos = 0;
  let count = 0;
  while (pos < data.length) {
    count += 1;
    if (count > MAX_RTCP_PACKETS) return { ok: false, reason: 'too_many_packets' };
    const first = data[pos]!;
    if (first >> 6 !== 2) return { ok: false, reason: 'version' };
    const rc = first & 0x1f;
    const type = data[pos + 1]!;
    const next = pos + 4 + view.getUint16(pos + 2) * 4;
    if (next > data.length) return { ok: false, reason: 'truncated' };
    let end = next;
    if (first & 0x20) {
      // padded by at least its count octet; RFC 3550 pads only the last sub-packet, but libwebrtc (and
      // werift, for transport-cc) pad any, and libwebrtc reads them
      const padding = data[next - 1]!;
      if (padding === 0 || padding > next - pos - 4) return { ok: false, reason: 'padding' };
      end = next - padding;
    }
    const cost = bodyCost(type, rc, view, pos + 4, end);
    if (!cost) return { ok: false, reason: 'malformed' };
    work += 1 + cost.work;
    if (cost.parse) parts.push({ type, count: rc, start: pos + 4, end });
    pos = next;
  }
  if (work > WORK_PER_BYTE * data.length) return { ok: false, reason: 'too_costly' };
  return { ok: true, parts, work };
}

function bodyCost(type: number, rc: number, view: DataView, start: number, end: number): BodyCost | undefined {
  const length = end - start;
  switch (type) {
    // SSRC, sender info (20 bytes), then RC report blocks of 24 bytes; profile extensions may follow
    case RTCP_SR: return length >= 24 + 24 * rc ? { work: rc, parse: true } : undefined;
    case RTCP_RR: return length >= 4 + 24 * rc ? { work: rc, parse: true } : undefined;
    case RTCP_SDES: return sdesFits(view, start, end, rc) ? { work: 0, parse: false } : undefined;
    case RTCP_RTPFB: return transportFeedbackCost(rc, view, start, end);
    case RTCP_PSFB: return payloadFeedbackCost(rc, view, start, end);
    // BYE, APP, XR and the rest: nothing on the node reads them
    default: return { work: 0, parse: false };
  }
}

/** SDES (RFC 3550 section 6.5): RC chunks, each an SSRC then items up to a null octet, padded to 32 bits. */
function sdesFits(view: DataView, start: number, end: number, rc: number): boolean {
  let pos = start;
  for (let chunk = 0; chunk < rc; chunk++) {
    pos += 4;
    for (;;) {
      if (pos >= end) return false;
      const itemType = view.getUint8(pos);
      if (itemType === 0) break;
      if (pos + 2 > end) return false;
      pos += 2 + view.getUint8(pos + 1);
    }
    // the null octet, then up to the next 32-bit boundary
    pos = start + Math.ceil((pos + 1 - start) / 4) * 4;
    if (pos > end) return false;
  }
  return true;
}

function transportFeedbackCost(fmt: number, view: DataView, start: number, end: number): BodyCost | undefined {
  const length = end - start;
  // sender SSRC and media SSRC come first in every feedback message (RFC 4585 section 6.1)
  if (length < 8) return undefined;
  if (fmt === FMT_NACK) {
    // FCI entries of 4 bytes: a packet ID and a bitmask of the 16 after it
    return (length - 8) % 4 === 0 ? { work: ((length - 8) / 4) * 17, parse: true } : undefined;
  }
  if (fmt === FMT_TWCC) {
    const work = twccWork(view, start, end);
    return work === undefined ? undefined : { work, parse: true };
  }
  return { work: 0, parse: false };
}

/**
 * A transport-cc feedback (twcc-compact.ts): its packet chunks cover exactly the status count and its
 * receive deltas fit. Returns the objects parsing it builds, or undefined: a chunk, an entry per run of
 * statuses (a run of lost packets is one, however long) and one per delta byte at most. Never one per
 * status: a run-length chunk of 2 bytes reports up to 8,191 packets, and after a network blip
 * libwebrtc honestly reports thousands lost in a few bytes.
 */
function twccWork(view: DataView, start: number, end: number): number | undefined {
  const chunks = readTwccChunks(view, start, end, ignoreRun);
  if (!chunks || chunks.deltaStart + chunks.deltaBytes > end) return undefined;
  return chunks.chunks + chunks.runs + chunks.deltaBytes;
}

function ignoreRun(): void {
  // the check counts the runs; parsing (twcc-compact.ts) reads them
}

function payloadFeedbackCost(fmt: number, view: DataView, start: number, end: number): BodyCost | undefined {
  const length = end - start;
  if (length < 8) return undefined;
  if (fmt === FMT_PLI) return { work: 0, parse: true };
  if (fmt === FMT_FIR) return (length - 8) % 8 === 0 ? { work: (length - 8) / 8, parse: true } : undefined;
  // REMB (draft-alvestrand-rmcat-remb-03): 'REMB', the SSRC count and the bitrate, then that many SSRCs
  if (fmt === FMT_AFB && length >= 12 && view.getUint32(start + 8) === REMB) {
    if (length < 16) return undefined;
    const ssrcs = view.getUint8(start + 12);
    // werift routes it to its own sender, which the node does not send with: checked, not parsed
    return length === 16 + 4 * ssrcs ? { work: ssrcs, parse: false } : undefined;
  }
  return { work: 0, parse: false };
}

/** 'REMB' in ASCII, the unique identifier of a REMB message. */
const REMB = 0x52454d42;
