/**
 * The console as served (its page, assets and headers), its grant inspector, and its sign-in
 * session, in headless Chromium against a real `rtc serve` (docs/console.md), for an account made
 * through the API. The walk through every page, as a new developer does it, is in console.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { createCustomer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import type { RunningServer } from '../helpers/platform.ts';
import { DESKTOP, issueWithCredential, openConsolePage, PHONE, shots, signInAt, waitForHeading } from './console-helpers.ts';
import { startMediaServer } from './media-server.ts';

describe('console page, grant inspector and session (Chromium)', () => {
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let appId = '';
  let secret = '';
  let email = '';
  let password = '';
  let projectUrl = '';

  before(async () => {
    server = await startMediaServer();
    browser = await launchChromium({ fakeMedia: true });
    const customer = await createCustomer(server);
    ({ appId, appSecret: secret, email, password } = customer);
    projectUrl = `${server.api}/#/projects/${customer.projectId}`;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const newPage = (): Promise<{ context: BrowserContext; page: Page }> => openConsolePage(browser!);
  const tokenWith = (id: string, key: string) => issueWithCredential(server!, id, key);
  const heading = (page: Page, name: string): Promise<void> => waitForHeading(page, name);
  const signIn = (page: Page, path = '/'): Promise<void> => signInAt(page, `${server!.api}${path}`, email, password);

  it('serves the page, its assets and an icon with the promised headers', async () => {
    const page = await request(`${server!.api}/`, { method: 'GET' });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    for (const rule of ["script-src 'self'", "frame-ancestors 'none'", 'worker-src blob:']) assert.ok(csp.includes(rule), csp);
    assert.match(page.text, /<link rel="icon" type="image\/svg\+xml" href="\/favicon.svg">/);
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    assert.ok(script, page.text);
    const asset = await request(`${server!.api}${script}`, { method: 'GET' });
    assert.equal(asset.status, 200);
    assert.match(String(asset.headers['cache-control']), /immutable/);
    // docs/console.md promises these on /assets/* too
    assert.equal(asset.headers['referrer-policy'], 'no-referrer');
    assert.equal(asset.headers['x-content-type-options'], 'nosniff');
    assert.ok(String(asset.headers['content-security-policy']).includes("default-src 'self'"));
    // what browsers ask for by themselves is there, not a 404
    for (const icon of ['/favicon.ico', '/favicon.svg']) {
      const res = await request(`${server!.api}${icon}`, { method: 'GET' });
      assert.equal(res.status, 200, icon);
      assert.equal(res.headers['content-type'], 'image/svg+xml');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
    }
    assert.equal((await request(`${server!.urls['token']}/`, { method: 'GET' })).status, 404, 'the token host serves no console');
  });

  it('inspects a grant only once the keys are there, says when they cannot be fetched, and explains garbage', async () => {
    const token = (await tokenWith(appId, secret)).json<{ media: { grant: string } }>().media.grant;
    const { context, page } = await newPage();
    try {
      // the keys held back until the grant is pasted: the verdict waits for them
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route('**/.well-known/jwks.json', async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(`${server!.api}/#/inspect`);
      await page.getByLabel('Media grant').fill(token);
      await page.getByTestId('verdict').filter({ hasText: 'Checking the signature' }).waitFor();
      assert.doesNotMatch(await page.getByTestId('verdict').textContent() ?? '', /Not valid/);
      release();
      await page.getByTestId('verdict').filter({ hasText: 'Valid signature' }).waitFor();
      // one character changed in the signature: not valid
      const tampered = `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.slice(-1)}`;
      await page.getByLabel('Media grant').fill(tampered);
      await page.getByTestId('verdict').filter({ hasText: 'Not valid' }).waitFor();
      // a grant with long ids fits a phone's screen
      await page.getByLabel('Media grant').fill(token);
      await page.getByTestId('verdict').filter({ hasText: 'Valid signature' }).waitFor();
      await page.setViewportSize(PHONE);
      assert.ok(await page.evaluate<boolean>(`document.documentElement.scrollWidth <= ${PHONE.width}`), 'the claims wrap');
      await page.setViewportSize(DESKTOP);
      for (const garbage of ['hello there', '{"room":"r"}', 'aaa.bbb.ccc', 'eyJhbGciOiJFZERTQSJ9.e30x.sig']) {
        await page.getByLabel('Media grant').fill(garbage);
        const alert = page.getByRole('alert');
        await alert.filter({ hasText: 'This is not a media grant' }).waitFor();
        assert.doesNotMatch(await alert.textContent() ?? '', /JSON|Unexpected token/);
      }
      await shots(page, '22-inspector-garbage');
      await page.unroute('**/.well-known/jwks.json');

      // the keys cannot be fetched: could not check, not "not valid"
      await page.route('**/.well-known/jwks.json', (route) => route.abort());
      await page.reload();
      await page.getByLabel('Media grant').fill(token);
      await page.getByTestId('verdict').filter({ hasText: 'Could not check the signature' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('brings a tab whose session ended back to its page after signing in again', async () => {
    const { context, page } = await newPage();
    try {
      await signIn(page);
      await heading(page, 'Projects');
      const webhooks = `${projectUrl}/webhooks`;
      await page.goto(webhooks);
      await heading(page, 'Webhooks');
      // signed out everywhere, from elsewhere
      const login = await request(`${server!.api}/v1/auth/login`, { body: { email, password } });
      const everywhere = await request(`${server!.api}/v1/auth/logout-all`, {
        method: 'POST', headers: { authorization: `Bearer ${login.json<{ access_token: string }>().access_token}` },
      });
      assert.equal(everywhere.status, 204);
      await page.reload();
      await heading(page, 'Sign in');
      await page.getByText('Your session ended').waitFor();
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await heading(page, 'Webhooks');
      assert.equal(page.url(), webhooks);
    } finally {
      await context.close();
    }
  });

  it('refuses the console\'s session token on the token API', async () => {
    const login = await request(`${server!.api}/v1/auth/login`, { body: { email, password } });
    assert.equal(login.status, 200);
    const access = login.json<{ access_token: string }>().access_token;
    const refused = await request(`${server!.urls['token']}/v1/rtc/tokens`, {
      headers: { authorization: `Bearer ${access}` }, body: { room_id: 'r', user_id: 'u', role: 'speaker' },
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.json<{ error: string }>().error, 'invalid_credentials');
  });
});
