/** What the console's browser tests share (test/e2e/console*.test.ts): the viewports and axe-core's check. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ROOT } from '../helpers/platform.ts';

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
  const violations = await page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations', 'incomplete'] }).then((r) => [...r.violations, "
    + `...r.incomplete.filter((v) => !${JSON.stringify(REVIEW_EXEMPT)}.includes(v.id)).map(`
    + "(v) => ({ ...v, id: 'needs review: ' + v.id }))].map((v) => ({ id: v.id, impact: v.impact, help: v.help, "
    + "nodes: v.nodes.map((n) => ({ target: n.target })) })))");
  const bad = violations.filter((v) => v.impact !== null && FAILING_IMPACTS.has(v.impact));
  assert.deepEqual(bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`), [],
    `${name}: accessibility violations`);
}
