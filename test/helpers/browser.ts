/** Headless Chromium (Debian's, never a download) and a loopback web server for pages that run the app SDK. */
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const SDK_ENTRY = fileURLToPath(new URL('../../sdk/app/src/index.ts', import.meta.url));

/** Code that imports `@rtc/app-sdk`, as an app would, bundled with the SDK's sources for a browser page (one ES module). */
export async function bundleApp(code: string): Promise<string> {
  const result = await build({
    stdin: { contents: code, loader: 'ts', resolveDir: fileURLToPath(new URL('.', import.meta.url)) }, alias: { '@rtc/app-sdk': SDK_ENTRY },
    bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild wrote no bundle');
  return file.text;
}

/** The app SDK bundled for a browser page (one ES module). */
export async function bundleSdk(): Promise<string> {
  const result = await build({
    entryPoints: [SDK_ENTRY], bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild wrote no bundle');
  return file.text;
}

export interface PageSite {
  /** `http://127.0.0.1:port/`: a secure context, as camera, microphone and WebCrypto need. */
  readonly url: string;
  close(): Promise<void>;
}

/** A page's file, [content type, body], or a function answering one for each request (a backend route). */
export type PageFile = readonly [string, string] | (() => Promise<readonly [string, string]>);

/** Serves files on loopback: path to [content type, body], fixed or answered per request. */
export async function servePages(files: Readonly<Record<string, PageFile>>): Promise<PageSite> {
  const site: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const file = files[path];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    const answer = typeof file === 'function' ? file() : Promise.resolve(file);
    answer.then(([type, body]) => res.writeHead(200, { 'content-type': type }).end(body), (err: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
    });
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const address = site.address();
  if (typeof address !== 'object' || address === null) throw new Error('page server not listening');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: async () => {
      site.closeAllConnections();
      await new Promise<void>((resolve) => site.close(() => resolve()));
    },
  };
}

/** How `launchChromium` starts the browser. */
export interface ChromiumOptions {
  /**
   * A fake camera (a moving test pattern) and microphone (a beep) without a permission prompt,
   * and audio played without a user gesture.
   */
  readonly fakeMedia?: boolean;
  /** Frame rate of the fake camera (Chromium's own default is 20, whatever getUserMedia asks). */
  readonly fakeCameraFps?: number;
  /**
   * Nothing leaves the machine: every host name but localhost resolves to nothing (Chromium
   * looks some up by itself) and WebRTC host candidates carry addresses, not mDNS names.
   */
  readonly loopbackOnly?: boolean;
  /** `false` leaves SIGINT, SIGTERM and SIGHUP to the caller, whose cleanup must run first. */
  readonly handleSignals?: boolean;
}

const MERGED_FEATURES_CHROMIUM = fileURLToPath(new URL('./chromium-merged-features.sh', import.meta.url));

/** Headless Chromium, Debian's. */
export function launchChromium(options: ChromiumOptions = {}): Promise<Browser> {
  const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'];
  if (options.fakeMedia) {
    const device = options.fakeCameraFps === undefined ? '' : `=fps=${options.fakeCameraFps}`;
    args.push(`--use-fake-device-for-media-stream${device}`, '--use-fake-ui-for-media-stream', '--autoplay-policy=no-user-gesture-required');
  }
  if (options.loopbackOnly) {
    args.push('--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost, EXCLUDE 127.0.0.1', '--disable-features=WebRtcHideLocalIpsWithMdns');
  }
  const handle = options.handleSignals ?? true;
  return chromium.launch({
    // playwright passes a --disable-features list of its own: the wrapper merges ours into it
    executablePath: options.loopbackOnly ? MERGED_FEATURES_CHROMIUM : CHROMIUM,
    headless: true, args, handleSIGINT: handle, handleSIGTERM: handle, handleSIGHUP: handle,
  });
}

/** Joins on the console's share-link page (docs/console.md, "Share links") and returns the guest's user id, the platform's choice (guest_…). */
export async function joinAsGuest(page: Page, room: string): Promise<string> {
  await page.getByRole('button', { name: 'Join', exact: true }).click();
  const status = page.getByRole('status').filter({ hasText: new RegExp(`^In ${room} as guest_[A-Za-z0-9_-]{22}\\.$`) });
  await status.waitFor();
  return /as (guest_[A-Za-z0-9_-]{22})\./.exec(await status.textContent() ?? '')![1]!;
}
