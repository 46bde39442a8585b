/**
 * One direction of an impaired link, as a model with no I/O: for each arriving packet it decides
 * to drop it (random loss, or a full queue in front of the cap) or when to deliver it (after the
 * cap has sent it, plus delay and jitter). The clock is the caller's, the randomness injected.
 */
import type { DirectionSettings } from './link-settings.ts';

/** IPv4 and UDP headers: what a real link carries besides the payload, counted against the cap. */
export const IP_UDP_OVERHEAD_BYTES = 28;

export type Verdict =
  | { readonly kind: 'deliver'; readonly at: number }
  | { readonly kind: 'drop'; readonly reason: 'loss' | 'queue' };

/** Counters of one direction since the link started. */
export interface DirectionCounters {
  /** Packets and payload bytes that arrived. */
  readonly packets: number;
  readonly bytes: number;
  /** Dropped at random. */
  readonly lost: number;
  /** Dropped because the cap's queue was full. */
  readonly queueDropped: number;
  /** Sent on to the far side (counted by the link as it sends them). */
  readonly delivered: number;
  readonly deliveredBytes: number;
}

export class ImpairedDirection {
  private settings: DirectionSettings;
  private readonly random: () => number;
  /** When the capped link will have sent everything it holds (ms on the caller's clock). */
  private busyUntil = Number.NEGATIVE_INFINITY;
  /** The latest delivery time handed out, so that order can be kept. */
  private lastDeliverAt = Number.NEGATIVE_INFINITY;
  private counts = { packets: 0, bytes: 0, lost: 0, queueDropped: 0, delivered: 0, deliveredBytes: 0 };

  constructor(settings: DirectionSettings, random: () => number) {
    this.settings = settings;
    this.random = random;
  }

  /** New settings from the next packet on; what the queue holds keeps its departure times. */
  update(settings: DirectionSettings): void {
    this.settings = settings;
  }

  /** What happens to a packet of `bytes` (payload) arriving at `now` (ms). */
  admit(bytes: number, now: number): Verdict {
    const s = this.settings;
    this.counts.packets++;
    this.counts.bytes += bytes;
    if (s.lossRate > 0 && this.random() < s.lossRate) {
      this.counts.lost++;
      return { kind: 'drop', reason: 'loss' };
    }
    let sentAt = now;
    if (s.rateKbps !== null) {
      // kbit/s is bits per ms
      const sendMs = ((bytes + IP_UDP_OVERHEAD_BYTES) * 8) / s.rateKbps;
      const startAt = Math.max(now, this.busyUntil);
      const waitMs = startAt - now;
      if (waitMs > 0 && waitMs + sendMs > s.queueMs) {
        this.counts.queueDropped++;
        return { kind: 'drop', reason: 'queue' };
      }
      this.busyUntil = startAt + sendMs;
      sentAt = this.busyUntil;
    }
    const jitter = s.jitterMs > 0 ? (this.random() * 2 - 1) * s.jitterMs : 0;
    let at = sentAt + Math.max(0, s.delayMs + jitter);
    if (!s.reorder) at = Math.max(at, this.lastDeliverAt);
    this.lastDeliverAt = Math.max(this.lastDeliverAt, at);
    return { kind: 'deliver', at };
  }

  /** The link sent a packet on. */
  delivered(bytes: number): void {
    this.counts.delivered++;
    this.counts.deliveredBytes += bytes;
  }

  /** How long a packet arriving at `now` would wait in the cap's queue, ms. */
  backlogMs(now: number): number {
    return Math.max(0, this.busyUntil - now);
  }

  counters(): DirectionCounters {
    return { ...this.counts };
  }
}

/**
 * Packets waiting for their delivery time, earliest first; equal times leave in arrival order.
 * A binary heap: with jitter and `reorder`, delivery times do not arrive sorted.
 */
export class DeliveryQueue<T> {
  private readonly heap: { at: number; seq: number; item: T }[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, item: T): void {
    this.heap.push({ at, seq: this.seq++, item });
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** The earliest delivery time waiting, or undefined. */
  nextAt(): number | undefined {
    return this.heap[0]?.at;
  }

  /** Removes and returns, in order, every item due at `now`. */
  popDue(now: number): T[] {
    const due: T[] = [];
    while (this.heap.length > 0 && this.heap[0]!.at <= now) due.push(this.pop());
    return due;
  }

  /** Every item waiting, in no particular order. */
  *items(): IterableIterator<T> {
    for (const entry of this.heap) yield entry.item;
  }

  clear(): void {
    this.heap.length = 0;
  }

  private pop(): T {
    const top = this.heap[0]!;
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < this.heap.length && this.before(left, smallest)) smallest = left;
        if (right < this.heap.length && this.before(right, smallest)) smallest = right;
        if (smallest === i) break;
        this.swap(i, smallest);
        i = smallest;
      }
    }
    return top.item;
  }

  private before(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const x = this.heap[a]!;
    this.heap[a] = this.heap[b]!;
    this.heap[b] = x;
  }
}

/** A seeded pseudo-random generator (mulberry32): the same seed draws the same loss pattern. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
