/**
 * The recent payloads of one published stream, kept once for the retransmissions of all its down
 * tracks (docs/protocol/media.md, "Downlink"). Each payload is copied into one slab, so that what a
 * subscriber may ask for again holds no object of its own: a history of references, one per
 * subscriber and packet, kept every payload alive for seconds, long enough for the garbage
 * collector to move it out of the young generation (docs/decisions/webrtc.md).
 *
 * The slab starts small and doubles, up to MAX_BYTES, while it fills before holding WANTED_PACKETS
 * (what a down track's own history numbers); what it held before a doubling is forgotten.
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
    let at = this.capacity === 0 ? 0 : (this.written - this.slabFrom) % this.capacity;
    if (this.slab === undefined || at + length > this.capacity) {
      const filling = this.capacity < MAX_BYTES && this.count - this.slabFirstIndex < WANTED_PACKETS;
      if (this.slab === undefined || length > this.capacity || filling) {
        this.grow(Math.max(length, this.capacity === 0 ? FIRST_BYTES : Math.min(this.capacity * 2, MAX_BYTES)));
      } else {
        this.written += this.capacity - at; // the tail too short for it stays unused
      }
      at = 0;
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
    if (index < this.slabFirstIndex || index >= this.count || this.count - index > ENTRIES) return undefined;
    const slot = index & (ENTRIES - 1);
    const start = this.starts![slot]!;
    if (start < this.written - this.capacity) return undefined;
    const at = (start - this.slabFrom) % this.capacity;
    return this.slab!.subarray(at, at + this.lengths![slot]!);
  }

  private grow(bytes: number): void {
    this.capacity = bytes;
    this.slab = Buffer.allocUnsafeSlow(this.capacity);
    this.starts ??= new Float64Array(ENTRIES);
    this.lengths ??= new Uint16Array(ENTRIES);
    this.slabFrom = this.written;
    this.slabFirstIndex = this.count;
  }
}
