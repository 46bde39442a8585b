import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TokenApiError } from './index.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';
import { clientFor, recordingClient, rejectsWith } from '../../../test/helpers/token-client.ts';

describe('server SDK: 429 rate_limited with Retry-After', () => {
  let server: ServedPlatform;

  before(async () => {
    server = await serveInProcess({ env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '3' } });
  });
  after(async () => {
    await server.stop();
  });

  /** A fresh credential that has used up its three requests of this minute. */
  async function exhausted(): Promise<Customer> {
    const c = await createCustomer(server);
    const tokens = clientFor(c, server.token);
    for (let i = 0; i < 3; i += 1) await tokens.issue({ room_id: 'r', user_id: `u${i}`, role: 'host' });
    return c;
  }

  it('waits each Retry-After when it is within maxRetryAfterSec, then surfaces rate_limited after maxAttempts', async () => {
    const c = await exhausted();
    const { client, sleeps, events } = recordingClient({
      baseUrl: server.token, appId: c.appId, appSecret: c.appSecret,
      retry: { maxAttempts: 3, maxRetryAfterSec: 120, maxElapsedMs: 600_000 },
    });
    const err = await rejectsWith(client.issue({ room_id: 'r', user_id: 'u', role: 'host' }), TokenApiError);
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.status, 429);
    assert.equal(err.attempts, 3);
    assert.ok(err.retryAfterSec !== undefined && err.retryAfterSec >= 1 && err.retryAfterSec <= 60, `Retry-After ${err.retryAfterSec}`);
    const answered = events.flatMap((e) => (e.type === 'response' ? [e] : []));
    assert.equal(answered.length, 3);
    assert.ok(answered.every((e) => e.status === 429 && e.code === 'rate_limited' && e.retryAfterSec !== undefined));
    // each wait is exactly the Retry-After of the answer before it
    assert.deepEqual(sleeps, answered.slice(0, 2).map((e) => e.retryAfterSec! * 1000));
    assert.deepEqual(events.flatMap((e) => (e.type === 'retry' ? [e.basis] : [])), ['retry-after', 'retry-after']);
  });

  it('surfaces rate_limited at once when Retry-After exceeds maxRetryAfterSec', async () => {
    const c = await exhausted();
    const { client, sleeps } = recordingClient({ baseUrl: server.api, appId: c.appId, appSecret: c.appSecret, retry: { maxRetryAfterSec: 0 } });
    const err = await rejectsWith(client.issue({ room_id: 'r', user_id: 'u', role: 'host' }), TokenApiError);
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.attempts, 1);
    assert.ok(err.retryAfterSec !== undefined && err.retryAfterSec >= 1);
    assert.deepEqual(sleeps, []);
  });

  it('does not start a Retry-After wait that would end past maxElapsedMs', async () => {
    const c = await exhausted();
    const { client, sleeps } = recordingClient({
      baseUrl: server.token, appId: c.appId, appSecret: c.appSecret,
      retry: { maxAttempts: 5, maxRetryAfterSec: 120, maxElapsedMs: 999 },
    });
    const err = await rejectsWith(client.revoke('rvk_whatever'), TokenApiError);
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.operation, 'revoke');
    assert.equal(err.attempts, 1);
    assert.deepEqual(sleeps, []);
  });
});
