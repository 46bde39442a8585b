/**
 * Memory of idle media sessions: 5,000 sessions joined (grant verified, proof checked, session
 * keys derived) in one `rtc serve` process, in 100 rooms of 50, sending nothing but one ping each.
 * Figures: the process's resident memory with every session open, its peak, and the growth per
 * session (resident memory after the joins minus before, divided by the count; tokens are issued
 * before the first reading so that only the sessions are counted).
 * Target: 5,000 idle sessions under 500 MB.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson } from './lib/http.ts';
import { WireClient, type WireCredentials } from '../server/src/main/client/media/wire-client.ts';
import { basicAuthorization, createCredential, startPlatformServer } from './lib/platform.ts';
import { readPeakRssBytes } from './lib/proc-stats.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'media-memory';
const ROOM_SIZE = 50;
const CONCURRENCY = 16;
const TARGET_TOTAL_MB = 500;

const SESSIONS = intSetting('BENCH_IDLE_SESSIONS', 5000, 100, 20_000);

function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Runs `task(i)` for i in [0, count) with at most CONCURRENCY at a time. */
async function pool<T>(count: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  }));
  return results;
}

const MB = 1024 * 1024;

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-media-memory-'));
  const platform = await startPlatformServer({
    dataDir: join(work, 'data'), stderrFile: join(work, 'platform.log'), roles: ['api', 'token', 'media'],
    env: {
      RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
      // every session connects from 127.0.0.1, more of them than the media role's default caps admit
      RTC_MEDIA_MAX_CONNECTIONS: String(SESSIONS + CONCURRENCY), RTC_MAX_CONNECTIONS_PER_ADDRESS: String(SESSIONS + CONCURRENCY),
    },
  });
  const clients: WireClient[] = [];
  try {
    const api = platform.urls['api']!;
    const media = platform.urls['media']!;
    const cred = await createCredential(api);
    const authorization = basicAuthorization(cred.appId, cred.appSecret);
    progress(`issuing ${SESSIONS} tokens...`);
    const tokens = await pool(SESSIONS, async (i): Promise<WireCredentials> => {
      const body = { room_id: `idle-${Math.floor(i / ROOM_SIZE)}`, user_id: `user-${i}`, role: 'participant', subscribe_room: true };
      const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify(body), { authorization });
      if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
      return (JSON.parse(res.text) as { media: WireCredentials }).media;
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = residentBytes(platform.pid);
    progress(`joining ${SESSIONS} sessions (server at ${(before / MB).toFixed(0)} MB)...`);
    const joined = await pool(SESSIONS, (i) => WireClient.join(media, tokens[i]!));
    clients.push(...joined);
    // every session answers: none was dropped
    const pongs = await pool(SESSIONS, (i) => joined[i]!.request({ type: 'ping' }));
    if (!pongs.every((p) => p.type === 'pong')) throw new Error('a session did not answer its ping');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = residentBytes(platform.pid);
    const peak = readPeakRssBytes(platform.pid);
    const perSessionKb = (after - before) / SESSIONS / 1024;
    progress(`${SESSIONS} idle sessions: ${(after / MB).toFixed(0)} MB resident (peak ${(peak / MB).toFixed(0)} MB), ` +
      `${perSessionKb.toFixed(1)} KB per session`);
    printFigure({ bench: BENCH, figure: 'rss_per_idle_session', value: perSessionKb, unit: 'KB', sessions: SESSIONS });
    printFigure({ bench: BENCH, figure: `rss_with_${SESSIONS}_idle_sessions`, value: after / MB, unit: 'MB', target: TARGET_TOTAL_MB, met: after / MB < TARGET_TOTAL_MB });
    printFigure({ bench: BENCH, figure: 'peak_rss', value: peak / MB, unit: 'MB', target: TARGET_TOTAL_MB, met: peak / MB < TARGET_TOTAL_MB });
    printFigure({ bench: BENCH, figure: 'rss_before_sessions', value: before / MB, unit: 'MB' });
  } finally {
    for (const c of clients) c.ws.terminate();
    await platform.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
