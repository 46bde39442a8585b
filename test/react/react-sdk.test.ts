/**
 * @rtc/react in headless Chromium, over a fake session (test/react/fixture-page.tsx), rendered by
 * React and by Preact's compat layer: participants follow join and leave events, a tile attaches
 * its track and detaches it when unmounted, its size bounds the video, the mute and leave buttons
 * act on the SDK's objects, and the hooks follow the session's events.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, servePages, type PageSite } from '../helpers/browser.ts';

const ENTRY = fileURLToPath(new URL('./fixture-page.tsx', import.meta.url));

/** The two runtimes the package must work with: React itself, and Preact through its compat layer. */
const RUNTIMES = {
  react: {},
  'preact/compat': { react: 'preact/compat', 'react-dom': 'preact/compat' },
} as const;

const HTML = `<!doctype html><html><head><meta charset="utf-8"><title>rtc react</title>
<style>.tile { width: 400px; margin: 0; } .tile video { width: 100%; aspect-ratio: 4 / 3; display: block; }</style></head>
<body><div id="root"></div><script type="module" src="./page.js"></script></body></html>`;

async function bundle(runtime: string, alias: Readonly<Record<string, string>>): Promise<string> {
  const result = await build({
    entryPoints: [ENTRY], bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent',
    jsx: 'automatic', alias: { ...alias }, define: { 'process.env.NODE_ENV': '"development"' }, metafile: true,
  });
  // the page runs on the runtime named, and on that one only
  const inputs = Object.keys(result.metafile.inputs);
  const from = (pkg: string): boolean => inputs.some((i) => i.startsWith(`node_modules/${pkg}/`));
  assert.deepEqual({ react: from('react'), reactDom: from('react-dom'), preact: from('preact') },
    runtime === 'react' ? { react: true, reactDom: true, preact: false } : { react: false, reactDom: false, preact: true });
  return result.outputFiles[0]!.text;
}

/** What the page exposes (test/react/fixture-page.tsx). */
interface PageApi {
  render(): void;
  unmount(): void;
  join(participantId: string, userId: string): void;
  leave(participantId: string): void;
  subscribe(participantId: string, streamId: number, kind: 'audio' | 'video'): void;
  unsubscribe(streamId: number): void;
  log(streamId: number): string[];
  quality(quality: string): void;
  report(streamId: number, paused: boolean, width: number, height: number): void;
  resize(userId: string, width: string): void;
  mic(): boolean;
  closes(): number;
  listeners(): number;
}

/** Runs `call` on the page's API (the test's TypeScript has no DOM types). */
function on<T>(page: Page, call: (api: PageApi, arg: never) => T, arg?: unknown): Promise<T> {
  return page.evaluate(({ source, value }) => {
    const api = (globalThis as unknown as { rtcReact: PageApi }).rtcReact;
    return (new Function('api', 'arg', `return (${source})(api, arg);`) as (a: PageApi, v: unknown) => T)(api, value);
  }, { source: call.toString(), value: arg }) as Promise<T>;
}

for (const [runtime, alias] of Object.entries(RUNTIMES)) {
  describe(`@rtc/react rendered by ${runtime}`, () => {
    let browser: Browser;
    let site: PageSite;
    let page: Page;
    const log = (streamId: number): Promise<string[]> => on(page, (api, id: number) => api.log(id), streamId);
    const waitLog = (streamId: number, entry: string): Promise<unknown> =>
      page.waitForFunction(({ id, want }) => (globalThis as unknown as { rtcReact: PageApi }).rtcReact.log(id).includes(want), { id: streamId, want: entry });

    before(async () => {
      site = await servePages({
        '/': ['text/html; charset=utf-8', HTML],
        '/page.js': ['text/javascript; charset=utf-8', await bundle(runtime, alias)],
      });
      browser = await launchChromium();
      page = await browser.newPage({ deviceScaleFactor: 2 });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(site.url);
      await page.waitForFunction(() => (globalThis as unknown as { rtcReact?: unknown }).rtcReact !== undefined);
      await on(page, (api) => api.render());
      await page.locator('#state').filter({ hasText: 'connected' }).waitFor();
      assert.deepEqual(errors, []);
    });

    after(async () => {
      await browser?.close();
      await site?.close();
    });

    it('shows a tile per participant from the join event to the leave event', async () => {
      await on(page, (api) => api.join('p-alice', 'alice'));
      await on(page, (api) => api.join('p-bob', 'bob'));
      await page.locator('.tile[data-user="alice"]').waitFor();
      await page.locator('.tile[data-user="bob"]').getByRole('button', { name: 'Remove bob' }).waitFor();
      assert.deepEqual(await page.locator('.tile figcaption').allTextContents(), ['alice', 'bob']);
      await on(page, (api) => api.leave('p-alice'));
      await page.locator('.tile[data-user="alice"]').waitFor({ state: 'detached' });
      assert.deepEqual(await page.locator('.tile figcaption').allTextContents(), ['bob']);
    });

    it('attaches a video to its tile, bounds it by the tile\'s size in device pixels, follows a resize, and detaches it when it ends', async () => {
      await on(page, (api) => api.subscribe('p-bob', 12, 'video'));
      await page.locator('.tile[data-user="bob"] video[data-attached="12"]').waitFor({ state: 'attached' });
      // 400 CSS pixels wide, 4:3, at a device pixel ratio of 2
      await waitLog(12, 'bounds 800x600');
      await on(page, (api) => api.resize('bob', '160px'));
      await waitLog(12, 'bounds 320x240');
      await on(page, (api) => api.resize('bob', '0px'));
      await waitLog(12, 'bounds 0x0');
      await on(page, (api) => api.resize('bob', '400px'));
      await on(page, (api) => api.unsubscribe(12));
      await waitLog(12, 'detach VIDEO');
      const entries = await log(12);
      assert.equal(entries[0], 'attach VIDEO');
      assert.equal(entries.filter((e) => e.startsWith('attach')).length, 1, entries.join(', '));
      assert.equal(entries.at(-1), 'bounds none', 'an unmounted tile lifts the bounds it set');
      assert.equal(await page.locator('.tile[data-user="bob"] video[data-attached]').count(), 0);
    });

    it('marks a tile whose video the server paused, and the layer it forwards', async () => {
      await on(page, (api) => api.subscribe('p-bob', 13, 'video'));
      const tile = page.locator('.tile[data-user="bob"]');
      await tile.locator('video[data-attached="13"]').waitFor({ state: 'attached' });
      assert.equal(await tile.getAttribute('data-paused'), null);
      await on(page, (api) => api.report(13, true, 320, 180));
      await page.locator('.tile[data-user="bob"][data-paused="true"][data-layer="320x180"]').waitFor({ state: 'attached' });
      await on(page, (api) => api.report(13, false, 640, 360));
      await page.locator('.tile[data-user="bob"]:not([data-paused])[data-layer="640x360"]').waitFor({ state: 'attached' });
      await on(page, (api) => api.unsubscribe(13));
      await page.locator('.tile[data-user="bob"]:not([data-layer])').waitFor({ state: 'attached' });
    });

    it('plays a received audio track in an audio element and detaches it when the track ends', async () => {
      await on(page, (api) => api.subscribe('p-bob', 11, 'audio'));
      await page.locator('audio[data-user="bob"][data-attached="11"]').waitFor({ state: 'attached' });
      assert.equal(await page.locator('.tile[data-user="bob"] video[data-attached]').count(), 0, 'audio is not shown in a tile');
      await on(page, (api) => api.unsubscribe(11));
      await page.locator('audio[data-user="bob"]').waitFor({ state: 'detached' });
      assert.deepEqual(await log(11), ['attach AUDIO', 'detach AUDIO']);
    });

    it('toggles the microphone with the mute button', async () => {
      await page.getByRole('button', { name: 'Mute microphone' }).click();
      await page.getByRole('button', { name: 'Unmute microphone', pressed: true }).waitFor();
      assert.equal(await on(page, (api) => api.mic()), true);
      await page.getByRole('button', { name: 'Unmute microphone' }).click();
      await page.getByRole('button', { name: 'Mute microphone', pressed: false }).waitFor();
      assert.equal(await on(page, (api) => api.mic()), false);
    });

    it('follows the connection quality', async () => {
      assert.equal(await page.locator('#quality').textContent(), 'none');
      await on(page, (api) => api.quality('poor'));
      await page.locator('#quality').filter({ hasText: 'poor' }).waitFor();
    });

    it('detaches every track and stops listening when unmounted', async () => {
      await on(page, (api) => api.subscribe('p-bob', 14, 'video'));
      await waitLog(14, 'attach VIDEO');
      await on(page, (api) => api.unmount());
      await waitLog(14, 'detach VIDEO');
      assert.equal(await on(page, (api) => api.listeners()), 0);
      await on(page, (api) => api.render());
      await page.locator('.tile[data-user="bob"] video[data-attached="14"]').waitFor({ state: 'attached' });
    });

    it('leaves with the leave button: the session closes once and the view says it ended', async () => {
      await page.getByRole('button', { name: 'Leave room' }).click();
      await page.locator('#state').filter({ hasText: 'closed' }).waitFor();
      await page.locator('#ended').filter({ hasText: 'closed' }).waitFor();
      assert.equal(await on(page, (api) => api.closes()), 1);
    });
  });
}
