/**
 * A transport-cc feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01, section 3.1) read into
 * a compact form: one entry per packet reported received, with its receive delta, and one per run of
 * packets reported lost, however long (docs/decisions.md, "What a client's RTP and RTCP may cost").
 *
 * werift's `TransportWideCC.deSerialize` builds an object per status, lost ones included, and its own
 * sender builds a result per status again: after a network blip libwebrtc reports up to 0x7FFE lost
 * packets in a few bytes, and an honest feedback would cost as much as a hostile one. Read here, a
 * feedback costs the node a bounded number of objects per byte whatever it reports: the received
 * statuses each need a delta byte, and a run of lost ones is a single entry.
 */
import { TransportWideCC, type RtcpHeader } from 'werift';

/** The fixed part of a transport-cc feedback's body: SSRCs, base sequence number, status count, reference time and feedback count. */
export const TWCC_FIXED_BYTES = 16;

/** Statuses in a feedback's packet chunks, and where its receive deltas start. */
export interface TwccChunks {
  readonly statusCount: number;
  readonly chunks: number;
  /** Calls of `run` the chunks made: one per run-length chunk, at most one per symbol of a status vector chunk. */
  readonly runs: number;
  /** Bytes of receive deltas the received statuses need (1 small, 2 large). */
  readonly deltaBytes: number;
  readonly deltaStart: number;
}

/**
 * Reads the packet chunks of a transport-cc feedback whose body lies in [start, end): calls
 * `run(status, count)` for each stretch of equal statuses (0 not received, 1 small delta, 2 large
 * delta) in order, never past the status count. The chunks must cover exactly the status count: a run
 * never reaches past it, a status vector's unused symbols may (they are ignored), and no symbol is 3.
 * Returns undefined when the chunks are malformed or do not fit; the deltas are not checked here.
 */
export function readTwccChunks(view: DataView, start: number, end: number, run: (status: number, count: number) => void): TwccChunks | undefined {
  if (end - start < TWCC_FIXED_BYTES) return undefined;
  const statusCount = view.getUint16(start + 10);
  let pos = start + TWCC_FIXED_BYTES;
  let covered = 0;
  let chunks = 0;
  let runs = 0;
  let deltaBytes = 0;
  const emit = (status: number, count: number): void => {
    runs += 1;
    deltaBytes += status * count;
    covered += count;
    run(status, count);
  };
  while (covered < statusCount) {
    if (pos + 2 > end) return undefined;
    const chunk = view.getUint16(pos);
    pos += 2;
    chunks += 1;
    if ((chunk & 0x8000) === 0) {
      const status = (chunk >> 13) & 0x3;
      const length = chunk & 0x1fff;
      if (status === 3 || length === 0 || length > statusCount - covered) return undefined;
      emit(status, length);
      continue;
    }
    // a status vector: 14 one-bit symbols (1 received with a small delta) or 7 two-bit ones
    const bits = (chunk & 0x4000) === 0 ? 1 : 2;
    const mask = (1 << bits) - 1;
    let pending = -1;
    let same = 0;
    for (let shift = 14 - bits; shift >= 0; shift -= bits) {
      const symbol = (chunk >> shift) & mask;
      if (symbol === 3) return undefined;
      if (covered + same >= statusCount) continue;
      if (symbol !== pending && same > 0) {
        emit(pending, same);
        same = 0;
      }
      pending = symbol;
      same += 1;
    }
    if (same > 0) emit(pending, same);
  }
  return { statusCount, chunks, runs, deltaBytes, deltaStart: pos };
}

/** One entry of a compact feedback, in sequence order: a received packet and its receive delta (µs), or a run of lost packets. */
export type TwccEntry =
  | { readonly offset: number; readonly deltaUs: number }
  | { readonly offset: number; readonly lost: number };

/**
 * A transport-cc feedback in compact form. It is a werift `TransportWideCC` without chunks or deltas,
 * so werift routes it as it would its own (its sender then finds no result to read); the node reads
 * `entries`.
 */
export class CompactTwcc extends TransportWideCC {
  readonly entries: readonly TwccEntry[];

  constructor(props: Partial<TransportWideCC>, entries: readonly TwccEntry[]) {
    super(props);
    this.entries = entries;
  }
}

/** Reads a transport-cc feedback's body in [start, end) of `data`; undefined when malformed. */
export function parseCompactTwcc(data: Uint8Array, start: number, end: number, header: RtcpHeader): CompactTwcc | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const entries: TwccEntry[] = [];
  let offset = 0;
  const runs: [number, number][] = [];
  const chunks = readTwccChunks(view, start, end, (status, count) => {
    runs.push([status, count]);
  });
  if (!chunks || chunks.deltaStart + chunks.deltaBytes > end) return undefined;
  let pos = chunks.deltaStart;
  for (const [status, count] of runs) {
    if (status === 0) {
      const last = entries[entries.length - 1];
      if (last && 'lost' in last) entries[entries.length - 1] = { offset: last.offset, lost: last.lost + count };
      else entries.push({ offset, lost: count });
    } else {
      for (let i = 0; i < count; i += 1) {
        // small: unsigned 8 bits, large: signed 16 bits, both in multiples of 250 µs
        const delta = status === 1 ? view.getUint8(pos) : view.getInt16(pos);
        pos += status;
        entries.push({ offset: offset + i, deltaUs: delta * 250 });
      }
    }
    offset += count;
  }
  return new CompactTwcc({
    header,
    length: header.length,
    senderSsrc: view.getUint32(start),
    mediaSourceSsrc: view.getUint32(start + 4),
    baseSequenceNumber: view.getUint16(start + 8),
    packetStatusCount: chunks.statusCount,
    referenceTime: (view.getUint16(start + 12) << 8) | view.getUint8(start + 14),
    fbPktCount: view.getUint8(start + 15),
    packetChunks: [],
    recvDeltas: [],
  }, entries);
}
