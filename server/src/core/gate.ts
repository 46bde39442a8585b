/**
 * At most `concurrency` tasks at once, at most `queueLimit` more waiting in order; a task over
 * both is refused at once with the error `overflow()` makes, so a burst costs the caller a quick
 * answer instead of holding memory and CPU for everyone.
 */
export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly concurrency: number;
  private readonly queueLimit: number;
  private readonly overflow: () => Error;

  constructor(concurrency: number, queueLimit: number, overflow: () => Error) {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a positive integer');
    if (!Number.isInteger(queueLimit) || queueLimit < 0) throw new RangeError('queueLimit must be a whole number');
    this.concurrency = concurrency;
    this.queueLimit = queueLimit;
    this.overflow = overflow;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queueLimit) throw this.overflow();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      // hand the slot straight to the next waiter, so a newcomer cannot overtake the queue
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
