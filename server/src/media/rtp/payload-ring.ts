/**
 * The recent payloads of one published stream, kept once for the retransmissions of all its down
 * tracks (docs/protocol/media.md, "Downlink"). Each payload is copied into one slab, so that what a
 * subscriber may ask for again holds no object of its own: a history of references, one per
 * subscriber and packet, kept every payload alive for seconds, long enough for the garbage
 * collector to move it out of the young generation (docs/decisions/webrtc.md).
 *
 * The slab starts small and doubles, up to MAX_BYTES, while it wraps before holding WANTED_PACKETS
 * (what a down track's own history numbers), taking along what it held.
 */

/** Payloads numbered at once; a power of two. */
const ENTRIES = 4096;
const FIRST_BYTES = 64 * 1024;
/** At most this much payload is kept per stream: about 1,700 full-size video packets. */
const MAX_BYTES = 2 * 1024 * 1024;
/** The slab grows while it holds fewer packets than this when it wraps. */
const WANTED_PACKETS = 1024;

export class PayloadRing {
  private slab: Buffer | undefined;
  private capacity = 0;
  private starts: Float64Array | undefined;
  private lengths: Uint16Array | undefined;
  /** Bytes written since the first payload (absolute positions; a skipped tail counts). */
  private written = 0;
  /** Where the current slab began (entries before it are gone). */
  private slabFrom = 0;
  private slabFirstIndex = 0;
  private count = 0;
  private last: Buffer | undefined;
  private lastIndex = -1;

  /**
   * Keeps a copy of `payload`; returns its index for `get`, the same for the same payload object
   * given again (each down track of the stream keeps the packet it forwards), -1 if too large to keep.
   */
  put(payload: Buffer): number {
    if (payload === this.last) return this.lastIndex;
    const length = payload.length;
    if (length > 0xffff) return -1;
    if (this.slab === undefined) this.grow(FIRST_BYTES, length);
    const laid = this.written - this.slabFrom;
    let at = laid % this.capacity;
    if (laid > 0 && (at === 0 || at + length > this.capacity)) {
      // it wraps: what follows overwrites the oldest, unless the slab is still filling
      if (this.capacity < MAX_BYTES && this.count - this.slabFirstIndex < WANTED_PACKETS) this.grow(this.capacity * 2, length);
      else if (at !== 0) this.written += this.capacity - at; // the tail too short for it stays unused
      at = (this.written - this.slabFrom) % this.capacity;
    }
    payload.copy(this.slab!, at);
    const index = this.count;
    const slot = index & (ENTRIES - 1);
    this.starts![slot] = this.written;
    this.lengths![slot] = length;
    this.written += length;
    this.count += 1;
    this.last = payload;
    this.lastIndex = index;
    return index;
  }

  /** The bytes kept at `index` (a view into the slab: copy before keeping it), undefined once overwritten. */
  get(index: number): Buffer | undefined {
    const slab = this.slab;
    if (!slab || index < this.slabFirstIndex || index >= this.count || this.count - index > ENTRIES) return undefined;
    const slot = index & (ENTRIES - 1);
    const start = this.starts![slot]!;
    if (start < this.written - this.capacity) return undefined;
    const at = (start - this.slabFrom) % this.capacity;
    return slab.subarray(at, at + this.lengths![slot]!);
  }

  /** The stream ended: its payloads go (`get` finds none). */
  release(): void {
    this.slab = undefined;
    this.capacity = 0;
    this.slabFirstIndex = this.count;
    this.last = undefined;
    this.lastIndex = -1;
  }

  /** A slab of at least `bytes` that holds what the old one still held, in order, and `incoming` more. */
  private grow(bytes: number, incoming: number): void {
    this.starts ??= new Float64Array(ENTRIES);
    this.lengths ??= new Uint16Array(ENTRIES);
    // what is still held is the newest entries: from the first one `get` finds
    let first = Math.max(this.slabFirstIndex, this.count - ENTRIES);
    while (first < this.count && this.get(first) === undefined) first += 1;
    let held = 0;
    for (let index = first; index < this.count; index += 1) held += this.lengths[index & (ENTRIES - 1)]!;
    const slab = Buffer.allocUnsafeSlow(Math.max(bytes, held + incoming));
    const from = this.written;
    let at = 0;
    for (let index = first; index < this.count; index += 1) {
      const kept = this.get(index)!;
      kept.copy(slab, at);
      this.starts[index & (ENTRIES - 1)] = from + at;
      at += kept.length;
    }
    this.slab = slab;
    this.capacity = slab.length;
    this.slabFrom = from;
    this.written = from + at;
    this.slabFirstIndex = first;
  }
}
