import pino, { type Logger } from 'pino';

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

/** JSON lines on standard error (standard output carries the role lines). */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: isoTime,
    },
    pino.destination({ fd: 2, sync: false }),
  );
}
