import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../config.ts';
import { deliveryLeaseMs } from './worker.ts';

describe('webhook delivery lease', () => {
  it('outlasts the send timeout by a margin and frees a crashed sender\'s deliveries within 15 s by default', () => {
    const { timeoutMs } = loadConfig({ RTC_DATA_DIR: '/tmp/unused' }).webhooks;
    assert.ok(deliveryLeaseMs(timeoutMs) > timeoutMs, 'a send still waiting for its answer keeps its lease');
    assert.ok(deliveryLeaseMs(timeoutMs) <= 15_000, `lease ${deliveryLeaseMs(timeoutMs)} ms`);
    assert.ok(deliveryLeaseMs(60_000) <= 65_000, 'the longest timeout allowed keeps the lease within 65 s');
  });
});
