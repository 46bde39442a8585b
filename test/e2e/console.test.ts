/**
 * The console web page (docs/console.md) in headless Chromium, against a real `rtc serve`: what a
 * developer does in it, checked through the public API it drives. Screenshots of every page go to
 * .tmp/console-screenshots for review.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { request } from '../helpers/http.ts';
import { ROOT, type RunningServer } from '../helpers/platform.ts';
import { startMediaServer } from './media-helpers.ts';

const SHOTS = join(ROOT, '.tmp', 'console-screenshots');
const PASSWORD = 'a long console password';

describe('console web page (Chromium)', () => {
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const email = `console-${Date.now()}@example.test`;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await startMediaServer();
    browser = await launchChromium({ fakeMedia: true });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const newPage = async (): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser!.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    return { context, page };
  };
  const signInAs = async (page: Page, kind: 'register' | 'login'): Promise<void> => {
    await page.goto(`${server!.api}/`);
    if (kind === 'register') await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: kind === 'register' ? 'Create account' : 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
  };
  const tokenWith = (appId: string, secret: string, body: Record<string, unknown> = {}) => request(`${server!.urls['token']}/v1/rtc/tokens`, {
    headers: { authorization: `Basic ${Buffer.from(`${appId}:${secret}`).toString('base64')}` },
    body: { room_id: 'console-check', user_id: 'u', role: 'speaker', publish_streams: [1], ...body },
  });
  let projectUrl = '';
  let appId = '';
  let secret = '';

  it('signs up, creates a project and a credential, rotates it and archives the project', async () => {
    const { context, page } = await newPage();
    try {
      await page.goto(`${server!.api}/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await shot(page, '01-sign-in');
      // a wrong password is answered in the API's words
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'invalid_credentials' }).waitFor();

      await signInAs(page, 'register');
      await page.getByLabel('New project name').fill('Demo app');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: 'Demo app' }).waitFor();
      projectUrl = page.url();

      await page.getByText('New credential').click();
      await page.getByLabel('Name', { exact: true }).fill('backend');
      await page.getByRole('button', { name: 'Create credential' }).click();
      const notice = page.getByRole('alertdialog');
      await notice.waitFor();
      assert.match(await notice.textContent() ?? '', /shown only this once/);
      appId = (await page.getByTestId('app-id').textContent())!;
      secret = (await page.getByTestId('app-secret').textContent())!;
      await page.getByRole('button', { name: 'Copy App Secret' }).click();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);
      await shot(page, '02-project-with-new-secret');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      assert.equal((await tokenWith(appId, secret)).status, 200);

      // edit: a lifetime limit of 600 s is enforced by the token API
      await page.getByRole('button', { name: 'Edit backend' }).click();
      const edit = page.getByRole('region', { name: 'Edit credential' });
      await edit.getByLabel('Token lifetime limit (seconds)').fill('600');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('heading', { name: 'Edit credential' }).waitFor({ state: 'detached' });
      assert.equal((await tokenWith(appId, secret, { ttl_seconds: 900 })).status, 400);

      // rotate: the old secret stops working at once, the new one works
      await page.getByRole('button', { name: 'Rotate backend' }).click();
      await page.getByRole('alertdialog').waitFor();
      const rotated = (await page.getByTestId('app-secret').textContent())!;
      assert.notEqual(rotated, secret);
      assert.equal((await tokenWith(appId, secret)).status, 401);
      assert.equal((await tokenWith(appId, rotated)).status, 200);
      secret = rotated;
      await page.getByRole('button', { name: 'I have stored it' }).click();

      // archive, then unarchive
      await page.getByRole('button', { name: 'Archive project', exact: true }).click();
      await page.getByRole('button', { name: 'Unarchive project', exact: true }).waitFor();
      const archived = await tokenWith(appId, secret);
      assert.equal(archived.status, 403);
      assert.equal(archived.json<{ error: string }>().error, 'project_archived');
      await shot(page, '03-project-archived');
      await page.getByRole('button', { name: 'Unarchive project', exact: true }).click();
      await page.getByRole('button', { name: 'Archive project', exact: true }).waitFor();
      assert.equal((await tokenWith(appId, secret)).status, 200);

      // the projects list, on a phone-sized screen too
      await page.goto(`${server!.api}/#/projects`);
      await page.getByRole('link', { name: 'Demo app' }).waitFor();
      await shot(page, '04-projects');
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(projectUrl);
      await page.getByRole('heading', { name: 'Credentials' }).waitFor();
      assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'), 'no sideways scrolling on a phone');
      await shot(page, '05-project-phone');
      // nothing is kept in the browser's storage while the page is open (the refresh token only while it is hidden away)
      const stored = await page.evaluate<string[]>('[...Object.keys(localStorage), ...Object.keys(sessionStorage)]');
      assert.deepEqual(stored, []);
      // and a reload keeps the tab signed in
      await page.reload();
      await page.getByRole('heading', { name: 'Credentials' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('serves the page at / with a strict content security policy, and its assets for good', async () => {
    const page = await request(`${server!.api}/`, { method: 'GET' });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    for (const rule of ["script-src 'self'", "frame-ancestors 'none'", 'worker-src blob:']) assert.ok(csp.includes(rule), csp);
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    assert.ok(script, page.text);
    const asset = await request(`${server!.api}${script}`, { method: 'GET' });
    assert.equal(asset.status, 200);
    assert.match(String(asset.headers['cache-control']), /immutable/);
    // the token host serves no console
    assert.equal((await request(`${server!.urls['token']}/`, { method: 'GET' })).status, 404);
  });

  it('refuses the console\'s session token on the token API', async () => {
    const login = await request(`${server!.api}/v1/auth/login`, { body: { email, password: PASSWORD } });
    assert.equal(login.status, 200);
    const access = login.json<{ access_token: string }>().access_token;
    const refused = await request(`${server!.urls['token']}/v1/rtc/tokens`, {
      headers: { authorization: `Bearer ${access}` }, body: { room_id: 'r', user_id: 'u', role: 'speaker' },
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.json<{ error: string }>().error, 'invalid_credentials');
  });

  it('prices a month of usage and inspects a grant against the JWKS', async () => {
    const { context, page } = await newPage();
    try {
      await signInAs(page, 'login');
      await page.getByRole('link', { name: 'Pricing' }).click();
      await page.getByRole('heading', { name: 'Quote calculator' }).waitFor();
      await page.getByLabel(/minutes a month/).first().fill('20000');
      await page.getByRole('button', { name: 'Get a quote' }).click();
      await page.getByTestId('quote-total').waitFor();
      assert.match(await page.getByTestId('quote-total').textContent() ?? '', /^\d+(\.\d+)? [A-Z]{3}$/);
      await shot(page, '06-pricing');

      const token = (await tokenWith(appId, secret)).json<{ media: { grant: string } }>();
      await page.getByRole('link', { name: 'Grant inspector' }).click();
      await page.getByLabel('Media grant').fill(token.media.grant);
      await page.getByTestId('verdict').filter({ hasText: 'Valid signature' }).waitFor();
      assert.match(await page.locator('dl').textContent() ?? '', /console-check/);
      await shot(page, '07-grant-inspector');
      // one character changed in the signature: not valid
      const grant = token.media.grant;
      const tampered = `${grant.slice(0, -2)}${grant.at(-2) === 'A' ? 'B' : 'A'}${grant.slice(-1)}`;
      await page.getByLabel('Media grant').fill(tampered);
      await page.getByTestId('verdict').filter({ hasText: 'Not valid' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('joins two pages to the test room, each shows the other\'s video, and one removes the other within a second', async () => {
    const [a, b] = [await newPage(), await newPage()];
    try {
      const join = async (page: Page, user: string): Promise<void> => {
        await signInAs(page, 'login');
        await page.goto(projectUrl);
        await page.getByLabel('Your user id').fill(user);
        await page.getByRole('button', { name: 'Join test room' }).click();
        await page.getByRole('status').filter({ hasText: `In test-room as ${user}.` }).waitFor();
      };
      await join(a.page, 'alice');
      await join(b.page, 'bob');
      // frames really decoded in each page's <video> of the other (polled: the page's CSP forbids eval)
      const decodes = async (page: Page, user: string): Promise<void> => {
        const frames = `document.querySelector('video[data-user="${user}"]')?.getVideoPlaybackQuality().totalVideoFrames ?? 0`;
        const deadline = Date.now() + 30_000;
        while ((await page.evaluate<number>(frames)) <= 10) {
          if (Date.now() > deadline) assert.fail(`no frames of ${user}`);
          await page.waitForTimeout(100);
        }
      };
      await decodes(a.page, 'bob');
      await decodes(b.page, 'alice');
      // and the page's own camera preview plays
      await decodes(a.page, 'alice (you)');
      await a.page.getByTestId('live-summary').filter({ hasText: '1 room, 2 participants' }).waitFor({ timeout: 15_000 });
      // the tokens of today: those of the first test, and the test room's temporary tokens
      const today = new Date().toISOString().slice(0, 10);
      const issuedToday = Number(await a.page.getByTestId(`tokens-${today}`).textContent());
      assert.ok(issuedToday >= 5, `${issuedToday} tokens today`);
      await shot(a.page, '08-test-room');

      await a.page.getByRole('button', { name: 'Remove bob' }).click();
      await b.page.getByRole('status').filter({ hasText: 'You were removed from the room.' }).waitFor();
      // from the API's answer to the removed page's revocation, as the room service API is held to
      // (both pages share this machine's clock; the revocation may even arrive first)
      await a.page.locator('body[data-remove-answered-at]').waitFor({ state: 'attached' });
      const answeredAt = Number(await a.page.evaluate<string | undefined>('document.body.dataset.removeAnsweredAt'));
      const removedAt = Number(await b.page.evaluate<string | undefined>('document.body.dataset.removedAt'));
      assert.ok(removedAt - answeredAt < 1000, `removed ${removedAt - answeredAt} ms after the answer`);
      await a.page.locator('video[data-user="bob"]').waitFor({ state: 'detached' });
    } finally {
      await a.context.close();
      await b.context.close();
    }
  });
});
