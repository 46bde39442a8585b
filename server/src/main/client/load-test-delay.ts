/**
 * One-way delay of `rtc load-test` (docs/reference/cli.md, "Load test"): each synthetic publisher
 * writes its send time into the payloads it makes, past the bytes the server reads (an Opus
 * packet's TOC byte; a VP8 frame's 10-byte key-frame header), and each subscriber, in the same
 * process and on the same clock, reads it back on arrival. The server forwards payloads untouched,
 * so what a subscriber measures is the way through the platform: its node, and the relay hop when
 * the publisher is on another node.
 */

/** The send time, a float64 of milliseconds (performance.now()), sits this far into an Opus payload: after its TOC byte. */
export const OPUS_STAMP_OFFSET = 1;
/** ... and this far into a VP8 frame: after the frame tag, start code and sizes of a key frame. */
export const VP8_FRAME_STAMP_OFFSET = 10;
const STAMP_BYTES = 8;

/** Writes `sentAtMs` at `offset` when the payload has room for it; says whether it did. */
export function stampSendTime(payload: Buffer, offset: number, sentAtMs: number): boolean {
  if (payload.length < offset + STAMP_BYTES) return false;
  payload.writeDoubleLE(sentAtMs, offset);
  return true;
}

/** The send time at `offset`, or undefined when the payload is too short or holds none (a finite, positive time). */
export function readSendTime(payload: Uint8Array, offset: number): number | undefined {
  if (payload.length < offset + STAMP_BYTES) return undefined;
  const value = Buffer.from(payload.buffer, payload.byteOffset + offset, STAMP_BYTES).readDoubleLE(0);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Delays in fixed buckets, so that a subscriber of a long run keeps a few kilobytes whatever the
 * packet count: 0.1 ms wide up to 50 ms, 1 ms up to 1 s, 100 ms up to 30 s; longer ones count in
 * the last. A percentile reads as its bucket's middle.
 */
export class DelayHistogram {
  private static readonly edges: readonly { readonly upTo: number; readonly width: number }[] = [
    { upTo: 50, width: 0.1 }, { upTo: 1000, width: 1 }, { upTo: 30_000, width: 100 },
  ];
  private static readonly starts: readonly number[] = (() => {
    const starts: number[] = [];
    let from = 0;
    let index = 0;
    for (const { upTo, width } of DelayHistogram.edges) {
      starts.push(index);
      index += Math.round((upTo - from) / width);
      from = upTo;
    }
    starts.push(index);
    return starts;
  })();
  private readonly counts = new Uint32Array(DelayHistogram.starts.at(-1)!);
  private total = 0;

  get count(): number {
    return this.total;
  }

  record(delayMs: number): void {
    const ms = Math.max(0, delayMs);
    let from = 0;
    let at = this.counts.length - 1;
    for (const [i, { upTo, width }] of DelayHistogram.edges.entries()) {
      if (ms < upTo) {
        at = DelayHistogram.starts[i]! + Math.floor((ms - from) / width);
        break;
      }
      from = upTo;
    }
    this.counts[at]! += 1;
    this.total += 1;
  }

  /** Adds another histogram's samples to this one's. */
  add(other: DelayHistogram): void {
    for (let i = 0; i < this.counts.length; i++) this.counts[i]! += other.counts[i]!;
    this.total += other.total;
  }

  clear(): void {
    this.counts.fill(0);
    this.total = 0;
  }

  /** The nearest-rank percentile, as its bucket's middle rounded to 0.1 ms; null with no samples. */
  percentile(p: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.min(this.total, Math.max(1, Math.ceil((p / 100) * this.total)));
    let seen = 0;
    let index = 0;
    for (; index < this.counts.length; index++) {
      seen += this.counts[index]!;
      if (seen >= rank) break;
    }
    return Math.round(DelayHistogram.middle(index) * 10) / 10;
  }

  private static middle(index: number): number {
    let from = 0;
    for (const [i, { upTo, width }] of DelayHistogram.edges.entries()) {
      if (index < DelayHistogram.starts[i + 1]!) return from + (index - DelayHistogram.starts[i]! + 0.5) * width;
      from = upTo;
    }
    return from;
  }
}
