/**
 * What the console's browser tests share (test/e2e/console*.test.ts): the viewports, a page of the
 * console in a fresh browser context, screenshots with axe-core's check, and a token issued with a
 * credential the test made.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { request, type HttpResult } from '../helpers/http.ts';
import { ROOT, type RunningServer } from '../helpers/platform.ts';

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };
/** axe-core, evaluated in the page through the DevTools protocol (the page's CSP refuses injected script tags). */
const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }

/** Rules whose "needs review" results do not fail a page (see checkAxe). */
const REVIEW_EXEMPT = ['color-contrast', 'video-caption'];
/** The impacts a page may not have a violation of (axe-core's rules): every one but minor. */
const FAILING_IMPACTS = new Set(['moderate', 'serious', 'critical']);

/**
 * No accessibility violation of impact moderate, serious or critical on the page as it is now, and
 * none that axe-core leaves for review ("incomplete": it could not decide, such as an `aria-label`
 * on an element whose role may not take one): a page that needs a person to judge it is not done.
 * Two rules are exceptions: axe cannot measure colour contrast for text scrolled out of a table's
 * scroll region (its violations still count), and a call's live camera video has no captions to offer.
 */
export async function checkAxe(page: Page, name: string): Promise<void> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(AXE);
  const run = async (): Promise<string[]> => {
    const violations = await page.evaluate<AxeViolation[]>(
      "axe.run(document, { resultTypes: ['violations', 'incomplete'] }).then((r) => [...r.violations, "
      + `...r.incomplete.filter((v) => !${JSON.stringify(REVIEW_EXEMPT)}.includes(v.id)).map(`
      + "(v) => ({ ...v, id: 'needs review: ' + v.id }))].map((v) => ({ id: v.id, impact: v.impact, help: v.help, "
      + "nodes: v.nodes.map((n) => ({ target: n.target })) })))");
    return violations.filter((v) => v.impact !== null && FAILING_IMPACTS.has(v.impact))
      .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  };
  let bad = await run();
  // a page that re-renders while axe runs (a log refreshed on a timer) can leave a rule undecided
  // for that run only: what is left for review must be so in a second run too; a violation fails at once
  if (bad.length > 0 && bad.every((v) => v.includes(' needs review: '))) {
    const again = new Set(await run());
    bad = bad.filter((v) => again.has(v));
  }
  assert.deepEqual(bad, [], `${name}: accessibility violations`);
}

/** Where the screenshots go, for a person to look at (not committed). */
const SHOTS = join(ROOT, '.tmp', 'console-screenshots');

/** A console page in a context of its own, at desktop width, that fails the test on any browser dialog. */
export async function openConsolePage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'], viewport: DESKTOP });
  const page = await context.newPage();
  // the console asks nothing through window.confirm any more
  page.on('dialog', (dialog) => void dialog.dismiss().then(() => assert.fail(`a browser dialog: ${dialog.message()}`)));
  return { context, page };
}

/**
 * A screenshot at both widths, and axe-core's check at both; at the phone's, the page must not be
 * wider than the screen.
 */
export async function shots(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage: true });
  await checkAxe(page, `${name} at ${DESKTOP.width} px`);
  await page.setViewportSize(PHONE);
  try {
    const width = await page.evaluate<number>('document.documentElement.scrollWidth');
    assert.ok(width <= PHONE.width, `${name}: ${width} px wide at ${PHONE.width} px`);
    await checkAxe(page, `${name} at ${PHONE.width} px`);
    await page.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage: true });
  } finally {
    await page.setViewportSize(DESKTOP);
  }
}

/** A token request to the token host with the credential `id` and `key`. */
export function issueWithCredential(server: RunningServer, id: string, key: string): Promise<HttpResult> {
  return request(`${server.urls['token']}/v1/rtc/tokens`, {
    headers: { authorization: `Basic ${Buffer.from(`${id}:${key}`).toString('base64')}` },
    body: { room_id: 'console-check', user_id: 'u', role: 'speaker', publish_streams: [1] },
  });
}

/** Waits for the page's title; when it does not come, the error says what the page shows instead. */
export async function waitForHeading(page: Page, name: string): Promise<void> {
  try {
    await page.getByRole('heading', { name, level: 1 }).waitFor();
  } catch (err) {
    const shown = await page.locator('body').innerText({ timeout: 1000 }).catch(() => '(unreadable)');
    throw new Error(`no heading "${name}" at ${page.url()}; the page shows: ${shown.slice(0, 600)}`, { cause: err });
  }
}

/** Opens `url` (the console's sign-in page, or a page behind it) and signs in. */
export async function signInAt(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
