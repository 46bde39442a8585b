/**
 * A send queue drained at a rate (docs/protocol/media.md, "Bandwidth"): what is queued leaves in
 * order, no faster than `rateBps()` allows, so that a burst (a key frame of many packets) spreads
 * over time rather than overflowing a slow link's router queue at once. An idle pacer lets one
 * interval's worth out at once. What would wait longer than `maxQueueMs` at the current rate is
 * given back to `onOverflow` with everything still queued, and the queue starts empty again.
 */
export interface PacerOptions<T> {
  /** Sends one item now. */
  send(item: T): void;
  /** The rate to drain at, read at each step (bit/s). */
  rateBps(): number;
  onOverflow(dropped: readonly T[]): void;
  readonly maxQueueMs: number;
  /** How often the queue drains while something waits. */
  readonly intervalMs: number;
  now(): number;
  /** Runs `fn` every `ms` until the returned function is called; setInterval by default. */
  every?(ms: number, fn: () => void): () => void;
}

interface Entry<T> {
  readonly item: T;
  readonly bytes: number;
}

function everyInterval(ms: number, fn: () => void): () => void {
  const timer = setInterval(fn, ms);
  timer.unref();
  return () => clearInterval(timer);
}

export class Pacer<T> {
  private readonly options: PacerOptions<T>;
  private queue: (Entry<T> | undefined)[] = [];
  private head = 0;
  private queuedBytes = 0;
  private budget = 0;
  private lastMs = 0;
  private stop: (() => void) | undefined;

  constructor(options: PacerOptions<T>) {
    this.options = options;
  }

  /** Whether nothing waits. */
  get idle(): boolean {
    return this.head >= this.queue.length;
  }

  /** Whether an item of `bytes` queued now would leave within `maxQueueMs` (an empty queue takes anything). */
  fits(bytes: number): boolean {
    return this.queuedBytes === 0 || ((this.queuedBytes + bytes) * 8 * 1000) / this.options.rateBps() <= this.options.maxQueueMs;
  }

  /**
   * Whether an item of `bytes` may leave at once, as `enqueue` would send it: nothing waits and the
   * budget allows it. When true the budget is charged and the caller sends the item itself (no
   * queue entry for the common case of a pacer that keeps up).
   */
  admit(bytes: number): boolean {
    if (!this.idle || this.stop !== undefined) return false;
    this.refill();
    if (this.budget <= 0) return false;
    this.budget -= bytes;
    return true;
  }

  /** Queues an item of `bytes` (what it costs the link) behind the others. */
  enqueue(item: T, bytes: number): void {
    if (!this.fits(bytes)) this.overflow();
    this.queue.push({ item, bytes });
    this.queuedBytes += bytes;
    if (this.stop !== undefined) return;
    this.refill();
    this.drain();
    if (!this.idle) this.stop = (this.options.every ?? everyInterval)(this.options.intervalMs, () => this.drain());
  }

  /** Idle: what the time since the last send allows, at most one interval's worth at once. */
  private refill(): void {
    const at = this.options.now();
    const step = this.options.rateBps() / 8 / 1000;
    this.budget = Math.min(this.budget + step * Math.max(at - this.lastMs, 0), step * this.options.intervalMs);
    this.lastMs = at;
  }

  /** Drops what waits, without sending it or telling anyone. */
  close(): void {
    this.stop?.();
    this.stop = undefined;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
  }

  private drain(): void {
    const { rateBps, intervalMs, now, send } = this.options;
    const at = now();
    const step = rateBps() / 8 / 1000;
    const add = step * Math.max(at - this.lastMs, 0);
    this.lastMs = at;
    // a late timer sends what its lateness allowed, never more
    this.budget = Math.min(this.budget + add, Math.max(add, step * intervalMs));
    while (this.head < this.queue.length && this.budget > 0) {
      const entry = this.queue[this.head]!;
      this.queue[this.head] = undefined;
      this.head += 1;
      this.queuedBytes -= entry.bytes;
      this.budget -= entry.bytes;
      send(entry.item);
    }
    if (this.idle) {
      this.queue = [];
      this.head = 0;
      this.queuedBytes = 0;
      this.stop?.();
      this.stop = undefined;
    } else if (this.head > 1024) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Gives back everything queued to `onOverflow` (as when the bound is passed), and starts empty. */
  overflow(): void {
    const dropped: T[] = [];
    for (let i = this.head; i < this.queue.length; i++) dropped.push(this.queue[i]!.item);
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.options.onOverflow(dropped);
  }
}
