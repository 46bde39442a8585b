/**
 * The browsers the webrtc-browser bench runs in, behind one shape: headless Chromium over
 * playwright-core and Debian's Firefox over WebDriver BiDi with puppeteer-core (the helpers the
 * tests use, test/helpers/browser.ts and test/helpers/firefox.ts).
 */
import type { Browser as PlaywrightBrowser } from 'playwright-core';
import type { Browser as PuppeteerBrowser } from 'puppeteer-core';
import { launchChromium, type PageSite } from '../../test/helpers/browser.ts';
import { launchFirefox, openFirefoxPage, within } from '../../test/helpers/firefox.ts';

export type EngineName = 'chromium' | 'firefox';

/** A page of its own (a fresh browser context), its script loaded. */
export interface EnginePage {
  /** Runs `fn` in the page with `arg` (structured-cloned both ways). */
  call<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  addScript(content: string): Promise<void>;
  close(): Promise<void>;
}

export interface Engine {
  readonly name: EngineName;
  /**
   * Settings of the platform for this browser: Firefox gathers host candidates on every
   * interface, so the media role offers loopback only, where media flows (as its tests do).
   */
  readonly platformEnv: Readonly<Record<string, string>>;
  open(site: PageSite): Promise<EnginePage>;
  close(): Promise<void>;
}

const PAGE_READY = '(globalThis.rtc !== undefined)';
/** Every call into a Firefox page has a limit: a getStats() in flight when a peer connection closes never settles there. */
const FIREFOX_CALL_MS = 30_000;

async function chromiumEngine(): Promise<Engine> {
  const browser: PlaywrightBrowser = await launchChromium({ fakeMedia: true });
  return {
    name: 'chromium',
    platformEnv: {},
    async open(site) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(site.url);
      await page.waitForFunction(PAGE_READY);
      return {
        call: <A, R>(fn: (arg: A) => R | Promise<R>, arg: A) => page.evaluate(fn as (arg: unknown) => Promise<R>, arg as unknown),
        addScript: async (content) => void (await page.addScriptTag({ content })),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

async function firefoxEngine(): Promise<Engine> {
  const browser: PuppeteerBrowser = await launchFirefox();
  return {
    name: 'firefox',
    platformEnv: {},
    async open(site) {
      const page = await openFirefoxPage(browser, site.url, PAGE_READY);
      return {
        call: <A, R>(fn: (arg: A) => R | Promise<R>, arg: A) =>
          within(page.evaluate(fn as (arg: unknown) => Promise<R>, arg as unknown) as Promise<R>, FIREFOX_CALL_MS, 'page call'),
        addScript: async (content) => void (await page.addScriptTag({ content })),
        close: () => within(page.browserContext().close(), 10_000, 'closing a page').catch(() => undefined),
      };
    },
    close: () => browser.close(),
  };
}

/** Launches one of the browsers. */
export function launchEngine(name: EngineName): Promise<Engine> {
  return name === 'chromium' ? chromiumEngine() : firefoxEngine();
}
