import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { QueueSink } from './send-queue.ts';

const SEND_OPTIONS = { binary: true, compress: false } as const;

/**
 * Where a session's queue writes. Writes made in one turn of the event loop (every frame of one
 * read from a publisher, a broadcast) leave in one `writev`: the socket is corked at the first
 * write and uncorked once the turn's synchronous work is done.
 */
export function socketSink(ws: WebSocket, socket: Duplex): QueueSink {
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  return {
    write(message) {
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(uncork);
      }
      ws.send(message, SEND_OPTIONS);
    },
    backlog: () => ws.bufferedAmount,
  };
}
