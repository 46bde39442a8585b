/**
 * How long issuance stops when a dependency of the cluster goes away (docs/operations/scale-out.md):
 * - Redis master killed (SIGKILL) under a steady trickle of token requests on two token processes,
 *   with Redis Sentinel (a master, a replica, three sentinels, quorum 2, down-after 1 s): the time
 *   from the kill to the moment both processes issue again (their first 200 to a request sent
 *   after the kill), over a few failovers;
 * - PostgreSQL restarted (a fast stop, then a start at once) under a steady trickle of console
 *   calls (`GET /v1/projects`, which always reads the store: tokens are issued from the credential
 *   cache meanwhile): from the stop to both processes' first 200 again, and from the start's return to it.
 * Prints one JSON line per figure; see docs/operations/benchmarks.md.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type Postgres } from '../test/helpers/postgres.ts';
import { startRedisSentinels, type RedisSentinelGroup } from '../test/helpers/redis.ts';
import { getJson, postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer } from './lib/platform.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress, removeWork, reportProblems, runBench } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'failover';
const BODY = JSON.stringify({ room_id: 'r1', user_id: 'u1', role: 'speaker' });
/** docs/operations/scale-out.md, "Redis Sentinel": down-after + 3 s + 2 s. */
const FAILOVER_ALLOWANCE_MS = 3000;
const MAX_RECONNECT_DELAY_MS = 2000;
const GIVE_UP_MS = 60_000;

const failovers = intSetting('BENCH_FAILOVERS', 3, 1, 10);
const restarts = intSetting('BENCH_POSTGRES_RESTARTS', 3, 1, 10);
const trickleMs = intSetting('BENCH_TRICKLE_MS', 20, 5, 1000);

const UNLIMITED = { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000000', RTC_MEDIA_PUBLIC_HOST: '127.0.0.1' };

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Trickle {
  /** Resolves with when (performance.now()) `node` first answered 200 to a request sent at or after `since`. */
  firstOkSince(since: number): Promise<number>;
  /** Statuses answered other than 200 and 503 (none expected). */
  readonly unexpected: Map<number, number>;
  stop(): Promise<void>;
}

/** `send` (answering a status, 0 for no answer) every `trickleMs`, one at a time; `url` names it in errors. */
function trickle(url: string, send: () => Promise<number>): Trickle {
  const unexpected = new Map<number, number>();
  const answers: { sentAt: number; answeredAt: number }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const sentAt = performance.now();
      const status = await send().catch(() => 0);
      if (status === 200) answers.push({ sentAt, answeredAt: performance.now() });
      else if (status !== 503) unexpected.set(status, (unexpected.get(status) ?? 0) + 1);
      await sleep(trickleMs);
    }
  })();
  return {
    unexpected,
    async firstOkSince(since) {
      const deadline = performance.now() + GIVE_UP_MS;
      for (;;) {
        const found = answers.find((a) => a.sentAt >= since);
        if (found) return found.answeredAt;
        if (performance.now() > deadline) throw new Error(`${url} answered no 200 within ${GIVE_UP_MS / 1000} s`);
        await sleep(trickleMs);
      }
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rtc-bench-failover-'));
  const started: ServerProcess[] = [];
  let postgres: Postgres | undefined;
  let group: RedisSentinelGroup | undefined;
  const trickles: Trickle[] = [];
  const problems: string[] = [];
  try {
    progress(`${BENCH}: ${failovers} Redis failovers and ${restarts} PostgreSQL restarts under a token request every ${trickleMs} ms on each of two nodes`);
    [postgres, group] = await Promise.all([startPostgres(), startRedisSentinels()]);
    const env = { ...UNLIMITED, ...group.env, DATABASE_URL: await postgres.createDatabase() };
    const nodes = await Promise.all(['token-a', 'token-b', 'media'].map((name) => startPlatformServer({
      dataDir: join(work, name), roles: name === 'media' ? ['media'] : ['api', 'token'], env, stderrFile: join(work, `${name}.log`),
    })));
    started.push(...nodes);
    const [a, b] = nodes as [ServerProcess, ServerProcess];
    const cred = await createCredential(a.urls['api']!);
    const authorization = basicAuthorization(cred.appId, cred.appSecret);
    const tokens = (node: ServerProcess): Trickle => {
      const url = `${node.urls['token']!}/v1/rtc/tokens`;
      return trickle(url, () => postJson(url, BODY, { authorization }).then((r) => r.status));
    };
    trickles.push(tokens(a), tokens(b));
    await Promise.all(trickles.map((t) => t.firstOkSince(performance.now())));

    const gaps: number[] = [];
    const promotions: number[] = [];
    for (let i = 0; i < failovers; i++) {
      await group.settled();
      const killedAt = performance.now();
      const old = await group.killMaster();
      await group.promoted(old);
      promotions.push(performance.now() - killedAt);
      const backAt = Math.max(...await Promise.all(trickles.map((t) => t.firstOkSince(killedAt))));
      gaps.push(backAt - killedAt);
      progress(`failover ${i + 1}: promoted after ${promotions.at(-1)!.toFixed(0)} ms, issuing again after ${gaps.at(-1)!.toFixed(0)} ms`);
      await group.restart(old);
    }
    gaps.sort((x, y) => x - y);
    promotions.sort((x, y) => x - y);
    const bound = group.downAfterMs + FAILOVER_ALLOWANCE_MS + MAX_RECONNECT_DELAY_MS;
    const common = { samples: failovers, down_after_ms: group.downAfterMs };
    printFigure({ bench: BENCH, figure: 'redis_master_kill_to_first_200_p50', value: percentile(gaps, 50), unit: 'ms', ...common });
    printFigure({
      bench: BENCH, figure: 'redis_master_kill_to_first_200_max', value: gaps.at(-1)!, unit: 'ms', ...common,
      target_max: bound, meets_target: gaps.at(-1)! <= bound,
    });
    printFigure({ bench: BENCH, figure: 'redis_master_kill_to_promotion_p50', value: percentile(promotions, 50), unit: 'ms', ...common });

    // a token node issues from its credential cache while PostgreSQL is away (docs/decisions/scale-out.md,
    // "Credential cache"): the restart is measured on a request that always reads the store
    await Promise.all(trickles.splice(0).map((t) => t.stop()));
    const projects = (node: ServerProcess): Trickle => {
      const url = `${node.urls['api']!}/v1/projects`;
      return trickle(url, () => getJson(url, { authorization: `Bearer ${cred.accessToken}` }).then((r) => r.status));
    };
    trickles.push(projects(a), projects(b));
    await Promise.all(trickles.map((t) => t.firstOkSince(performance.now())));
    const fromStop: number[] = [];
    const fromStart: number[] = [];
    for (let i = 0; i < restarts; i++) {
      const stoppedAt = performance.now();
      await postgres.down();
      await postgres.up();
      const upAt = performance.now();
      // a request sent once the server is back, not one that failed while it was away
      const backAt = Math.max(...await Promise.all(trickles.map((t) => t.firstOkSince(upAt))));
      fromStop.push(backAt - stoppedAt);
      fromStart.push(backAt - upAt);
      progress(`restart ${i + 1}: down for ${(upAt - stoppedAt).toFixed(0)} ms, issuing again ${fromStart.at(-1)!.toFixed(0)} ms after the start`);
    }
    fromStop.sort((x, y) => x - y);
    fromStart.sort((x, y) => x - y);
    printFigure({ bench: BENCH, figure: 'postgres_stop_start_to_first_200_p50', value: percentile(fromStop, 50), unit: 'ms', samples: restarts });
    printFigure({ bench: BENCH, figure: 'postgres_stop_start_to_first_200_max', value: fromStop.at(-1)!, unit: 'ms', samples: restarts });
    printFigure({ bench: BENCH, figure: 'postgres_back_to_first_200_max', value: fromStart.at(-1)!, unit: 'ms', samples: restarts });

    for (const [i, t] of trickles.entries()) {
      if (t.unexpected.size > 0) problems.push(`node ${i}: statuses other than 200 and 503: ${JSON.stringify(Object.fromEntries(t.unexpected))}`);
    }
  } finally {
    await Promise.all(trickles.map((t) => t.stop()));
    await Promise.allSettled(started.map((s) => s.stop()));
    await group?.dispose();
    await postgres?.stop();
    removeWork(work);
  }
  reportProblems(problems);
}

runBench(BENCH, main);
