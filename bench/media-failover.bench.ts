/**
 * Apps moving off a media node that goes away (docs/operations/scale-out.md, "Drain and failure of
 * a media node"): a cluster on PostgreSQL and Redis (one api/token process, media processes), app
 * SDK clients in a few rooms each publishing a 50-frame/s stream and receiving the others'. The node
 * all of them are on is, in turn, killed (SIGKILL) and drained (SIGTERM), a fresh media node
 * starting after each so that there is always one to move to. A client's figure is the time from
 * the signal until it received, from every other client of its room, a frame sent after the
 * signal, both of them off the node that went away: both directions flow again on the new node.
 * Prints one JSON line per figure; see docs/operations/benchmarks.md.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MediaToken } from '../sdk/app/src/index.ts';
import { FailoverCall } from '../test/helpers/media-failover.ts';
import { startPostgres, type Postgres } from '../test/helpers/postgres.ts';
import { startRedis, type RedisServer } from '../test/helpers/redis.ts';
import { postJson } from './lib/http.ts';
import { basicAuthorization, createCredential, startPlatformServer } from './lib/platform.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress, removeWork, runBench } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';

const BENCH = 'media-failover';
const MOVE_TIMEOUT_MS = 30_000;

const roomCount = intSetting('BENCH_FAILOVER_ROOMS', 4, 1, 10);
const perRoom = intSetting('BENCH_FAILOVER_PER_ROOM', 2, 2, 5);
const rounds = intSetting('BENCH_FAILOVER_ROUNDS', 2, 1, 5);

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rtc-bench-failover-'));
  const started: ServerProcess[] = [];
  let postgres: Postgres | undefined;
  let redis: RedisServer | undefined;
  let call: FailoverCall | undefined;
  let nodes = 0;
  try {
    progress(`${BENCH}: ${roomCount} rooms of ${perRoom} apps, ${rounds} kill and ${rounds} drain rounds`);
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    const env = {
      DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url, RTC_MEDIA_PUBLIC_HOST: '127.0.0.1',
      RTC_APP_RATE_LIMIT_PER_MINUTE: '100000000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000000',
    };
    const start = async (roles: string[]): Promise<ServerProcess> => {
      const name = `${roles.join('-')}-${++nodes}`;
      const server = await startPlatformServer({ dataDir: join(work, name), stderrFile: join(work, `${name}.log`), roles, env });
      started.push(server);
      return server;
    };
    const mediaNode = async (): Promise<{ server: ServerProcess; node: string }> => {
      const server = await start(['media']);
      return { server, node: new URL(server.urls['media']!).host };
    };
    const [tokenNode, first, second] = await Promise.all([start(['api', 'token']), mediaNode(), mediaNode()]);
    const cred = await createCredential(tokenNode.urls['api']!);
    const authorization = basicAuthorization(cred.appId, cred.appSecret);
    const publishStreams = Array.from({ length: perRoom }, (_, i) => i + 1);
    const issue = async (room: string, user: string): Promise<MediaToken> => {
      const body = JSON.stringify({ room_id: room, user_id: user, role: 'speaker', publish_streams: publishStreams, subscribe_room: true });
      const res = await postJson(`${tokenNode.urls['token']!}/v1/rtc/tokens`, body, { authorization });
      if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
      return JSON.parse(res.text) as MediaToken;
    };

    // rooms placed on the first node (probe tokens place them; the token node may need a second to see it)
    const rooms: string[] = [];
    for (let i = 0; rooms.length < roomCount; i++) {
      if (i > 1000) throw new Error('no room was placed on the first media node');
      const token = await issue(`failover-${i}`, 'probe');
      if (`${token.media.sfu_host}:${token.media.sfu_port}` === first.node) rooms.push(`failover-${i}`);
    }
    call = await FailoverCall.start({ rooms, perRoom, issue });
    await call.flowingAfter(performance.now(), '', 10_000);

    let current = first;
    let spare = second;
    const samples: Record<'kill' | 'drain', number[]> = { kill: [], drain: [] };
    for (let round = 0; round < rounds * 2; round++) {
      const how = round % 2 === 0 ? 'kill' : 'drain';
      const signalledAt = performance.now();
      const stopped = how === 'kill' ? (process.kill(current.server.pid, 'SIGKILL'), Promise.resolve()) : current.server.stop();
      const times = await call.flowingAfter(signalledAt, current.node, MOVE_TIMEOUT_MS);
      await stopped;
      const on = [...call.nodes()];
      if (on.length !== 1 || on[0] !== spare.node) throw new Error(`after the ${how}, the apps are on ${on.join(', ')}, not ${spare.node}`);
      samples[how].push(...times);
      const sorted = [...times].sort((a, b) => a - b);
      progress(`${how} ${round + 1}: media flowing again after ${sorted.map((t) => t.toFixed(0)).join(', ')} ms`);
      current = spare;
      spare = await mediaNode();
    }
    for (const how of ['kill', 'drain'] as const) {
      const sorted = samples[how].sort((a, b) => a - b);
      for (const p of [50, 99]) {
        printFigure({ bench: BENCH, figure: `${how}_to_media_flowing_p${p}`, value: percentile(sorted, p), unit: 'ms', samples: sorted.length, apps: roomCount * perRoom, rooms: roomCount });
      }
    }
  } finally {
    await call?.close();
    await Promise.allSettled(started.map((s) => s.stop()));
    await redis?.dispose();
    await postgres?.stop();
    removeWork(work);
  }
}

runBench(BENCH, main);
