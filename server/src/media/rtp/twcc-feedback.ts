import { PacketStatus, RecvDelta, RtcpTransportLayerFeedback, RunLengthChunk, StatusVectorChunk, TransportWideCC } from 'werift';

/** Sequence numbers held between two builds; older ones are dropped unreported. A power of two. */
const CAPACITY = 4096;
const MASK = CAPACITY - 1;
/** A feedback packet stays well under a path MTU; more packets go into the next one. */
const MAX_PACKET_BYTES = 1200;
/** RTCP header, sender SSRC, media SSRC, base sequence, status count, reference time, feedback count. */
const FIXED_BYTES = 20;
/** Receive deltas count 250 µs; the reference time counts 64 ms, that is 256 of them. */
const TICK_US = 250;
const TICKS_PER_REFERENCE = 256;
const REFERENCE_MOD = 1 << 24;

const NOT_RECEIVED = PacketStatus.TypeTCCPacketNotReceived;
const SMALL_DELTA = PacketStatus.TypeTCCPacketReceivedSmallDelta;
const LARGE_DELTA = PacketStatus.TypeTCCPacketReceivedLargeDelta;
type Status = typeof NOT_RECEIVED | typeof SMALL_DELTA | typeof LARGE_DELTA;

const MAX_RUN_LENGTH = 8191;
const TWO_BIT_CAPACITY = 7;
const ONE_BIT_CAPACITY = 14;

/**
 * Packs statuses into the draft's packet chunks the way libwebrtc does (its LastChunk): it holds up
 * to 14 statuses, sends them as a run-length chunk when all are equal, as a 1-bit status vector of
 * 14 when none has a large delta, and otherwise as a 2-bit vector of 7.
 */
class ChunkEncoder {
  readonly chunks: (RunLengthChunk | StatusVectorChunk)[] = [];
  private readonly held = new Uint8Array(ONE_BIT_CAPACITY);
  private size = 0;
  private allSame = true;
  private hasLarge = false;

  get heldChunks(): number {
    return this.size > 0 ? 1 : 0;
  }

  add(status: Status): void {
    if (!this.canAdd(status)) this.emit();
    if (this.size < ONE_BIT_CAPACITY) this.held[this.size] = status;
    this.allSame = this.allSame && (this.size === 0 || status === this.held[0]);
    this.hasLarge = this.hasLarge || status === LARGE_DELTA;
    this.size += 1;
  }

  /** Adds `count` equal statuses, as a run-length chunk's worth at a time once the held ones are out. */
  addRun(status: Status, count: number): void {
    let left = count;
    while (left > 0) {
      if (this.size >= TWO_BIT_CAPACITY && this.size < MAX_RUN_LENGTH && this.allSame && this.held[0] === status) {
        const n = Math.min(left, MAX_RUN_LENGTH - this.size);
        this.size += n;
        left -= n;
      } else {
        this.add(status);
        left -= 1;
      }
    }
  }

  /** Sends what is held as the last chunk of a message. */
  finish(): (RunLengthChunk | StatusVectorChunk)[] {
    if (this.size > 0) {
      if (this.allSame) this.pushRunLength();
      else if (this.size <= TWO_BIT_CAPACITY) this.pushVector(1, this.size);
      else this.pushVector(0, this.size);
      this.size = 0;
    }
    return this.chunks;
  }

  private canAdd(status: Status): boolean {
    if (this.size < TWO_BIT_CAPACITY) return true;
    if (this.size < ONE_BIT_CAPACITY && !this.hasLarge && status !== LARGE_DELTA) return true;
    return this.size < MAX_RUN_LENGTH && this.allSame && this.held[0] === status;
  }

  private emit(): void {
    if (this.allSame) {
      this.pushRunLength();
      this.size = 0;
      this.allSame = true;
      this.hasLarge = false;
      return;
    }
    if (this.size === ONE_BIT_CAPACITY) {
      this.pushVector(0, ONE_BIT_CAPACITY);
      this.size = 0;
      this.allSame = true;
      this.hasLarge = false;
      return;
    }
    // Here 7 <= size < 14 with a large delta among them, or about to come: send 7 in a 2-bit vector.
    this.pushVector(1, TWO_BIT_CAPACITY);
    this.held.copyWithin(0, TWO_BIT_CAPACITY, this.size);
    this.size -= TWO_BIT_CAPACITY;
    this.allSame = true;
    this.hasLarge = false;
    for (let i = 0; i < this.size; i++) {
      this.allSame = this.allSame && this.held[i] === this.held[0];
      this.hasLarge = this.hasLarge || this.held[i] === LARGE_DELTA;
    }
  }

  private pushRunLength(): void {
    this.chunks.push(new RunLengthChunk({ packetStatus: this.held[0]!, runLength: this.size }));
  }

  /** symbolSize 0: 14 one-bit symbols; 1: 7 two-bit symbols. Unused trailing symbols stay 0 (not received). */
  private pushVector(symbolSize: 0 | 1, count: number): void {
    const capacity = symbolSize === 0 ? ONE_BIT_CAPACITY : TWO_BIT_CAPACITY;
    const symbolList: number[] = [];
    for (let i = 0; i < capacity; i++) symbolList.push(i < count ? this.held[i]! : NOT_RECEIVED);
    this.chunks.push(new StatusVectorChunk({ type: 1, symbolSize, symbolList }));
  }
}

/**
 * Receiving side of transport-wide congestion control (draft-holmer-rmcat-transport-wide-cc-extensions-01):
 * one per transport (peer connection). It records the arrival time of every RTP packet of the
 * transport, whatever its m-line, by its transport-wide sequence number, and reports them to the
 * sender, which estimates the bandwidth from the delays; a packet that never arrived is reported
 * too, as "not received" (werift's ReceiverTWCC leaves those out, and the sender then cannot see loss).
 */
export class TwccRecorder {
  private readonly senderSsrc: number;
  /** Arrival time in µs by unwrapped sequence number modulo CAPACITY; NaN when not received. */
  private readonly arrivals = new Float64Array(CAPACITY).fill(Number.NaN);
  private started = false;
  /** Unwrapped sequence numbers: the first not yet reported, and the highest received. */
  private start = 0;
  private highest = -1;
  /** Everything below this was reported already: a packet this late is ignored. */
  private floor = Number.NEGATIVE_INFINITY;
  private feedbackCount = 0;

  constructor(senderSsrc: number) {
    this.senderSsrc = senderSsrc >>> 0;
  }

  /** Every RTP packet of the transport: its transport-wide sequence number (16 bits) and arrival time. */
  record(transportSeq: number, arrivalUs: number): void {
    if (!Number.isFinite(arrivalUs)) return;
    const seq = transportSeq & 0xffff;
    if (!this.started) {
      this.started = true;
      this.start = seq;
      this.highest = seq - 1;
    }
    // The signed 16-bit distance from the highest picks the nearest unwrapped number.
    const u = this.highest + (((seq - this.highest) << 16) >> 16);
    if (u < this.floor) return;
    if (u > this.highest) {
      for (let s = Math.max(this.highest + 1, u - MASK); s < u; s++) this.arrivals[s & MASK] = Number.NaN;
      this.highest = u;
      if (u - this.start >= CAPACITY) this.start = u - MASK;
    } else if (u < this.start) {
      if (this.highest - u >= CAPACITY) return;
      for (let s = u + 1; s < this.start; s++) this.arrivals[s & MASK] = Number.NaN;
      this.start = u;
    } else if (!Number.isNaN(this.arrivals[u & MASK]!)) {
      return;
    }
    this.arrivals[u & MASK] = arrivalUs;
  }

  /**
   * Feedback for everything recorded since the last build (packets in between that never arrived
   * are reported "not received"); [] when nothing new. Several messages when one would pass
   * 1200 bytes, or when two arrivals are too far apart for a receive delta (about ±8 s).
   */
  build(mediaSourceSsrc: number): RtcpTransportLayerFeedback[] {
    const out: RtcpTransportLayerFeedback[] = [];
    if (!this.started || this.start > this.highest) return out;
    let base = this.start;
    while (base <= this.highest) base = this.buildOne(base, mediaSourceSsrc >>> 0, out);
    this.start = this.highest + 1;
    this.floor = this.start;
    return out;
  }

  /** One message from `base` up to a received packet; returns the sequence number after it. */
  private buildOne(base: number, mediaSourceSsrc: number, out: RtcpTransportLayerFeedback[]): number {
    const encoder = new ChunkEncoder();
    const recvDeltas: RecvDelta[] = [];
    let deltaBytes = 0;
    let referenceTicks = 0;
    let previousTicks = 0;
    // Unwrapped numbers can be negative (a packet older than the first one recorded): no -1 sentinel.
    let hasReceived = false;
    let lastReceived = base;
    let seq = base;
    while (seq <= this.highest) {
      let next = seq;
      while (next < this.highest && Number.isNaN(this.arrivals[next & MASK]!)) next++;
      // Rounding each arrival (not each delta) keeps the rounding error from adding up along a message.
      const ticks = Math.round(this.arrivals[next & MASK]! / TICK_US);
      if (!hasReceived) {
        referenceTicks = Math.floor(ticks / TICKS_PER_REFERENCE) * TICKS_PER_REFERENCE;
        previousTicks = referenceTicks;
      }
      const delta = ticks - previousTicks;
      const status: Status = delta >= 0 && delta <= 0xff ? SMALL_DELTA : delta >= -0x8000 && delta <= 0x7fff ? LARGE_DELTA : NOT_RECEIVED;
      if (hasReceived) {
        // A delta beyond 16 bits starts a new message with its own reference time.
        if (status === NOT_RECEIVED) break;
        // Bound on the chunks the lost run and this packet can add (see ChunkEncoder.emit): the held
        // chunk, two flushes before the run is uniform, one per full run, one for this packet.
        const missing = next - seq;
        const chunkBound = encoder.chunks.length + 4 + Math.floor(missing / MAX_RUN_LENGTH);
        if (FIXED_BYTES + 2 * chunkBound + deltaBytes + 2 + 3 > MAX_PACKET_BYTES) break;
      }
      encoder.addRun(NOT_RECEIVED, next - seq);
      encoder.add(status);
      const type = status === SMALL_DELTA ? SMALL_DELTA : LARGE_DELTA;
      recvDeltas.push(new RecvDelta({ type, delta: delta * TICK_US }));
      deltaBytes += type === SMALL_DELTA ? 1 : 2;
      previousTicks = ticks;
      hasReceived = true;
      lastReceived = next;
      seq = next + 1;
    }
    const packetChunks = encoder.finish();
    const feedback = new TransportWideCC({
      senderSsrc: this.senderSsrc,
      mediaSourceSsrc,
      baseSequenceNumber: base & 0xffff,
      packetStatusCount: lastReceived - base + 1,
      referenceTime: (((referenceTicks / TICKS_PER_REFERENCE) % REFERENCE_MOD) + REFERENCE_MOD) % REFERENCE_MOD,
      fbPktCount: this.feedbackCount,
      packetChunks,
      recvDeltas,
    });
    // werift pads to a 32-bit boundary only when the header asks for padding, and sets the P bit
    // whenever asked even if no padding follows: ask exactly when the body is unaligned.
    feedback.header.padding = (16 + 2 * packetChunks.length + deltaBytes) % 4 !== 0;
    this.feedbackCount = (this.feedbackCount + 1) & 0xff;
    out.push(new RtcpTransportLayerFeedback({ feedback, header: feedback.header }));
    return lastReceived + 1;
  }
}
