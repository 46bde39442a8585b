import { isIP } from 'node:net';
import type { RedisTarget, SentinelAddress } from './client.ts';

/**
 * Redis by URL (`REDIS_URL`) or through Sentinel (`REDIS_SENTINELS` and `REDIS_SENTINEL_MASTER`,
 * with `REDIS_PASSWORD` and `REDIS_SENTINEL_PASSWORD` when they ask for one); a problem never quotes a password.
 */
export function redisTarget(env: Readonly<Record<string, string | undefined>>, problems: string[]): RedisTarget | undefined {
  const url = env['REDIS_URL'] || undefined;
  const sentinelsRaw = env['REDIS_SENTINELS'] || undefined;
  const masterName = env['REDIS_SENTINEL_MASTER'] || undefined;
  const password = env['REDIS_PASSWORD'] || undefined;
  const sentinelPassword = env['REDIS_SENTINEL_PASSWORD'] || undefined;
  if (url !== undefined) {
    const problem = redisUrlProblem(url);
    if (problem) problems.push(problem);
    if (sentinelsRaw !== undefined || masterName !== undefined) {
      problems.push('REDIS_URL and REDIS_SENTINELS/REDIS_SENTINEL_MASTER are two ways to name Redis: set one');
    }
    if (password !== undefined || sentinelPassword !== undefined) {
      problems.push('REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD apply with REDIS_SENTINELS; with REDIS_URL the password is in the URL');
    }
    return { url };
  }
  if (sentinelsRaw === undefined && masterName === undefined) {
    if (password !== undefined || sentinelPassword !== undefined) {
      problems.push('REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD need REDIS_SENTINELS and REDIS_SENTINEL_MASTER');
    }
    return undefined;
  }
  if (sentinelsRaw === undefined) problems.push('REDIS_SENTINEL_MASTER needs REDIS_SENTINELS (host:port,host:port,...)');
  if (masterName === undefined) problems.push('REDIS_SENTINELS needs REDIS_SENTINEL_MASTER (the master group\'s name in the sentinels\' configuration)');
  else if (!/^[A-Za-z0-9._-]{1,128}$/.test(masterName)) {
    problems.push('REDIS_SENTINEL_MASTER must be a name of letters, digits, ".", "_" or "-" (at most 128)');
  }
  const sentinels: SentinelAddress[] = [];
  for (const entry of (sentinelsRaw ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const address = sentinelAddress(entry);
    if (address) sentinels.push(address);
    else problems.push(`REDIS_SENTINELS: ${JSON.stringify(entry)} is not host:port (an IPv6 address in brackets: [::1]:26379)`);
  }
  if (sentinelsRaw !== undefined && sentinels.length === 0 && !problems.some((p) => p.startsWith('REDIS_SENTINELS:'))) {
    problems.push('REDIS_SENTINELS names no sentinel (expected host:port,host:port,...)');
  }
  return { sentinels, masterName: masterName ?? '', password, sentinelPassword };
}

/** `host:port` or `[ipv6]:port`, or undefined. */
function sentinelAddress(entry: string): SentinelAddress | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
  if (!match) return undefined;
  const host = match[1] ?? match[2]!;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535 || (match[1] !== undefined && isIP(host) !== 6)) return undefined;
  return { host, port };
}

/** Why `REDIS_URL` cannot be used, or undefined; like `DATABASE_URL`, a problem never quotes the password. */
function redisUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'REDIS_URL is not a URL (expected redis://[:password@]host:port[/db] or rediss://...)';
  }
  if (url.password) url.password = '***';
  const shown = JSON.stringify(url.href);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return `REDIS_URL: ${shown} is not a redis:// or rediss:// URL`;
  if (!url.hostname) return `REDIS_URL: ${shown} names no host`;
  if (url.pathname.length > 1 && !/^\/\d{1,2}$/.test(url.pathname)) return `REDIS_URL: ${shown} names a database that is not a number`;
  return undefined;
}
