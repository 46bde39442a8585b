/** Headless Chromium (Debian's, never a download) and a loopback web server for pages that run the app SDK. */
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const SDK_ENTRY = fileURLToPath(new URL('../../sdk/app/src/index.ts', import.meta.url));

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

/** Serves fixed files on loopback: path to [content type, body]. */
export async function servePages(files: Readonly<Record<string, readonly [string, string]>>): Promise<PageSite> {
  const site: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const file = files[path];
    if (file) res.writeHead(200, { 'content-type': file[0] }).end(file[1]);
    else res.writeHead(404).end();
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

/**
 * Headless Chromium. With `fakeMedia`, pages get a fake camera (a moving test pattern) and
 * microphone (a beep) without a permission prompt, and play audio without a user gesture.
 */
export function launchChromium(options: { readonly fakeMedia?: boolean } = {}): Promise<Browser> {
  const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'];
  if (options.fakeMedia) {
    args.push('--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', '--autoplay-policy=no-user-gesture-required');
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args });
}
