import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '../../protocol/src/wire.ts';
import WebSocket from 'ws';
import { connect, MediaError } from '../../sdk/app/src/index.ts';
import { bearer, createCustomer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { postgresDatabases, type PostgresDatabases } from '../helpers/postgres-databases.ts';
import { serveInProcess, type ServedPlatform } from '../helpers/serve-inproc.ts';
import { joinRoom } from '../helpers/signaling.ts';

const TOKEN_BODY = { room_id: 'room-1', user_id: 'user-1', role: 'speaker', publish_streams: [1] };
// trust authentication accepts any password: it is there to show that none reaches the logs
const PASSWORD = 'pg-pa55w0rd-in-url';

// each platform is served in this process with a store, caches and bus of its own: what one knows
// of the other comes through the database, as between processes
describe('rtc serve on PostgreSQL (DATABASE_URL)', () => {
  let postgres: PostgresDatabases;
  const servers: ServedPlatform[] = [];
  const dirs: string[] = [];

  before(async () => {
    postgres = await postgresDatabases();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await postgres.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('serves from two platforms started together on one empty database: a credential made on one issues tokens on the other', async () => {
    const url = (await postgres.createDatabase()).replace('postgres@', `postgres:${PASSWORD}@`);
    // processes on one database share its key ring (docs/operations/configuration.md, "Keys"): both
    // start at the same moment on an empty database, each with an empty data directory of its own
    const started = await Promise.all([0, 1].map(() => {
      const dataDir = mkdtempSync(join(tmpdir(), 'rtc-pg-serve-'));
      dirs.push(dataDir);
      return serveInProcess({ dataDir, env: { DATABASE_URL: url } });
    }));
    servers.push(...started);
    const [a, b] = started as [ServedPlatform, ServedPlatform];

    const customer = await createCustomer(a);
    const issued = await request(`${b.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: TOKEN_BODY });
    assert.equal(issued.status, 200, issued.text);
    assert.ok(issued.json<TokenResponse>().media.grant.length > 0);

    // the account signs in on the other platform too
    const login = await request(`${b.api}/v1/auth/login`, { body: { email: customer.email, password: customer.password } });
    assert.equal(login.status, 200, login.text);

    // a revoke answered by one platform is refused by the other at its very next request
    const revoked = await request(`${b.api}/v1/projects/${customer.projectId}/credentials/${customer.appId}/revoke`, {
      headers: { authorization: `Bearer ${customer.accessToken}` }, body: {},
    });
    assert.equal(revoked.status, 200, revoked.text);
    const refused = await request(`${a.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: TOKEN_BODY });
    assert.equal(refused.status, 401, refused.text);

    for (const server of started) {
      assert.ok(!server.output().includes(PASSWORD), 'the database password reached the output');
    }
    // each stops cleanly: every role closed, the pool ended
    await Promise.all(started.map((server) => server.stop()));
  });

  it('ends a signaling stream held by a platform without the api role when the project is archived on another (store poll)', async () => {
    const url = await postgres.createDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'rtc-pg-archive-'));
    dirs.push(dataDir);
    const rooms = await serveInProcess({ dataDir, roles: ['signaling', 'media'], env: { DATABASE_URL: url } });
    servers.push(rooms);
    const api = await serveInProcess({
      dataDir, roles: ['api', 'token'], env: {
        DATABASE_URL: url, RTC_SIGNALING_PUBLIC_URL: rooms.urls['signaling']!, RTC_MEDIA_PUBLIC_PORT: new URL(rooms.urls['media']!).port,
      },
    });
    servers.push(api);
    const customer = await createCustomer(api);
    const erin = await joinRoom(api.token, customer, { room_id: 'pg-archive', user_id: 'erin' });
    try {
      const started = performance.now();
      const archived = await request(`${api.api}/v1/projects/${customer.projectId}/archive`, {
        method: 'POST', headers: bearer(customer.accessToken),
      });
      assert.equal(archived.status, 200, archived.text);
      await erin.inbox.waitFor((e) => e.type === 'revoked', 2000, 'the revoked event');
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 1000, `the stream ended ${elapsed.toFixed(0)} ms after the archive request was sent`);
      // the media role reads the cut-off from the database at the join
      const err = await connect({ token: erin.token, WebSocket, secure: false }).then(async (s) => {
        await s.close();
        return undefined;
      }, (e: unknown) => e);
      assert.ok(err instanceof MediaError, String(err));
      assert.equal(err.closeCode, 4003);
    } finally {
      erin.client.close();
    }
  });
});
