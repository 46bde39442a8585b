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

/** How long one write may wait for a full pipe to drain before its lines are dropped. */
const FULL_PIPE_WAIT_MS = 1000;
const RETRY_MS = 10;
/** Lines of one turn written together once they reach this many bytes, without waiting for the turn's end. */
const BATCH_BYTES = 64 * 1024;

/** Destinations with lines not yet written: written synchronously when the process exits. */
const unwritten = new Set<() => void>();
let exitHooked = false;

/**
 * Writes the lines of each turn of the event loop to standard error together, at the end of that
 * turn (one system call for every request a busy server answered in it, where one a line cost a
 * token request about a tenth of its time), and never holds a line longer: a logger that buffers
 * for later and flushes on exit waits for ever when standard error is a pipe nobody reads, and so
 * would the process. A write that cannot finish within FULL_PIPE_WAIT_MS (pipe full) drops its
 * lines, and once the reader is gone (EPIPE) nothing more is written. Lines still waiting when the
 * process exits (`process.exit`, an uncaught exception) are written then; a process killed by a
 * signal it does not handle loses at most its current turn's lines.
 */
export function stderrDestination(fd = 2): DestinationStream & { flush(cb?: (err?: Error) => void): void } {
  let closed = false;
  let lines: string[] = [];
  let bytes = 0;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const writeAll = (text: string): void => {
    let rest = Buffer.from(text, 'utf8');
    let waited = 0;
    while (rest.length > 0) {
      try {
        rest = rest.subarray(writeSync(fd, rest));
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
  };
  const flushNow = (): void => {
    unwritten.delete(flushNow);
    if (lines.length === 0) return;
    const text = lines.length === 1 ? lines[0]! : lines.join('');
    lines = [];
    bytes = 0;
    if (!closed) writeAll(text);
  };
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const flush of [...unwritten]) flush();
    });
  }
  return {
    write(line: string): void {
      if (closed) return;
      lines.push(line);
      bytes += line.length;
      if (bytes >= BATCH_BYTES) return flushNow();
      if (unwritten.has(flushNow)) return;
      unwritten.add(flushNow);
      setImmediate(flushNow);
    },
    flush(cb?: (err?: Error) => void): void {
      flushNow();
      cb?.();
    },
  };
}
