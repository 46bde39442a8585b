/**
 * Headless Firefox (Debian's firefox-esr, never a download) driven over WebDriver BiDi with
 * puppeteer-core, for pages that run the app SDK (served as browser.ts serves them for Chromium).
 */
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const FIREFOX = '/usr/bin/firefox-esr';

/**
 * Fake camera (a green picture) and microphone without a prompt, audio played without a gesture,
 * host candidates as addresses (not mDNS names), and nothing that leaves the machine by itself:
 * names resolve to localhost only, no DNS over HTTPS, captive portal or connectivity checks,
 * telemetry, updates, GMP (OpenH264, Widevine) downloads or safe-browsing lists.
 */
const PREFS: Readonly<Record<string, unknown>> = {
  'media.navigator.streams.fake': true,
  'media.navigator.permission.disabled': true,
  'media.autoplay.default': 0,
  'media.peerconnection.ice.obfuscate_host_addresses': false,
  'media.peerconnection.ice.loopback': true,
  'network.dns.native-is-localhost': true,
  'network.trr.mode': 5,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'toolkit.telemetry.enabled': false,
  'datareporting.healthreport.uploadEnabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'app.update.enabled': false,
  'app.update.auto': false,
  'media.gmp-manager.updateEnabled': false,
  'media.gmp-gmpopenh264.enabled': false,
  'media.gmp-gmpopenh264.autoupdate': false,
  'media.gmp-widevinecdm.enabled': false,
  'media.gmp-widevinecdm.autoupdate': false,
  'browser.safebrowsing.update.enabled': false,
  'browser.safebrowsing.malware.enabled': false,
  'browser.safebrowsing.phishing.enabled': false,
  'browser.safebrowsing.downloads.enabled': false,
};

/** Headless Firefox, Debian's, with a fresh profile. */
export function launchFirefox(): Promise<Browser> {
  return puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true, extraPrefsFirefox: { ...PREFS } });
}

/** A page of its own (a fresh browser context: its own camera grant, cookies, storage) at `url`, once `ready` holds there. */
export async function openFirefoxPage(browser: Browser, url: string, ready: string): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(ready, { timeout: 30_000 });
  return page;
}

/**
 * Settles within `ms` or fails saying what did not: a Firefox `getStats()` in flight when a peer
 * connection closes never settles, and with it the `evaluate` that awaits it.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}
