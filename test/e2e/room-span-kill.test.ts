import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { FailoverCall } from '../helpers/media-failover.ts';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { issueFollowingRetryAfter, mediaNodesSeen } from './cluster-helpers.ts';

/** A killed node leaves the directory 6 s after its last announcement, and the streams it originated 6 s after theirs. */
const MOVE_TIMEOUT_MS = 30_000;

// docs/operations/scale-out.md, "Rooms across media nodes", and docs/protocol/relay.md, "Breaks": a
// room of four spread over two of three media nodes (two sessions a node), each participant
// publishing audio and hearing the three others. The node of two of them is killed: they move to the
// third node, the two others hear them again from there without ever reconnecting, and they hear
// the two others over a relay again.
describe('a room across media nodes when one of them is killed (a cluster on PostgreSQL and Redis)', () => {
  let postgres: Postgres | undefined;
  let redis: RedisServer | undefined;
  const servers: RunningServer[] = [];
  const dirs: string[] = [];
  let api: RunningServer;
  let customer: Customer;
  let call: FailoverCall | undefined;

  before(async () => {
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    const env = {
      DATABASE_URL: await postgres.createDatabase(), REDIS_URL: redis.url, RTC_MEDIA_PUBLIC_HOST: '127.0.0.1', RTC_MEDIA_MAX_SESSIONS: '2',
      RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', RTC_APP_RATE_LIMIT_PER_MINUTE: '1000000',
    };
    const start = async (roles: readonly string[], extra: Record<string, string> = {}): Promise<RunningServer> => {
      const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-span-kill-'));
      dirs.push(dataDir);
      const server = await startServer({ dataDir, roles, env: { ...env, ...extra } });
      servers.push(server);
      return server;
    };
    // the first node creates the schema and the key ring; the media nodes then share them
    api = await start(['api', 'token'], { RTC_ADMIN_PORT: '0' });
    await Promise.all([start(['media']), start(['media']), start(['media'])]);
    customer = await createCustomer(api);
    await mediaNodesSeen(api, 3);
  });

  after(async () => {
    await call?.close();
    await Promise.all(servers.map((s) => s.stop()));
    await redis?.dispose();
    await postgres?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('moves the killed node\'s participants, and the others hear them again without reconnecting', { timeout: 120_000 }, async () => {
    const issue = (room: string, user: string): Promise<TokenResponse> => issueFollowingRetryAfter(api, customer, {
      room_id: room, user_id: user, role: 'speaker', publish_streams: [1, 2, 3, 4], subscribe_room: true,
    });
    call = await FailoverCall.start({ rooms: ['hall'], perRoom: 4, issue });
    const onNode = (node: string) => call!.clients.filter((c) => c.session.mediaNode === node);
    const nodes = [...call.nodes()];
    assert.equal(nodes.length, 2, `placement spreads four over two nodes of two: ${nodes.join(', ')}`);
    // each hears the three others, two of them over a relay
    await call.flowingAfter(performance.now(), '', 15_000);

    const [killedNode, survivingNode] = nodes as [string, string];
    const killed = servers.find((s) => s.urls['media'] !== undefined && new URL(s.urls['media']).host === killedNode)!;
    const moving = onNode(killedNode);
    const staying = onNode(survivingNode);
    const killedAt = performance.now();
    killed.process.kill('SIGKILL');
    await call.flowingAfter(killedAt, killedNode, MOVE_TIMEOUT_MS);

    const third = servers.find((s) => s.urls['media'] !== undefined && ![killedNode, survivingNode].includes(new URL(s.urls['media']).host))!;
    for (const client of moving) {
      assert.equal(client.session.mediaNode, new URL(third.urls['media']!).host, `${client.user} moved to the node with room`);
      assert.ok(client.events.some((e) => e.type === 'reconnected' && e.moved), `${client.user} moved`);
    }
    for (const client of staying) {
      assert.equal(client.session.mediaNode, survivingNode);
      assert.deepEqual(client.events, [], `${client.user} on the surviving node never reconnected`);
      assert.deepEqual(client.losses, [], `${client.user} never lost its connection`);
    }
  });
});
