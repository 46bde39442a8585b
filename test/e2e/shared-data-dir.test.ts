import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createCustomer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;
const PROCESSES = 3;

// Several processes started at the same moment on one empty data directory (the embedded
// deployment run as separate processes): one key file and one schema, shared by all of them.
describe('processes started together on one empty data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rtc-shared-'));
  const servers: RunningServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('all start, publish the same signing keys and accept each other\'s credentials', async () => {
    const started = await Promise.allSettled(
      Array.from({ length: PROCESSES }, () => startServer({ dataDir, roles: ['api', 'token'] })));
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
    assert.deepEqual(failures, [], 'every process started');

    const jwks = await Promise.all(servers.map(async (s) => (await request(`${s.token}/.well-known/jwks.json`, { method: 'GET' })).text));
    for (const keys of jwks) assert.equal(keys, jwks[0], 'one key set for every process');
    assert.deepEqual(readdirSync(dataDir).filter((name) => name.endsWith('.tmp')), [], 'no temporary key file left');

    // a credential's secret is hashed with the shared key: one made on the first process works on every other
    const customer = await createCustomer(servers[0]!);
    for (const server of servers) {
      const res = await request(`${server.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: VALID });
      assert.equal(res.status, 200, res.text);
    }
  });

  it('a process restarted on the directory keeps the keys and the credentials', async () => {
    const customer = await createCustomer(servers[0]!);
    const before = (await request(`${servers[1]!.token}/.well-known/jwks.json`, { method: 'GET' })).text;
    const stopped = servers.pop()!;
    assert.equal((await stopped.stop()).code, 0);
    const restarted = await startServer({ dataDir, roles: ['api', 'token'] });
    servers.push(restarted);
    assert.equal((await request(`${restarted.token}/.well-known/jwks.json`, { method: 'GET' })).text, before);
    const res = await request(`${restarted.token}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: VALID });
    assert.equal(res.status, 200, res.text);
  });
});
