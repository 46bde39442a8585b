/**
 * The console web page (docs/console.md) in headless Chromium, against a real `rtc serve`: tables
 * that keep their words whole at desktop (1280 px) and phone (390 px) width, the test room's "In the
 * room" list with yourself, what the Overview says of a test token's `app_id`, the pricing cards'
 * free minutes and rates, the cost card's sentence, and axe-core's moderate rules on the pages
 * that broke them.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { PricingPlan } from '@rtc/protocol';
import { launchChromium } from '../helpers/browser.ts';
import { bearer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { ROOT, type RunningServer } from '../helpers/platform.ts';
import { checkAxe, DESKTOP, PHONE } from './console-helpers.ts';
import { join as joinMedia, TokenIssuer } from '../helpers/media-session.ts';
import { startMediaServer } from './media-server.ts';

/**
 * The words of every text node under the elements `selector` matches that the browser laid out on
 * more than one line (a word split mid-way, "Participan|t", or a date at its hyphens); a word is
 * what lies between spaces and commas, where a line may break. Evaluated in the page as a string:
 * the tests' own TypeScript has no DOM types.
 */
const brokenWords = (page: Page, selector: string): Promise<string[]> => page.evaluate<string[]>(`(() => {
  const broken = [];
  for (const root of document.querySelectorAll(${JSON.stringify(selector)})) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of (node.textContent || '').matchAll(/[^\\s,]+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0] + ' (' + lines.size + ' lines)');
      }
    }
  }
  return broken;
})()`);

/** Screenshots for a person to look at, beside test/e2e/console.test.ts's (not committed). */
const SHOTS = join(ROOT, '.tmp', 'console-screenshots');

describe('console pages (Chromium)', () => {
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let issuer: TokenIssuer;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await startMediaServer();
    browser = await launchChromium({ fakeMedia: true });
    issuer = await TokenIssuer.create(() => server!.api);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const newPage = async (): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser!.newContext({ viewport: DESKTOP });
    return { context, page: await context.newPage() };
  };
  const heading = (page: Page, name: string): Promise<void> => page.getByRole('heading', { name, level: 1 }).waitFor();
  /** Runs `steps`; when one fails, the error says what the page shows. */
  const showing = async (page: Page, steps: () => Promise<void>): Promise<void> => {
    try {
      await steps();
    } catch (err) {
      const shown = await page.locator('body').innerText({ timeout: 1000 }).catch(() => '(unreadable)');
      throw new Error(`${err instanceof Error ? err.message : String(err)}\nat ${page.url()} the page shows: ${shown.slice(0, 800)}`, { cause: err });
    }
  };
  const signIn = async (page: Page, email: string, password: string, path: string): Promise<void> => {
    await page.goto(`${server!.api}/#${path}`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };
  const nav = (page: Page, name: string): Promise<void> =>
    page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
  /** No word of the tables broken at either width, nor the page wider than a phone; axe-core's check at both. */
  const wordsWhole = async (page: Page, selector: string, name: string): Promise<void> => {
    try {
      for (const viewport of [DESKTOP, PHONE]) {
        await page.setViewportSize(viewport);
        assert.ok(await page.locator(selector).count() > 0, `${name}: no ${selector}`);
        assert.deepEqual(await brokenWords(page, selector), [], `${name} at ${viewport.width} px: words broken across lines`);
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(width <= viewport.width, `${name}: the page is ${width} px wide at ${viewport.width} px`);
        await checkAxe(page, `${name} at ${viewport.width} px`);
        await page.screenshot({ path: join(SHOTS, `30-tables-${name.replace(/\W+/g, '-').toLowerCase()}-${viewport.width}.png`), fullPage: true });
      }
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  };

  it('lists yourself in the test room, and keeps every word of the Rooms and usage tables whole at 1280 and 390 px', async () => {
    const { customer } = issuer;
    const { context, page } = await newPage();
    const guests: { close(): Promise<void> }[] = [];
    try {
      await showing(page, async () => {
      await signIn(page, customer.email, customer.password, `/projects/${customer.projectId}/test-room`);
      await heading(page, 'Test room');
      // the camera and microphone are the page's once the fake microphone's beep moves the meter
      await page.locator('meter:not([data-level="0.00"])').waitFor({ timeout: 15_000 });
      await page.getByLabel('Room', { exact: true }).fill('layout-room');
      await page.getByLabel('Your user id').fill('carol');
      await page.getByRole('button', { name: 'Join test room' }).click();
      await page.getByRole('status').filter({ hasText: 'In layout-room as carol.' }).waitFor({ timeout: 60_000 });
      // alone: the list has yourself
      const inRoom = page.getByRole('list', { name: 'In the room' });
      await inRoom.getByRole('listitem').filter({ hasText: /^carol .*you$/ }).waitFor();
      assert.equal(await inRoom.getByRole('listitem').count(), 1);
      await page.getByText('Nobody else is here yet').waitFor();
      // somebody else joins: both, yourself first (a user id with hyphens, where a browser may break a line, as in ids)
      guests.push(await joinMedia(await issuer.issue({ room_id: 'layout-room', user_id: 'guest-with-a-hyphenated-id', role: 'speaker', publish_streams: [1] }), { reconnect: false }));
      await inRoom.getByRole('listitem').filter({ hasText: /^guest/ }).waitFor({ timeout: 15_000 });
      assert.deepEqual((await inRoom.getByRole('listitem').allTextContents()).map((t) => t.trim()), ['carol host · you', 'guest-with-a-hyphenated-id speaker']);

      // the Rooms page while the call goes on: the participants with their quality once measured
      await nav(page, 'Rooms');
      await heading(page, 'Rooms');
      const room = page.getByRole('region', { name: 'Room layout-room' });
      await room.getByRole('row', { name: /guest/ }).waitFor({ timeout: 15_000 });
      await room.getByRole('row', { name: /carol/ }).locator('.quality dd').first().waitFor({ timeout: 30_000 });
      await wordsWhole(page, 'section.room table', 'Rooms');

      await nav(page, 'Sessions and usage');
      await heading(page, 'Sessions and usage');
      await page.getByRole('table', { name: 'Session history' }).getByRole('row', { name: /guest/ }).waitFor({ timeout: 15_000 });
      await page.getByRole('table', { name: /per day/ }).waitFor();
      await wordsWhole(page, 'main table', 'Sessions and usage');
      });
    } finally {
      for (const g of guests) await g.close();
      await context.close();
    }
  });

  it('says why a test token\'s app_id is not the credential\'s, and passes axe on the Overview and Webhooks pages', async () => {
    const { customer } = issuer;
    const { context, page } = await newPage();
    try {
      const hook = await request(`${server!.api}/v1/projects/${customer.projectId}/webhooks`, {
        headers: bearer(customer.accessToken), body: { url: 'https://203.0.113.10/hooks' },
      });
      assert.equal(hook.status, 201, hook.text);
      await signIn(page, customer.email, customer.password, `/projects/${customer.projectId}`);
      await heading(page, 'Overview');
      assert.equal(await page.getByTestId('overview-app-id').textContent(), customer.appId);
      await page.getByRole('button', { name: 'Create test token' }).click();
      await page.getByRole('status').filter({ hasText: 'Token issued for alice in my-room' }).waitFor();
      const response = JSON.parse(await page.getByLabel('Token response').textContent() ?? '') as { app_id: string };
      assert.notEqual(response.app_id, customer.appId, 'the console issues test tokens under its own credential');
      const why = await page.getByTestId('test-token-app-id').textContent() ?? '';
      assert.ok(why.includes(response.app_id), why);
      assert.match(why, /the console's own credential of\s+this project, not one of yours/);
      await checkAxe(page, 'Overview with a test token');

      await nav(page, 'Webhooks');
      await heading(page, 'Webhooks');
      await page.getByRole('region', { name: 'Delivery log of https://203.0.113.10/hooks' }).waitFor();
      await checkAxe(page, 'Webhooks with a delivery log');
    } finally {
      await context.close();
    }
  });

  it('shows each plan\'s free minutes and rates on the pricing cards, and the period\'s cost in one sentence', async () => {
    const { customer } = issuer;
    const plans = (await request(`${server!.api}/v1/public/pricing/plans`, { method: 'GET' })).json<{ plans: PricingPlan[] }>().plans;
    const priced = (await request(`${server!.api}/v1/public/pricing/rates`, { method: 'GET' })).json<{
      usage_kinds: { id: string; name: string }[]; rates: { plan: string; usage_kind: string; currency: string; per_minute: string }[];
    }>();
    assert.ok(plans.length > 0 && priced.rates.length > 0);
    const { context, page } = await newPage();
    try {
      // a fresh project: no minutes yet
      const other = await request(`${server!.api}/v1/projects`, { headers: bearer(customer.accessToken), body: { name: 'no minutes' } });
      assert.equal(other.status, 201, other.text);
      await signIn(page, customer.email, customer.password, `/projects/${other.json<{ id: string }>().id}/usage`);
      await heading(page, 'Sessions and usage');
      const cost = page.getByRole('region', { name: 'Cost of the period' });
      await cost.getByText(/^No participant minutes yet\. Monthly fee/).waitFor();
      assert.doesNotMatch(await cost.textContent() ?? '', /\.\./);

      await page.getByRole('link', { name: 'pricing page' }).click();
      await heading(page, 'Pricing');
      for (const plan of plans) {
        const card = page.getByRole('listitem').filter({ has: page.getByText(plan.name, { exact: true }) });
        await card.getByRole('term').first().waitFor();
        const text = (await card.textContent() ?? '').replace(/\s+/g, ' ');
        for (const kind of priced.usage_kinds) {
          const rate = priced.rates.find((r) => r.plan === plan.id && r.usage_kind === kind.id)!;
          const included = plan.included_minutes[kind.id] ?? 0;
          const expected = `${kind.name}${included > 0 ? `${included.toLocaleString('en')} min free a month, then ` : ''}${rate.per_minute} ${rate.currency} a minute`;
          assert.ok(text.includes(expected), `${plan.name}: "${expected}" not in "${text}"`);
        }
      }
      await checkAxe(page, 'Pricing');
      await page.screenshot({ path: join(SHOTS, '31-pricing-cards.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});
