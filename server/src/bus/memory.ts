import type { BusEvent, EventBus } from '../core/ports.ts';

/** In-process event bus (the embedded default): every subscriber of this process, in order. */
export function createMemoryBus(onHandlerError: (err: unknown) => void): EventBus {
  const handlers = new Set<(event: BusEvent) => void>();
  return {
    reach: 'process',
    async publish(event) {
      for (const handler of handlers) {
        try {
          handler(event);
        } catch (err) {
          onHandlerError(err);
        }
      }
    },
    subscribe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    // nothing is lost between the publisher and the subscribers of one process
    onResync: () => () => {},
    async close() {
      handlers.clear();
    },
  };
}
