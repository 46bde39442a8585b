import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatWebhookSignatures, parseWebhookSignatures, parseWebhookTimestamp, WEBHOOK_EVENT_TYPES, webhookSignedPrefix,
  type WebhookEventData, type WebhookEventType,
} from './webhooks.ts';

// the list and the data table name the same types, both ways
const everyTypeHasData: readonly (keyof WebhookEventData)[] = WEBHOOK_EVENT_TYPES;
const everyDataIsListed = (t: keyof WebhookEventData): WebhookEventType => t;

describe('webhook contract', () => {
  it('lists each event type once', () => {
    assert.equal(new Set(everyTypeHasData).size, WEBHOOK_EVENT_TYPES.length);
    assert.equal(everyDataIsListed('webhook.test'), 'webhook.test');
  });

  it('formats and parses the signature header', () => {
    assert.equal(formatWebhookSignatures(['ab12', 'cd34']), 'v1=ab12 v1=cd34');
    assert.deepEqual(parseWebhookSignatures('v1=ab12 v0=ff v1=cd34'), ['ab12', 'cd34']);
    assert.deepEqual(parseWebhookSignatures('ab12'), []);
  });

  it('signs `<timestamp>.<body>`', () => assert.equal(`${webhookSignedPrefix(1767225600)}{}`, '1767225600.{}'));

  it('reads whole seconds only', () => {
    assert.equal(parseWebhookTimestamp('1767225600'), 1767225600);
    for (const bad of ['', '-1', '1.5', ' 1', '1e9', '1234567890123']) assert.equal(parseWebhookTimestamp(bad), undefined, bad);
  });
});
