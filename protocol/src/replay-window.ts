/**
 * Sliding anti-replay window over sequence numbers (RFC 4303 section 3.4.3 style): accepts a
 * sequence number once, newer ones always, older ones only within `size` of the newest.
 * `check` is a pure test; `commit` records a number once its message has authenticated.
 */
export class ReplayWindow {
  private newest = 0;
  private readonly bits: Uint32Array;
  private readonly size: number;

  constructor(size: number) {
    if (!Number.isInteger(size) || size <= 0 || size % 32 !== 0) throw new TypeError('size must be a positive multiple of 32');
    this.size = size;
    this.bits = new Uint32Array(size / 32);
  }

  check(seq: number): boolean {
    if (seq > this.newest) return true;
    if (seq <= this.newest - this.size || seq <= 0) return false;
    const slot = seq % this.size;
    return ((this.bits[slot >>> 5] ?? 0) & (1 << (slot & 31))) === 0;
  }

  commit(seq: number): void {
    if (seq > this.newest) {
      if (seq - this.newest >= this.size) this.bits.fill(0);
      else for (let s = this.newest + 1; s < seq; s++) this.clear(s);
      this.newest = seq;
    }
    const slot = seq % this.size;
    this.bits[slot >>> 5] = (this.bits[slot >>> 5] ?? 0) | (1 << (slot & 31));
  }

  private clear(seq: number): void {
    const slot = seq % this.size;
    this.bits[slot >>> 5] = (this.bits[slot >>> 5] ?? 0) & ~(1 << (slot & 31));
  }
}
