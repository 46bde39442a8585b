import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';

/** Paths censored wherever they appear in a log record: defense in depth, since no body is logged. */
export const REDACT_PATHS = [
  'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization',
  'req.headers.cookie', 'password', '*.password', 'app_secret', '*.app_secret', 'refresh_token',
  '*.refresh_token', 'access_token', '*.access_token', 'key', '*.key', 'media.key', '*.media.key',
  'secret', '*.secret', 'credential', '*.credential', 'token', '*.token',
  // the bytes of a request the HTTP parser refused (headers included), attached to its error
  'rawPacket', '*.rawPacket',
];

// pino's isoTime, remembered for the current millisecond: under load many lines share one
let lastTimeMs = -1;
let lastTime = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== lastTimeMs) {
    lastTimeMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

/** JSON lines on standard error (standard output carries the role lines), or on `destination`. */
export function createLogger(level: string, destination: DestinationStream = stderrDestination()): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: isoTime,
    },
    destination,
  );
}

/** How long one line may wait for a full pipe to drain before it is dropped. */
const FULL_PIPE_WAIT_MS = 1000;
const RETRY_MS = 10;

/**
 * Writes each line at once to standard error, never buffering it for later: a buffered logger
 * that flushes on exit waits for ever when standard error is a pipe nobody reads, and so would
 * the process. A line that cannot be written within FULL_PIPE_WAIT_MS (pipe full) is dropped, and
 * once the reader is gone (EPIPE) nothing more is written.
 */
export function stderrDestination(fd = 2): DestinationStream & { flush(cb?: (err?: Error) => void): void } {
  let closed = false;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    write(line: string): void {
      if (closed) return;
      let bytes = Buffer.from(line, 'utf8');
      let waited = 0;
      while (bytes.length > 0) {
        try {
          bytes = bytes.subarray(writeSync(fd, bytes));
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'EAGAIN' && waited < FULL_PIPE_WAIT_MS) {
            Atomics.wait(pause, 0, 0, RETRY_MS);
            waited += RETRY_MS;
            continue;
          }
          if (code !== 'EAGAIN') closed = true;
          return;
        }
      }
    },
    flush(cb?: (err?: Error) => void): void {
      cb?.();
    },
  };
}
