/**
 * Periodic work of a process on shared timers: every callback of the same period runs from one
 * interval, in the order they were added, so that a thousand subscribers' downlinks, the SQLite
 * bus's poll and the event loop sampler tick in one wake-up of the event loop rather than at
 * phases of their own (each wake-up of an otherwise idle process costs it more CPU than most of
 * the work a tick does). Each callback measures the time since its last run itself (the first run
 * comes up to one period early).
 */
interface Shared {
  readonly timer: NodeJS.Timeout;
  readonly callbacks: Set<() => void>;
}

const shared = new Map<number, Shared>();

/**
 * Runs `fn` every `ms` until the returned function is called. The timer does not hold the process
 * open (it is unref'd), as the process's own intervals do not.
 */
export function everyShared(ms: number, fn: () => void): () => void {
  let group = shared.get(ms);
  if (!group) {
    const callbacks = new Set<() => void>();
    const timer = setInterval(() => {
      for (const callback of callbacks) callback();
    }, ms);
    timer.unref();
    group = { timer, callbacks };
    shared.set(ms, group);
  }
  // a callback is added once, even if the same function comes twice: wrap it to keep each apart
  const entry = (): void => fn();
  group.callbacks.add(entry);
  const joined = group;
  return () => {
    if (!joined.callbacks.delete(entry) || joined.callbacks.size > 0) return;
    clearInterval(joined.timer);
    if (shared.get(ms) === joined) shared.delete(ms);
  };
}
