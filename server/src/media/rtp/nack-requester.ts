export interface NackOptions {
  /** Stop asking for a packet this long after it went missing (e.g. 1000). */
  readonly maxAgeMs: number;
  /** Ask for a packet at most this many times (e.g. 10). */
  readonly maxRetries: number;
  /**
   * Wait this long after a packet went missing before the first ask, in case it was only
   * reordered: a reordered packet that arrives after the ask would be taken for a retransmission
   * and counted as lost in the receiver reports. Default 5 ms: the packets of a frame leave the
   * publisher in a burst, and reordering within one rarely spans more than a few milliseconds.
   */
  readonly reorderDelayMs?: number;
}

/** Default reorder delay before the first ask. */
export const NACK_REORDER_DELAY_MS = 5;
/** Shortest time between two asks for the same packet, whatever the round trip time says. */
export const NACK_MIN_RETRY_INTERVAL_MS = 10;
/** Most packets missing at once; older ones are given up. */
export const NACK_MAX_PENDING = 500;
/** A step in sequence numbers larger than this is a restart or an outage, not loss to repair. */
export const NACK_RESET_JUMP = 1000;

/** Slots of the pending list (live entries and removed ones not yet compacted). A power of two above NACK_MAX_PENDING. */
const CAPACITY = 1024;
const MASK = CAPACITY - 1;
/** Sequence numbers behind the highest whose ask is remembered; a missing packet older than this is given up. */
const WINDOW = 4096;

/**
 * Asks a publisher again for the packets of one received stream (one SSRC) that its uplink lost,
 * with generic NACKs (RFC 4585 section 6.2.1). A packet is asked for a short reorder delay after it
 * went missing, then again each round trip while it is still missing (werift's own requester sends
 * its asks 5 ms apart and gives up before one round trip has passed), up to `maxRetries` times and
 * for at most `maxAgeMs`; after that it is given up and the caller asks for a key frame instead.
 */
export class NackRequester {
  private readonly maxAgeMs: number;
  private readonly maxRetries: number;
  private readonly reorderDelayMs: number;
  /**
   * Missing packets in ascending order of extended sequence number, in a ring between positions
   * `head` and `tail` (slot = position & MASK; both go back to 0 when the list empties). A removed
   * entry keeps its number, so the list stays sorted for binary search, and has `since` NaN.
   */
  private readonly seqs = new Float64Array(CAPACITY);
  private readonly since = new Float64Array(CAPACITY);
  private readonly asked = new Float64Array(CAPACITY);
  private readonly tries = new Uint16Array(CAPACITY);
  private head = 0;
  private tail = 0;
  private live = 0;
  /** Which of the last WINDOW sequence numbers were asked for, by extended number modulo WINDOW. */
  private readonly askedBits = new Uint32Array(WINDOW / 32);
  private started = false;
  /** Highest extended sequence number seen. */
  private highest = 0;
  /** After a jump backwards, the sequence number that confirms the source restarted its numbering. */
  private restartSeq = -1;
  private givenUp = 0;
  /** For the last packet onPacket took as a retransmission: ms from its gap opening to its arrival. */
  recoveredAfterMs = 0;

  constructor(options: NackOptions) {
    const { maxAgeMs, maxRetries, reorderDelayMs = NACK_REORDER_DELAY_MS } = options;
    if (!(maxAgeMs > 0)) throw new TypeError('maxAgeMs must be positive');
    if (!Number.isInteger(maxRetries) || maxRetries < 0 || maxRetries > 0xffff) throw new TypeError('maxRetries must be an integer from 0 to 65535');
    if (!(reorderDelayMs >= 0)) throw new TypeError('reorderDelayMs must not be negative');
    this.maxAgeMs = maxAgeMs;
    this.maxRetries = maxRetries;
    this.reorderDelayMs = reorderDelayMs;
  }

  /** Every packet's sequence number as it arrives; returns whether it was one asked for (a retransmission). */
  onPacket(seq: number, nowMs: number): boolean {
    seq &= 0xffff;
    if (!this.started) {
      this.started = true;
      this.highest = seq;
      return false;
    }
    const diff = ((seq - this.highest) << 16) >> 16;
    if (diff > 0) {
      this.restartSeq = -1;
      if (diff > NACK_RESET_JUMP) {
        // A publisher restart or a long outage: thousands of NACKs would not repair it, a key frame will.
        this.givenUp += diff - 1;
        this.reset(seq);
        return false;
      }
      for (let s = this.highest + 1; s < this.highest + diff; s++) this.addMissing(s, nowMs);
      this.highest += diff;
      for (let s = this.highest - diff + 1; s <= this.highest; s++) this.clearAsked(s);
      while (this.live > 0 && this.seqs[this.head & MASK]! <= this.highest - WINDOW) this.giveUp(this.head);
      return false;
    }
    if (diff === 0) return false;
    if (diff <= -WINDOW) {
      // Behind anything still pending: a stray old packet, or a source that restarted with lower
      // numbers, taken as such once the next packet follows it (RFC 3550 A.1 does the same).
      if (seq === this.restartSeq) this.reset(seq);
      else this.restartSeq = (seq + 1) & 0xffff;
      return false;
    }
    const ext = this.highest + diff;
    const at = this.find(ext);
    const since = at >= 0 ? this.since[at & MASK]! : Number.NaN;
    if (at >= 0) this.remove(at);
    const slot = ext & (WINDOW - 1);
    const bit = 1 << (slot & 31);
    const word = this.askedBits[slot >>> 5] ?? 0;
    this.askedBits[slot >>> 5] = word & ~bit;
    const asked = (word & bit) !== 0;
    if (asked && !Number.isNaN(since)) this.recoveredAfterMs = nowMs - since;
    return asked;
  }

  /**
   * Sequence numbers to ask for now, ascending from the oldest: those missing for at least the
   * reorder delay and not asked for within the last max(rttMs, 10 ms). Gives up a packet asked for
   * `maxRetries` times once one more interval passed without it, and any packet missing for `maxAgeMs`.
   */
  due(nowMs: number, rttMs: number): number[] {
    const interval = retryInterval(rttMs);
    const out: number[] = [];
    for (let p = this.head; p < this.tail; p++) {
      const i = p & MASK;
      const since = this.since[i]!;
      if (Number.isNaN(since)) continue;
      if (nowMs >= since + this.maxAgeMs) {
        this.giveUp(p);
        continue;
      }
      const tries = this.tries[i]!;
      if (tries >= this.maxRetries) {
        if (tries === 0 || nowMs >= this.asked[i]! + interval) this.giveUp(p);
        continue;
      }
      if (nowMs >= (tries === 0 ? since + this.reorderDelayMs : this.asked[i]! + interval)) {
        const ext = this.seqs[i]!;
        out.push(ext & 0xffff);
        this.tries[i] = tries + 1;
        this.asked[i] = nowMs;
        const slot = ext & (WINDOW - 1);
        this.askedBits[slot >>> 5] = (this.askedBits[slot >>> 5] ?? 0) | (1 << (slot & 31));
      }
    }
    return out;
  }

  /** Missing packets given up since the last call (the caller asks for a key frame if video). */
  takeGivenUp(): number {
    const n = this.givenUp;
    this.givenUp = 0;
    return n;
  }

  /** Earliest time due() has something to do (ask or give up), for the caller's timer; undefined when nothing is missing. */
  nextDueMs(rttMs: number): number | undefined {
    const interval = retryInterval(rttMs);
    let next = Number.POSITIVE_INFINITY;
    for (let p = this.head; p < this.tail; p++) {
      const i = p & MASK;
      const since = this.since[i]!;
      if (Number.isNaN(since)) continue;
      const tries = this.tries[i]!;
      const act = tries === 0 ? since + (this.maxRetries === 0 ? 0 : this.reorderDelayMs) : this.asked[i]! + interval;
      next = Math.min(next, act, since + this.maxAgeMs);
    }
    return next === Number.POSITIVE_INFINITY ? undefined : next;
  }

  private addMissing(ext: number, nowMs: number): void {
    if (this.live >= NACK_MAX_PENDING) this.giveUp(this.head);
    if (this.tail - this.head >= CAPACITY) this.compact();
    const i = this.tail & MASK;
    this.seqs[i] = ext;
    this.since[i] = nowMs;
    this.asked[i] = 0;
    this.tries[i] = 0;
    this.tail += 1;
    this.live += 1;
  }

  private giveUp(position: number): void {
    this.remove(position);
    this.givenUp += 1;
  }

  private remove(position: number): void {
    this.since[position & MASK] = Number.NaN;
    this.live -= 1;
    while (this.head < this.tail && Number.isNaN(this.since[this.head & MASK]!)) this.head += 1;
    if (this.head === this.tail) {
      this.head = 0;
      this.tail = 0;
    }
  }

  /** Moves the live entries together, keeping their order, when removed ones fill the ring. */
  private compact(): void {
    let write = this.head;
    for (let read = this.head; read < this.tail; read++) {
      const from = read & MASK;
      if (Number.isNaN(this.since[from]!)) continue;
      const to = write & MASK;
      if (to !== from) {
        this.seqs[to] = this.seqs[from]!;
        this.since[to] = this.since[from]!;
        this.asked[to] = this.asked[from]!;
        this.tries[to] = this.tries[from]!;
      }
      write += 1;
    }
    this.tail = write;
  }

  /** Position of the live entry for `ext`, or -1. */
  private find(ext: number): number {
    let lo = this.head;
    let hi = this.tail - 1;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const v = this.seqs[mid & MASK]!;
      if (v < ext) lo = mid + 1;
      else if (v > ext) hi = mid - 1;
      else return Number.isNaN(this.since[mid & MASK]!) ? -1 : mid;
    }
    return -1;
  }

  private clearAsked(ext: number): void {
    const slot = ext & (WINDOW - 1);
    this.askedBits[slot >>> 5] = (this.askedBits[slot >>> 5] ?? 0) & ~(1 << (slot & 31));
  }

  private reset(seq: number): void {
    this.givenUp += this.live;
    this.head = 0;
    this.tail = 0;
    this.live = 0;
    this.askedBits.fill(0);
    this.highest = seq;
    this.restartSeq = -1;
  }
}

function retryInterval(rttMs: number): number {
  return rttMs > NACK_MIN_RETRY_INTERVAL_MS ? rttMs : NACK_MIN_RETRY_INTERVAL_MS;
}
