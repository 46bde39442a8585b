/**
 * The first app code people copy, run as pasted in headless Chromium against a platform started
 * as `npm start` starts it (no TLS, default settings): the console Overview's app snippet, and the
 * first example of the app SDK's README. The test provides only what the code says the customer's
 * server provides: `/my-backend/rtc-token`, answering a token response.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RtcParticipant, RtcRoom } from '@rtc/protocol';
import { snippets } from '../../console/src/snippets.ts';
import { bundleApp, launchChromium, servePages, type PageFile, type PageSite } from '../helpers/browser.ts';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { codeBlocks } from '../helpers/markdown.ts';
import { ROOT } from '../helpers/root.ts';
import { serveInProcess, type ServedPlatform } from '../helpers/serve-inproc.ts';
import { until } from '../helpers/media-session.ts';

/** Runs `./app.js` and records how it ended: `ok`, or the error it threw. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>first app</title></head>
<body><script type="module">
import('./app.js').then(() => { globalThis.appResult = 'ok'; }, (err) => { globalThis.appResult = String(err?.name) + ': ' + String(err?.message); });
</script></body></html>
`;

/** How the app code on the page ended: `ok`, or its error. */
async function appResult(page: Page): Promise<string> {
  const handle = await page.waitForFunction(() => (globalThis as { appResult?: string }).appResult, undefined, { timeout: 30_000 });
  return String(await handle.jsonValue());
}

describe('the first app code, as pasted, against a platform as npm start runs it', () => {
  let server: ServedPlatform;
  let customer: Customer;
  let browser: Browser;
  const sites: PageSite[] = [];

  before(async () => {
    // the platform's defaults, as npm start has them: no TLS, the media host it chooses itself
    server = await serveInProcess({ roles: ['api', 'token', 'media'] });
    customer = await createCustomer(server);
    browser = await launchChromium({ fakeMedia: true });
  });
  after(async () => {
    await browser?.close();
    for (const site of sites) await site.close();
    await server?.stop();
  });

  /** Serves the page, the app code bundled with the SDK, and the customer's token route. */
  async function site(app: string, backend: PageFile): Promise<PageSite> {
    const served = await servePages({
      '/': ['text/html; charset=utf-8', PAGE],
      '/app.js': ['text/javascript; charset=utf-8', await bundleApp(app)],
      '/my-backend/rtc-token': backend,
    });
    sites.push(served);
    return served;
  }

  /** The participant of `userId` in the room, once it publishes `count` streams (the room API). */
  async function published(roomId: string, userId: string, count: number): Promise<RtcParticipant> {
    let found: RtcParticipant | undefined;
    const read = async (): Promise<void> => {
      const res = await request(`${server.api}/v1/rtc/rooms/${roomId}`, { headers: { authorization: customer.auth } });
      const room = res.status === 200 ? res.json<RtcRoom>() : undefined;
      found = room?.participants.find((p) => p.user_id === userId && p.streams.length === count);
    };
    let reading: Promise<void> | undefined;
    await until(() => {
      reading ??= read().finally(() => {
        reading = undefined;
      });
      return found !== undefined;
    }, 15_000, `${userId} publishing ${count} streams in ${roomId}`);
    return found!;
  }

  it('the console Overview\'s app snippet joins and publishes camera and microphone on the streams its token request grants', async () => {
    const code = snippets(server.api, customer.appId);
    // the customer's server makes the snippet's own token request (the curl one), with the App Secret
    const curl = /^curl -X POST (\S+) \\$/m.exec(code.curl);
    const body = /-d '(.+)'$/m.exec(code.curl);
    assert.ok(curl && body, code.curl);
    const backend = async (): Promise<readonly [string, string]> => {
      const res = await request(curl[1]!, { headers: { authorization: customer.auth }, body: JSON.parse(body[1]!) as unknown });
      assert.equal(res.status, 200, res.text);
      return ['application/json', res.text];
    };
    const page = await browser.newPage();
    await page.goto((await site(code.app, backend)).url);
    assert.equal(await appResult(page), 'ok');
    const alice = await published('my-room', 'alice', 2);
    assert.deepEqual(alice.streams.map((s) => [s.stream_id, s.kind]), [[1, 'audio'], [2, 'video']]);
    await page.close();
  });

  it('the app SDK README\'s first example: two tabs join, publish a stream each and hear each other', async () => {
    const example = codeBlocks(readFileSync(`${ROOT}/sdk/app/README.md`, 'utf8')).find((block) => block.includes('connect('));
    assert.ok(example, 'the README has a connect example');
    // what the README says the customer's server does: a user of its own with stream ids of its own, and the whole room
    let users = 0;
    const backend = async (): Promise<readonly [string, string]> => {
      users += 1;
      const res = await request(`${server.api}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth },
        body: { room_id: 'readme-room', user_id: `user-${users}`, role: 'speaker', publish_streams: [users], subscribe_room: true },
      });
      assert.equal(res.status, 200, res.text);
      return ['application/json', res.text];
    };
    const { url } = await site(example, backend);
    const [first, second] = [await browser.newPage(), await browser.newPage()];
    const heard = (page: Page, what: string): Promise<unknown> => page.waitForEvent('console', {
      predicate: (message) => message.text() === what, timeout: 30_000,
    });
    const firstHears = heard(first, 'stream 2: hello from user-2');
    const secondHears = heard(second, 'stream 1: hello from user-1');
    await first.goto(url);
    assert.equal(await appResult(first), 'ok');
    await second.goto(url);
    assert.equal(await appResult(second), 'ok');
    await Promise.all([firstHears, secondHears]);
    await Promise.all([first.close(), second.close()]);
  });
});
