import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { WEBHOOK_HEADERS } from '@rtc/protocol';
import { verifyWebhook, WebhookVerificationError } from './webhook.ts';

const SECRET = 'whsec_test';
const BODY = JSON.stringify({ id: 'evt_1', type: 'credential.revoked', project_id: 'prj_1', occurred_at: 1700000000, data: { app_id: 'app_1' } });
const sign = (secret: string, ts: number, body = BODY): string => createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');
const headers = (ts: number, signature: string): Record<string, string> =>
  ({ [WEBHOOK_HEADERS.id]: 'evt_1', [WEBHOOK_HEADERS.timestamp]: String(ts), [WEBHOOK_HEADERS.signature]: signature });

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof WebhookVerificationError);
    return err.code;
  }
  return 'none';
};

describe('verifyWebhook', () => {
  const now = 1700000100;

  it('returns the typed event of a genuine delivery', () => {
    const event = verifyWebhook(BODY, headers(now, `v1=${sign(SECRET, now)}`), SECRET, { nowSeconds: now });
    assert.equal(event.type, 'credential.revoked');
    if (event.type === 'credential.revoked') assert.equal(event.data.app_id, 'app_1');
  });

  it('accepts any of several signatures and secrets, and a Headers object or bytes', () => {
    const h = new Headers(headers(now, `v1=${sign('whsec_other', now)} v1=${sign(SECRET, now)}`));
    assert.equal(verifyWebhook(Buffer.from(BODY), h, ['whsec_none', SECRET], { nowSeconds: now }).id, 'evt_1');
  });

  it('refuses an empty secret rather than checking signatures anyone can make', () => {
    for (const secret of ['', [], ['']] as const) {
      assert.throws(() => verifyWebhook(BODY, headers(now, `v1=${sign('', now)}`), secret, { nowSeconds: now }), TypeError);
    }
  });

  it('refuses a wrong secret, an altered body, a stale or future timestamp, and missing headers', () => {
    assert.equal(code(() => verifyWebhook(BODY, headers(now, `v1=${sign('whsec_x', now)}`), SECRET, { nowSeconds: now })), 'ERR_WEBHOOK_SIGNATURE');
    assert.equal(code(() => verifyWebhook(`${BODY} `, headers(now, `v1=${sign(SECRET, now)}`), SECRET, { nowSeconds: now })), 'ERR_WEBHOOK_SIGNATURE');
    assert.equal(code(() => verifyWebhook(BODY, headers(now - 301, `v1=${sign(SECRET, now - 301)}`), SECRET, { nowSeconds: now })), 'ERR_WEBHOOK_TIMESTAMP');
    assert.equal(code(() => verifyWebhook(BODY, headers(now + 301, `v1=${sign(SECRET, now + 301)}`), SECRET, { nowSeconds: now })), 'ERR_WEBHOOK_TIMESTAMP');
    assert.equal(code(() => verifyWebhook(BODY, headers(now - 50, `v1=${sign(SECRET, now - 50)}`), SECRET, { nowSeconds: now, toleranceSeconds: 10 })), 'ERR_WEBHOOK_TIMESTAMP');
    assert.equal(code(() => verifyWebhook(BODY, {}, SECRET, { nowSeconds: now })), 'ERR_WEBHOOK_HEADERS');
    assert.equal(code(() => verifyWebhook(BODY, headers(now, 'v1=zz'), SECRET, { nowSeconds: now })), 'ERR_WEBHOOK_SIGNATURE');
  });

  it('refuses a signed body whose id is not the header id', () => {
    const h = { ...headers(now, `v1=${sign(SECRET, now)}`), [WEBHOOK_HEADERS.id]: 'evt_2' };
    assert.equal(code(() => verifyWebhook(BODY, h, SECRET, { nowSeconds: now })), 'ERR_WEBHOOK_PAYLOAD');
  });
});
