import { KIND_CODE } from '@rtc/protocol';

/** Where a session's queue writes: the WebSocket, and how much the socket still holds. */
export interface QueueSink {
  write(message: Buffer): void;
  backlog(): number;
}

export interface QueueLimits {
  /** Socket backlog above which messages wait in the queue. */
  readonly highWaterBytes: number;
  readonly mediaMaxBytes: number;
  readonly mediaMaxFrames: number;
  readonly controlMaxBytes: number;
}

/** First-in first-out list with O(1) shift. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.head += 1;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

interface Queued {
  readonly message: Buffer;
  readonly order: number;
}

export interface DropCounts {
  audio: number;
  video: number;
  data: number;
}

/**
 * The outgoing queue of one session. Control messages are never dropped and go first; media
 * frames keep their arrival order among themselves. When the media queue is over its bounds,
 * the oldest video frame is dropped first, then the oldest data frame, and audio only when
 * nothing else is left, so a slow subscriber loses picture before sound and never stalls others.
 */
export class SendQueue {
  private readonly control = new Fifo<Buffer>();
  private controlBytes = 0;
  private readonly audio = new Fifo<Queued>();
  private readonly video = new Fifo<Queued>();
  private readonly data = new Fifo<Queued>();
  private mediaBytes = 0;
  private order = 0;
  readonly dropped: DropCounts = { audio: 0, video: 0, data: 0 };

  private readonly sink: QueueSink;
  private readonly limits: QueueLimits;

  constructor(sink: QueueSink, limits: QueueLimits) {
    this.sink = sink;
    this.limits = limits;
  }

  /** Queues a control message; false when the control backlog is over its bound. */
  pushControl(message: Buffer): boolean {
    if (this.isEmpty() && this.sink.backlog() < this.limits.highWaterBytes) {
      this.sink.write(message);
      return true;
    }
    this.control.push(message);
    this.controlBytes += message.length;
    return this.controlBytes <= this.limits.controlMaxBytes;
  }

  /** Queues a media frame of `kind` (1 audio, 2 video, 3 data), applying the drop policy. */
  pushMedia(kind: number, message: Buffer): void {
    if (this.isEmpty() && this.sink.backlog() < this.limits.highWaterBytes) {
      this.sink.write(message);
      return;
    }
    const fifo = kind === KIND_CODE.audio ? this.audio : kind === KIND_CODE.video ? this.video : this.data;
    fifo.push({ message, order: this.order++ });
    this.mediaBytes += message.length;
    while (this.mediaBytes > this.limits.mediaMaxBytes || this.mediaFrames() > this.limits.mediaMaxFrames) {
      if (this.video.length > 0) this.dropOldest(this.video, 'video');
      else if (this.data.length > 0) this.dropOldest(this.data, 'data');
      else this.dropOldest(this.audio, 'audio');
    }
  }

  /** Writes queued messages while the socket has room; call when the socket drains. */
  flush(): void {
    while (this.sink.backlog() < this.limits.highWaterBytes) {
      const control = this.control.shift();
      if (control) {
        this.controlBytes -= control.length;
        this.sink.write(control);
        continue;
      }
      const next = this.oldestMedia();
      if (!next) return;
      const item = next.shift()!;
      this.mediaBytes -= item.message.length;
      this.sink.write(item.message);
    }
  }

  clear(): void {
    this.control.clear();
    this.audio.clear();
    this.video.clear();
    this.data.clear();
    this.controlBytes = 0;
    this.mediaBytes = 0;
  }

  isEmpty(): boolean {
    return this.control.length === 0 && this.mediaFrames() === 0;
  }

  private mediaFrames(): number {
    return this.audio.length + this.video.length + this.data.length;
  }

  private oldestMedia(): Fifo<Queued> | undefined {
    let best: Fifo<Queued> | undefined;
    let bestOrder = Infinity;
    for (const fifo of [this.audio, this.video, this.data]) {
      const head = fifo.peek();
      if (head && head.order < bestOrder) {
        best = fifo;
        bestOrder = head.order;
      }
    }
    return best;
  }

  private dropOldest(fifo: Fifo<Queued>, kind: keyof DropCounts): void {
    const item = fifo.shift();
    if (!item) return;
    this.mediaBytes -= item.message.length;
    this.dropped[kind] += 1;
  }
}
