import { availableParallelism } from 'node:os';
import { DEFAULT_MAX_SESSIONS } from './core/media-placement.ts';
import type { KnownEnv, ReadInt } from './config.ts';

/** The media processes of one `rtc serve` and their capacity (docs/operations/configuration.md, "Media workers"). */
export interface MediaWorkerOptions {
  /** Sessions each media node (each worker) takes before placement prefers another (`RTC_MEDIA_MAX_SESSIONS`). */
  readonly maxSessions: number;
  /** Media processes `rtc serve` runs (`RTC_MEDIA_WORKERS`; `auto`: one per core). */
  readonly workers: number;
  /** Set in a worker by the `rtc serve` that started it: this process is that one media node. */
  readonly workerIndex: number | undefined;
}

const MAX_WORKERS = 256;

/**
 * `RTC_MEDIA_MAX_SESSIONS`, `RTC_MEDIA_WORKERS` and the worker's own `RTC_MEDIA_WORKER_INDEX`,
 * checked against what several media processes need: the media role, a place where their nodes
 * meet (Redis, or the embedded SQLite file), and a port and a share of the UDP range each.
 */
export function mediaWorkerOptions(
  env: KnownEnv, int: ReadInt, problems: string[],
  context: { readonly servesMedia: boolean; readonly postgresWithoutRedis: boolean; readonly mediaPort: number; readonly udpPorts: number | undefined },
): MediaWorkerOptions {
  const maxSessions = int('RTC_MEDIA_MAX_SESSIONS', DEFAULT_MAX_SESSIONS, 1, 1_000_000);
  const raw = env['RTC_MEDIA_WORKERS'] || '1';
  let workers = 1;
  if (raw === 'auto') workers = Math.min(availableParallelism(), MAX_WORKERS);
  else if (/^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= MAX_WORKERS) workers = Number(raw);
  else problems.push(`RTC_MEDIA_WORKERS must be auto or an integer from 1 to ${MAX_WORKERS}`);
  const workerIndex = env['RTC_MEDIA_WORKER_INDEX'] ? int('RTC_MEDIA_WORKER_INDEX', 0, 0, MAX_WORKERS - 1) : undefined;
  if (workers > 1 && workerIndex === undefined) {
    if (!context.servesMedia) problems.push('RTC_MEDIA_WORKERS needs the media role in RTC_ROLES');
    if (context.postgresWithoutRedis) {
      problems.push('RTC_MEDIA_WORKERS above 1 with DATABASE_URL needs REDIS_URL (or REDIS_SENTINELS): the media nodes meet there');
    }
    if (context.mediaPort !== 0 && context.mediaPort + workers - 1 > 65535) {
      problems.push(`RTC_MEDIA_PORT: ${workers} workers need ports ${context.mediaPort} to ${context.mediaPort + workers - 1}`);
    }
    if (context.udpPorts !== undefined && context.udpPorts < 2 * workers) {
      problems.push(`RTC_MEDIA_UDP_PORT_MIN/MAX: ${workers} workers need at least ${2 * workers} UDP ports (they share the range)`);
    }
  }
  return { maxSessions, workers, workerIndex };
}
