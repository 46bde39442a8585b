import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { basic, request, type HttpResult } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { pool } from '../helpers/pool.ts';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { startRedisSentinels, type RedisSentinelGroup } from '../helpers/redis.ts';
import { join, nextEvent } from '../helpers/media-session.ts';

// trust authentication accepts any password: it is there to show that none reaches the logs
const DB_PASSWORD = 'failover-db-pa55word';
const APP_LIMIT = 1000;
/**
 * docs/operations/scale-out.md, "Redis Sentinel": issuance answers again within down-after-milliseconds
 * + the failover (the sentinels agree, elect and promote: 3 s) + the reconnect (at most 2 s).
 */
const FAILOVER_ALLOWANCE_MS = 3000;
const MAX_RECONNECT_DELAY_MS = 2000;
/** Between two token requests of the trickle, on each node. */
const TRICKLE_MS = 50;
/** Token requests in a row a node answers with 200 before the limits are counted after a failover (1 s at TRICKLE_MS). */
const STEADY_ANSWERS = 20;

interface Sample {
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly result: HttpResult;
}

const body = (room: string, user = 'u') => ({ room_id: room, user_id: user, role: 'speaker' });

/** A documented refusal while a dependency is away (docs/reference/errors.md): 503 `unavailable` with Retry-After. */
function assertUnavailable(res: HttpResult, what: string): void {
  assert.equal(res.status, 503, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.json()['error'], 'unavailable', `${what}: ${res.text}`);
  assert.equal(res.headers['retry-after'], '1', what);
}

// Two api/token nodes and a media node on PostgreSQL and on Redis through Sentinel (a master, a
// replica, three sentinels with quorum 2), as in docs/operations/scale-out.md.
describe('a cluster on PostgreSQL and Redis Sentinel, while Redis fails over or PostgreSQL restarts', () => {
  let postgres: Postgres;
  let group: RedisSentinelGroup;
  let a: RunningServer;
  let b: RunningServer;
  let media: RunningServer;
  let customer: Customer;
  const dirs: string[] = [];
  const sessions: MediaSession[] = [];

  const node = (roles: readonly string[], env: Record<string, string>): Promise<RunningServer> => {
    const dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-failover-'));
    dirs.push(dataDir);
    return startServer({ dataDir, roles, env });
  };

  const issue = (server: RunningServer, room: string, who: Customer = customer): Promise<HttpResult> =>
    request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: who.auth }, body: body(room) });
  const revoke = (server: RunningServer, token: TokenResponse): Promise<HttpResult> =>
    request(`${server.token}/v1/rtc/tokens/revoke`, { headers: { authorization: customer.auth }, body: { revocation_handle: token.media.revocation_handle } });

  /** Issues once the node answers 200, following its 503 and Retry-After meanwhile. */
  const issueWhenAvailable = async (server: RunningServer, room: string, who: Customer = customer): Promise<TokenResponse> => {
    for (let attempt = 0; attempt < 200; attempt++) {
      const res = await issue(server, room, who);
      if (res.status === 200) return res.json<TokenResponse>();
      assertUnavailable(res, server.token);
      await new Promise<void>((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`${server.token} still refuses tokens`);
  };

  /**
   * Resolves once the node's `/ready` answers 200: right after a failover the connections may be
   * dropped once more, as each sentinel announces the new master in turn.
   */
  const readyAgain = async (server: RunningServer): Promise<void> => {
    let last: HttpResult | undefined;
    for (let attempt = 0; attempt < 150; attempt++) {
      last = await request(`${server.urls['admin']}/ready`);
      if (last.status === 200) return;
      await new Promise<void>((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`${server.token} is not ready: ${last?.text}`);
  };

  /**
   * Resolves once the node has answered STEADY_ANSWERS token requests in a row with 200 (for
   * `who`): a node may still be told of a sentinel's announcement, and drop its connections once
   * more, a while after `/ready` first answers, more so on a loaded machine.
   */
  const steadily = async (server: RunningServer, who: Customer): Promise<void> => {
    let inRow = 0;
    let last: HttpResult | undefined;
    for (let attempt = 0; attempt < 400 && inRow < STEADY_ANSWERS; attempt++) {
      last = await issue(server, 'steady', who);
      if (last.status === 200) inRow += 1;
      else {
        assertUnavailable(last, server.token);
        inRow = 0;
      }
      await new Promise<void>((resolve) => setTimeout(resolve, TRICKLE_MS));
    }
    assert.ok(inRow >= STEADY_ANSWERS, `${server.token} does not answer steadily: ${last?.status} ${last?.text}`);
  };

  before(async () => {
    [postgres, group] = await Promise.all([startPostgres(), startRedisSentinels()]);
    const databaseUrl = (await postgres.createDatabase()).replace('postgres@', `postgres:${DB_PASSWORD}@`);
    const env = {
      DATABASE_URL: databaseUrl, ...group.env, RTC_MEDIA_PUBLIC_HOST: '127.0.0.1', RTC_ADMIN_PORT: '0',
      RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', RTC_APP_RATE_LIMIT_PER_MINUTE: String(APP_LIMIT),
    };
    [a, b, media] = await Promise.all([node(['api', 'token'], env), node(['api', 'token'], env), node(['media'], env)]);
    customer = await createCustomer(a);
    // each token node has seen the media node once it issues
    await Promise.all([a, b].map((s) => issueWhenAvailable(s, 'warm-up')));
  });

  after(async () => {
    for (const s of sessions) await s.close();
    const all = [a, b, media].filter((s): s is RunningServer => s !== undefined);
    await Promise.all(all.map((s) => s.stop()));
    for (const server of all) {
      for (const secret of [DB_PASSWORD, group?.password, group?.sentinelPassword, customer?.appSecret]) {
        if (secret) assert.ok(!server.output().includes(secret), 'a password or secret reached the output');
      }
    }
    await group?.dispose();
    await postgres?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('issues again within the bound after the master is killed under token load, loses no revocation made meanwhile, and still counts limits across both nodes', async () => {
    const cut = await issueWhenAvailable(a, 'failover-cut');
    const session = await join(cut);
    sessions.push(session);
    const refused = await issueWhenAvailable(b, 'failover-refuse');

    // a steady trickle of token requests on each node, through the failover
    const samples = new Map<RunningServer, Sample[]>([[a, []], [b, []]]);
    let stop = false;
    const trickles = [a, b].map(async (server) => {
      while (!stop) {
        const sentAt = performance.now();
        const result = await issue(server, 'trickle');
        samples.get(server)!.push({ sentAt, answeredAt: performance.now(), result });
        await new Promise<void>((resolve) => setTimeout(resolve, TRICKLE_MS));
      }
    });
    try {
      const answered = (server: RunningServer): number => samples.get(server)!.filter((s) => s.result.status === 200).length;
      while (answered(a) < 5 || answered(b) < 5) await new Promise<void>((resolve) => setTimeout(resolve, TRICKLE_MS));

      const killedAt = performance.now();
      const oldMaster = await group.killMaster();
      // revoked while no master answers: stored first, so answered 200 and never lost
      const disconnected = nextEvent(session, 'disconnected', 10_000);
      for (const token of [cut, refused]) {
        const res = await revoke(b, token);
        assert.equal(res.status, 200, res.text);
      }
      const revokedAt = performance.now();
      assert.ok(revokedAt - killedAt < group.downAfterMs, 'the revokes were answered before the master could count as down');
      assert.equal((await disconnected).code, 4003);
      const cutAfterMs = performance.now() - revokedAt;
      assert.ok(cutAfterMs < 1000, `the session was cut ${cutAfterMs.toFixed(0)} ms after the revoke was answered`);

      const newMaster = await group.promoted(oldMaster);
      assert.notEqual(newMaster, oldMaster);
      const bound = group.downAfterMs + FAILOVER_ALLOWANCE_MS + MAX_RECONNECT_DELAY_MS;
      const firstAnswerAfterKill = (server: RunningServer): Sample | undefined =>
        samples.get(server)!.find((s) => s.sentAt >= killedAt && s.result.status === 200);
      const deadline = killedAt + bound + 10_000;
      while ((!firstAnswerAfterKill(a) || !firstAnswerAfterKill(b)) && performance.now() < deadline) {
        await new Promise<void>((resolve) => setTimeout(resolve, TRICKLE_MS));
      }
      for (const server of [a, b]) {
        const first = firstAnswerAfterKill(server);
        const since = samples.get(server)!.filter((s) => s.sentAt >= killedAt);
        assert.ok(first, `${server.token} never issued again after the failover; answers since the kill: ${
          JSON.stringify(since.slice(-3).map((s) => `${s.result.status} ${s.result.text}`))} of ${since.length}`);
        const gapMs = first.answeredAt - killedAt;
        assert.ok(gapMs <= bound, `${server.token} issued again ${gapMs.toFixed(0)} ms after the kill (bound ${bound} ms)`);
      }
    } finally {
      stop = true;
      await Promise.all(trickles);
    }
    // during the gap: only 200 or the documented 503, never a 500
    for (const [server, list] of samples) {
      const gap = list.filter((s) => s.result.status !== 200);
      assert.ok(gap.length > 0, `${server.token} answered every request: the master's death went unseen`);
      for (const s of gap) assertUnavailable(s.result, server.token);
    }

    // the bus's subscription is in place on the new master: both nodes are ready again
    await Promise.all([a, b].map(readyAgain));
    // the grant revoked during the failover stays refused by the media node
    await assert.rejects(join(refused), (err: Error & { closeCode?: number }) => {
      assert.equal(err.closeCode, 4003, err.message);
      return true;
    });
    // the bus reaches across the nodes again: a revoke on A cuts a session within a second
    const later = await issueWhenAvailable(b, 'after-failover');
    const laterSession = await join(later);
    sessions.push(laterSession);
    const closed = nextEvent(laterSession, 'disconnected', 5000);
    const res = await revoke(a, later);
    assert.equal(res.status, 200, res.text);
    const answeredAt = performance.now();
    assert.equal((await closed).code, 4003);
    assert.ok(performance.now() - answeredAt < 1000);

    // the limits of one App ID count on the promoted master across both nodes, once every sentinel
    // has announced it (each announcement may drop the nodes' connections once more)
    await group.agreed();
    await Promise.all([a, b].map(readyAgain));
    const probe = await createCustomer(a);
    await Promise.all([a, b].map((server) => steadily(server, probe)));
    const own = await createCustomer(a);
    const extra = 100;
    const results = await pool(APP_LIMIT + extra, 16, (i) => issue(i % 2 === 0 ? a : b, 'limit-room', own));
    const tally: Record<number, number> = {};
    for (const [i, r] of results.entries()) {
      tally[r.status] = (tally[r.status] ?? 0) + 1;
      if (r.status === 503) assertUnavailable(r, (i % 2 === 0 ? a : b).token);
      else assert.ok(r.status === 200 || r.status === 429, `${r.status} ${r.text}`);
    }
    // a connection may still be dropped once more as the last sentinel announces the new master: a
    // few 503s, each an attempt that may have been counted already. The nodes share one count: never
    // more than the limit issued across both, and no more refused than the limit leaves
    const [issued, unavailable] = [tally[200] ?? 0, tally[503] ?? 0];
    assert.ok(unavailable <= 20, `${unavailable} answers 503 after the failover: ${JSON.stringify(tally)}`);
    assert.ok(issued <= APP_LIMIT && issued + unavailable >= APP_LIMIT, JSON.stringify(tally));
  });

  it('answers 503 with Retry-After while PostgreSQL is stopped, never a 500 or a revoke answered as done, and serves again from the same processes once it is back', async () => {
    const token = await issueWhenAvailable(a, 'pg-restart');
    // a token node keeps a credential it checked twice (docs/decisions.md, "Credential cache"); one
    // it has not read yet needs the store
    for (const server of [a, b]) await issueWhenAvailable(server, 'pg-restart');
    const cold = await createCustomer(a);
    const pids = [a.process.pid, b.process.pid];
    const ready = (server: RunningServer) => request(`${server.urls['admin']}/ready`);
    const consoleCall = (server: RunningServer) => request(`${server.api}/v1/projects`, { headers: bearer(customer.accessToken) });

    await postgres.down();
    try {
      for (const server of [a, b]) {
        assertUnavailable(await issue(server, 'pg-restart', cold), `${server.token} issuance for a credential it has not read`);
        const cached = await issue(server, 'pg-restart');
        assert.equal(cached.status, 200, `${server.token} issues from its credential cache: ${cached.text}`);
        // a wrong secret for a cached App ID is answered as one for an unknown App ID: no oracle
        for (const who of [{ ...customer, auth: basic(customer.appId, 'x'.repeat(43)) }, { ...customer, auth: basic('app_AAAAAAAAAAAAAAAAAAAAAA', 'x'.repeat(43)) }]) {
          assertUnavailable(await issue(server, 'pg-restart', who), `${server.token} a wrong secret while the store is away`);
        }
        assertUnavailable(await consoleCall(server), `${server.api} console`);
        const notReady = await ready(server);
        assert.equal(notReady.status, 503, notReady.text);
        assert.ok((notReady.json()['failing'] as string[]).includes('store'), notReady.text);
      }
      // a revoke that cannot be stored is refused, never answered as done
      assertUnavailable(await revoke(b, token), 'revoke');
    } finally {
      await postgres.up();
    }

    for (const server of [a, b]) {
      await issueWhenAvailable(server, 'pg-restart', cold);
      const console = await consoleCall(server);
      assert.equal(console.status, 200, console.text);
      await readyAgain(server);
    }
    const revoked = await revoke(b, token);
    assert.equal(revoked.status, 200, revoked.text);
    await assert.rejects(join(token), (err: Error & { closeCode?: number }) => {
      assert.equal(err.closeCode, 4003, err.message);
      return true;
    });
    assert.deepEqual([a.process.pid, b.process.pid], pids);
    for (const server of [a, b]) assert.equal(server.process.exitCode, null, 'the process kept running');
  });

  it('answered no request with a 500 through either outage', () => {
    for (const server of [a, b]) {
      assert.ok(server.output().includes('"status":503'), 'the log shows the refusals');
      assert.ok(!server.output().includes('"status":500'), `${server.token} answered a 500:\n${server.output().split('\n').filter((l) => l.includes('"level":50')).join('\n')}`);
    }
  });
});
