/**
 * `rtc serve` in this process: the same composition root (`startPlatform`) with the roles
 * listening on real loopback ports, its log lines kept for the test to read. For the tests whose
 * point is the wire (HTTP, WebSocket, UDP) rather than the process.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../server/src/config.ts';
import { REDACT_PATHS } from '../../server/src/log.ts';
import { startPlatform } from '../../server/src/main/serve.ts';
import { request, type PlatformClient } from './http.ts';

/** The platform's roles in this process; `request` goes over real sockets. */
export interface ServedPlatform extends PlatformClient {
  /** The roles' URLs, and `admin` when the admin listener is on (RTC_ADMIN_PORT). */
  readonly urls: Readonly<Record<string, string>>;
  readonly api: string;
  readonly token: string;
  readonly dataDir: string;
  /** The role lines and every log line written so far. */
  output(): string;
  /** Closes every role (in-flight work finishes) and the store; the data directory stays, for a restart on it. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly dataDir?: string;
  readonly roles?: readonly string[];
}

/** Starts the roles as `rtc serve` would, each on port 0 of 127.0.0.1. */
export async function serveInProcess(options: ServeOptions = {}): Promise<ServedPlatform> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'rtc-test-'));
  const roles = options.roles ?? ['api', 'token'];
  const config = loadConfig({
    RTC_ROLES: roles.join(','),
    RTC_API_PORT: '0',
    RTC_TOKEN_PORT: '0',
    RTC_SIGNALING_PORT: '0',
    RTC_MEDIA_PORT: '0',
    RTC_LOG_LEVEL: 'debug',
    ...options.env,
    RTC_DATA_DIR: dataDir,
  });
  const lines: string[] = [];
  const logger = pino(
    { level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    { write: (line: string) => { lines.push(line); } },
  );
  const urls: Record<string, string> = {};
  const platform = await startPlatform(config, logger, (line) => {
    lines.push(`${line}\n`);
    const parsed = JSON.parse(line) as { role: string; url: string; admin?: string };
    urls[parsed.role] = parsed.url;
    if (parsed.admin) urls['admin'] = parsed.admin;
  });
  let stopped: Promise<void> | undefined;
  return {
    urls,
    api: urls['api'] ?? '',
    token: urls['token'] ?? '',
    request,
    dataDir,
    output: () => lines.join(''),
    stop() {
      stopped ??= platform.close();
      return stopped;
    },
  };
}
