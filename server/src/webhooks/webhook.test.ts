import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { isPrivateAddress, nextAttemptAt, signatureHeader, signWebhook, webhookUrlProblem } from './webhook.ts';

test('the signature is hex HMAC-SHA256 of "<timestamp>.<body>"', () => {
  const expected = createHmac('sha256', 'whsec_a').update('1700000000.{"a":1}').digest('hex');
  assert.equal(signWebhook('whsec_a', 1700000000, '{"a":1}'), expected);
  assert.equal(signatureHeader(['whsec_a', 'whsec_b'], 1700000000, '{"a":1}'),
    `v1=${expected} v1=${signWebhook('whsec_b', 1700000000, '{"a":1}')}`);
});

test('retries back off exponentially with jitter, capped, and give up after the limit', () => {
  const policy = { baseMs: 5000, maxDelayMs: 3_600_000, giveUpAfterMs: 86_400_000 };
  assert.equal(nextAttemptAt(policy, 1, 0, 0, 0.5), 5000);
  assert.equal(nextAttemptAt(policy, 2, 0, 0, 0.5), 10_000);
  assert.equal(nextAttemptAt(policy, 1, 0, 0, 0), 4000);
  assert.equal(nextAttemptAt(policy, 1, 0, 0, 0.999_999), 6000);
  assert.equal(nextAttemptAt(policy, 30, 0, 0, 0.5), 3_600_000);
  assert.equal(nextAttemptAt(policy, 30, 0, 86_000_000, 0.5), null);
});

test('endpoint URLs must be https without credentials or fragment', () => {
  assert.equal(webhookUrlProblem('https://example.com/hook'), undefined);
  assert.match(webhookUrlProblem('http://example.com/hook') ?? '', /https/);
  assert.match(webhookUrlProblem('https://u:p@example.com/') ?? '', /password/);
  assert.match(webhookUrlProblem('https://example.com/#x') ?? '', /fragment/);
  assert.match(webhookUrlProblem('not a url') ?? '', /https/);
});

test('private, loopback and link-local addresses are recognised', () => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '::1', 'fe80::1', 'fd00::1',
    '::ffff:127.0.0.1', '0.0.0.0', '100.64.0.1',
    // IPv6 forms that carry an IPv4 address: IPv4-compatible, SIIT, local NAT64, 6to4, Teredo; old site-local
    '::127.0.0.1', '::7f00:1', '::ffff:0:127.0.0.1', '64:ff9b:1::a9fe:a9fe', '2002:7f00:1::1', '2001:0:4136:e378::1', 'fec0::1',
  ]) assert.equal(isPrivateAddress(a), true, a);
  for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
});
