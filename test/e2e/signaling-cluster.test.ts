/**
 * Two `rtc serve` processes with the signaling role on one Redis, behind no balancer at all: a
 * client joins and sends on one, listens on the other, and resumes on the first after the second
 * is killed (docs/operations/scale-out.md, "Signaling").
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { openEventStream, type StreamFrame } from '../helpers/signaling.ts';

describe('signaling: two processes sharing Redis', () => {
  let redis: RedisServer;
  let dataDir: string;
  let platform: RunningServer;
  let one: RunningServer;
  let two: RunningServer;
  let customer: Customer;

  before(async () => {
    redis = await startRedis();
    dataDir = mkdtempSync(joinPath(tmpdir(), 'rtc-signaling-cluster-'));
    const env = { REDIS_URL: redis.url, RTC_MEDIA_PUBLIC_HOST: '127.0.0.1' };
    // the first process creates the store and the keys; the signaling processes share them
    one = await startServer({ dataDir, roles: ['signaling'], env });
    two = await startServer({ dataDir, roles: ['signaling'], env });
    // with Redis a token names a live media node: this process runs one
    platform = await startServer({ dataDir, roles: ['api', 'token', 'media'], env: { ...env, RTC_SIGNALING_PUBLIC_URL: one.urls['signaling']! } });
    customer = await createCustomer(platform);
  });
  after(async () => {
    await Promise.all([platform, one, two].filter((s) => s !== undefined).map((s) => s.stop()));
    await redis.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A signaling token, once the token node has seen the media node announce itself. */
  const token = async (room: string, user: string): Promise<string> => {
    for (let attempt = 0; ; attempt++) {
      const res = await request(`${platform.token}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'participant', signaling: true },
      });
      if (res.status === 200) return res.json<TokenResponse>().signaling!.token;
      assert.equal(res.status, 503, res.text);
      assert.ok(attempt < 100, 'no media node was ever live');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const post = async (server: RunningServer, path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const res = await request(`${server.urls['signaling']}/v1/signaling/${path}`, { body });
    assert.equal(res.status, 200, res.text);
    return res.json();
  };
  const message = (n: number) => (f: StreamFrame): boolean => f.event === 'message' && (f.data['data'] as { n?: number }).n === n;

  it('delivers across the processes, and a reader resumes on the other one after its process is killed', async () => {
    const alice = await token('room-1', 'alice');
    const bob = await token('room-1', 'bob');
    await post(one, 'join', { token: alice });
    const joined = await post(one, 'join', { token: bob });
    const onTwo = await openEventStream(two.urls['signaling']!, bob, joined['last_event_id'] as string);
    await onTwo.waitFor((f) => f.event === 'ready', 'ready on the second process');

    const sent = await post(one, 'messages', { token: alice, data: { n: 1 } });
    const got = await onTwo.waitFor(message(1), 'the message sent on the first process');
    assert.equal(got.id, sent['id']);

    two.process.kill('SIGKILL');
    await onTwo.ended;
    const missed = await post(one, 'messages', { token: alice, data: { n: 2 } });
    const onOne = await openEventStream(one.urls['signaling']!, bob, got.id);
    try {
      await onOne.waitFor((f) => f.event === 'ready', 'ready after resuming');
      assert.deepEqual(onOne.frames.map((f) => [f.event, f.id]), [['message', missed['id']], ['ready', undefined]]);
      await post(one, 'messages', { token: alice, data: { n: 3 } });
      await onOne.waitFor(message(3), 'a live message after resuming');
    } finally {
      onOne.close();
    }
    const listed = await request(`${one.urls['signaling']}/v1/signaling/participants`, { headers: { authorization: `Bearer ${alice}` } });
    assert.deepEqual(listed.json<{ participants: { user_id: string }[] }>().participants.map((p) => p.user_id), ['alice', 'bob']);
  });
});
