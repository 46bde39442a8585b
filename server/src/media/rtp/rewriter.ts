/**
 * One continuous RTP stream for a subscriber out of whatever the server forwards on its m-line: a
 * simulcast layer now, another after a switch, a new publisher of the same stream id later
 * (docs/protocol/media.md, "Layers"). Sequence numbers, timestamps and the VP8 picture id and
 * TL0PICIDX continue across every change of source, so the subscriber's jitter buffer and decoder
 * see one stream with a key frame where the source changed.
 */

/** What a forwarded packet becomes on the subscriber's m-line. */
export interface Rewritten {
  readonly seq: number;
  readonly timestamp: number;
  readonly pictureId: number | undefined;
  readonly tl0PicIdx: number | undefined;
}

/** Whether a is after b in 16-bit sequence space. */
export function seqAfter(a: number, b: number): boolean {
  return a !== b && ((a - b) & 0xffff) < 0x8000;
}

export class StreamRewriter {
  private readonly clockRate: number;
  private source: number | undefined;
  private seqOffset = 0;
  private tsOffset = 0;
  private picOffset = 0;
  private tl0Offset = 0;
  /** Incoming sequence number of the first packet forwarded from the current source. */
  private firstInSeq = 0;
  /** Packets before this incoming sequence number keep the previous seqOffset (padding was added between). */
  private bumpInSeq: number | undefined;
  private previousSeqOffset = 0;
  private started = false;
  private lastSeq = 0;
  private lastTs = 0;
  private lastPic = 0;
  private lastTl0 = 0;
  private lastSentMs = 0;
  private lastInSeq = 0;

  constructor(clockRate: number) {
    this.clockRate = clockRate;
  }

  get hasSent(): boolean {
    return this.started;
  }

  /** The last timestamp sent (for padding). */
  get timestamp(): number {
    return this.lastTs;
  }

  /**
   * Maps a packet of `source` (a layer's SSRC). A packet of another source than the current one is
   * only taken when `switchable` (the start of a key frame, or audio): it becomes the current source
   * and numbering continues from the last packet sent. Undefined: the packet is not forwarded.
   */
  map(source: number, seq: number, timestamp: number, pictureId: number | undefined, tl0PicIdx: number | undefined,
    switchable: boolean, nowMs: number): Rewritten | undefined {
    if (source !== this.source) {
      if (!switchable) return undefined;
      this.source = source;
      this.bumpInSeq = undefined;
      this.firstInSeq = seq;
      this.lastInSeq = seq;
      if (this.started) {
        this.seqOffset = (this.lastSeq + 1 - seq) & 0xffff;
        const elapsed = Math.max(1, Math.round(((nowMs - this.lastSentMs) * this.clockRate) / 1000));
        this.tsOffset = (this.lastTs + elapsed - timestamp) >>> 0;
        this.picOffset = pictureId === undefined ? 0 : this.lastPic + 1 - pictureId;
        this.tl0Offset = tl0PicIdx === undefined ? 0 : this.lastTl0 + 1 - tl0PicIdx;
      } else {
        this.seqOffset = 0;
        this.tsOffset = 0;
        this.picOffset = 0;
        this.tl0Offset = 0;
      }
    } else if (seqAfter(this.firstInSeq, seq)) {
      return undefined; // older than the switch: it belongs to what the subscriber never got
    }
    const offset = this.bumpInSeq !== undefined && seqAfter(this.bumpInSeq, seq) ? this.previousSeqOffset : this.seqOffset;
    const out: Rewritten = {
      seq: (seq + offset) & 0xffff,
      timestamp: (timestamp + this.tsOffset) >>> 0,
      pictureId: pictureId === undefined ? undefined : (pictureId + this.picOffset) & 0x7fff,
      tl0PicIdx: tl0PicIdx === undefined ? undefined : (tl0PicIdx + this.tl0Offset) & 0xff,
    };
    if (!this.started || seqAfter(out.seq, this.lastSeq)) {
      this.lastSeq = out.seq;
      this.lastTs = out.timestamp;
      this.lastInSeq = seq;
      if (out.pictureId !== undefined) this.lastPic = out.pictureId;
      if (out.tl0PicIdx !== undefined) this.lastTl0 = out.tl0PicIdx;
      this.lastSentMs = nowMs;
    }
    this.started = true;
    return out;
  }

  /**
   * Sequence numbers for `count` padding packets placed after the last packet sent; later packets of
   * the source move up by as many. Only call between frames (after a packet with the marker bit).
   */
  takePadding(count: number): number[] {
    const seqs: number[] = [];
    for (let i = 1; i <= count; i += 1) seqs.push((this.lastSeq + i) & 0xffff);
    this.lastSeq = (this.lastSeq + count) & 0xffff;
    this.previousSeqOffset = this.seqOffset;
    this.seqOffset = (this.seqOffset + count) & 0xffff;
    this.bumpInSeq = (this.lastInSeq + 1) & 0xffff;
    return seqs;
  }

  /** Forgets the source: the next packet must be switchable and numbering continues from the last one sent. */
  reset(): void {
    this.source = undefined;
  }

  /**
   * The packets numbered from `seq` on never left (a send queue dropped them, and nothing numbered
   * after them went out): the source is forgotten as by `reset`, and numbering goes on from `seq`,
   * so the subscriber sees no gap it would ask again for in vain.
   */
  rewind(seq: number): void {
    if (!this.started) return;
    this.source = undefined;
    this.lastSeq = (seq - 1) & 0xffff;
  }
}
